"""docs/configuration.md is generated from the code; this keeps it from drifting."""

from pathlib import Path

from trafka.broker.config import SETTINGS
from trafka.configdoc import TOPIC_DOCS, render
from trafka.storage.config import TOPIC_CONFIGS

DOC = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def test_every_topic_config_is_described():
    assert set(TOPIC_DOCS) == set(TOPIC_CONFIGS)


def test_the_page_matches_the_code():
    assert DOC.read_text() == render(), "run: python -m trafka.configdoc > docs/configuration.md"
    for name in SETTINGS:
        assert f"| `{name}` |" in DOC.read_text()
