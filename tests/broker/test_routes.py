"""The served version range is broker policy, given at registration and checked there."""

from __future__ import annotations

import pytest

from trafka.broker.requests import routes
from trafka.wire.messages import APIS


def test_served_range_is_required():
    with pytest.raises(TypeError):
        routes.handles(3)


def test_served_range_must_lie_inside_the_declaration():
    declared = APIS[3].request.version_range
    with pytest.raises(ValueError, match="outside the declared"):
        routes.handles(3, min_version=declared.lo, max_version=declared.hi + 1)
    with pytest.raises(ValueError, match="outside the declared"):
        routes.handles(3, min_version=2, max_version=1)


def test_every_served_version_compiles_both_ways():
    table = routes.load_handlers()
    assert table
    for key, route in table.items():
        assert route.min_version <= route.max_version, route.api.name
        for version in range(route.min_version, route.max_version + 1):
            route.api.request.struct(version)
            route.api.response.struct(version)


def test_only_api_versions_answers_a_version_too_new():
    table = routes.load_handlers()
    assert [key for key, route in table.items() if route.answer_too_new is not None] == [18]
    version, body = table[18].answer_too_new()
    assert version == 0 and body["error_code"] == 35  # UNSUPPORTED_VERSION
    assert {k["api_key"] for k in body["api_keys"]} == set(table)
