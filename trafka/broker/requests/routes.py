"""Handlers register themselves here; ApiVersions is built from this table.

A handler is `async def handle(ctx, request) -> dict | None`: the response body, or None
when the request gets no response (Produce with acks=0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Awaitable, Callable

from trafka.wire.api import Api
from trafka.wire.messages import APIS


@dataclass(frozen=True)
class Route:
    api: Api
    min_version: int  # the served range: what ApiVersions advertises and dispatch accepts
    max_version: int
    handle: Callable[..., Awaitable[dict | None]]
    # A request newer than max_version is normally refused by closing the connection; a route
    # may instead answer it with (version, body) from this function (ApiVersions does: clients
    # probe with their newest version and learn ours from the answer).
    answer_too_new: Callable[[], tuple[int, dict]] | None = None

    def serves(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version


ROUTES: dict[int, Route] = {}


def handles(api_key: int, *, min_version: int, max_version: int, answer_too_new=None):
    """Register the decorated coroutine as the handler of `api_key` for the versions
    min_version..max_version: the served range is broker policy, chosen here, and must lie
    inside the versions the message declares."""
    api = APIS[api_key]
    for message in (api.request, api.response):
        declared = message.version_range
        if not (declared.lo <= min_version <= max_version and (declared.hi is None or max_version <= declared.hi)):
            raise ValueError(
                f"{api.name}: served versions {min_version}-{max_version} are outside the declared "
                f"{declared.lo}-{declared.hi} of {message.name}"
            )

    def register(fn):
        if api_key in ROUTES:
            raise RuntimeError(f"{api.name} (key {api_key}) has two handlers")
        ROUTES[api_key] = Route(api, min_version, max_version, fn, answer_too_new)
        return fn

    return register


def load_handlers() -> dict[int, Route]:
    """Import every handler module so each registers itself."""
    import importlib
    import pkgutil

    from trafka.broker import handlers

    for info in pkgutil.iter_modules(handlers.__path__):
        importlib.import_module(f"{handlers.__name__}.{info.name}")
    return ROUTES
