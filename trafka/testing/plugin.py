"""pytest plugin (entry point `trafka`): fixtures that give a test a real broker.

- `trafka_broker`: a fresh broker for one test.
- `trafka_session_broker`: one broker shared by the whole session.
- `trafka_topic`: a topic name unique to the test, for use with the shared broker.
"""

from __future__ import annotations

import re
import uuid

import pytest

from trafka.testing.broker import TrafkaBroker


@pytest.fixture
def trafka_broker(tmp_path):
    with TrafkaBroker(data_dir=tmp_path / "data") as broker:
        yield broker


@pytest.fixture(scope="session")
def trafka_session_broker(tmp_path_factory):
    with TrafkaBroker(data_dir=tmp_path_factory.mktemp("trafka") / "data") as broker:
        yield broker


@pytest.fixture
def trafka_topic(request) -> str:
    base = re.sub(r"[^a-zA-Z0-9._-]", "-", request.node.name)[:200]
    return f"{base}-{uuid.uuid4().hex[:8]}"
