"""Every message trafka speaks, one module per API, collected by key.

Each module defines `API`, an `Api` with its request and response `Message`s declared over
every version trafka serves.
"""

from __future__ import annotations

import importlib
import pkgutil

from trafka.wire.api import Api


def _collect() -> dict[int, Api]:
    apis: dict[int, Api] = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        api = module.API
        if api.key in apis:
            raise RuntimeError(f"API key {api.key} declared twice ({apis[api.key].name}, {api.name})")
        apis[api.key] = api
    return apis


APIS: dict[int, Api] = _collect()
