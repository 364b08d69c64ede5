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
    min_version: int  # what ApiVersions advertises
    max_version: int
    handle: Callable[..., Awaitable[dict | None]]


ROUTES: dict[int, Route] = {}


def handles(api_key: int, *, min_version: int | None = None, max_version: int | None = None):
    """Register the decorated coroutine as the handler of `api_key`.

    The advertised range defaults to every version the message declares.
    """
    api = APIS[api_key]

    def register(fn):
        if api_key in ROUTES:
            raise RuntimeError(f"{api.name} (key {api_key}) has two handlers")
        declared = api.request.version_range
        ROUTES[api_key] = Route(
            api,
            declared.lo if min_version is None else min_version,
            declared.hi if max_version is None else max_version,
            fn,
        )
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
