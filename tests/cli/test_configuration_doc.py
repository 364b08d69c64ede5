"""docs/configuration.md is generated from the one table of settings; this keeps it from drifting."""

from pathlib import Path

from trafka.broker.config import SETTINGS
from trafka.configdoc import render
from trafka.settings import ALL, TOPIC_CONFIGS

DOC = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def test_every_topic_config_is_described():
    assert TOPIC_CONFIGS and all(TOPIC_CONFIGS[name].doc for name in TOPIC_CONFIGS)
    assert all(setting.doc for setting in ALL)


def test_the_page_matches_the_code():
    assert DOC.read_text() == render(), "run: python -m trafka.configdoc > docs/configuration.md"
    for name in SETTINGS:
        assert f"| `{name}` |" in DOC.read_text()
    for name in TOPIC_CONFIGS:
        assert f"| `{name}` |" in DOC.read_text()
