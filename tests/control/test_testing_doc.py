"""docs/testing.md shows the test-control examples verbatim; tests/control/examples runs them."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "tests" / "control" / "examples" / "test_control_examples.py"
DOC = ROOT / "docs" / "testing.md"


def sections() -> dict[str, str]:
    """The example file cut at its `# %% name` lines."""
    parts = re.split(r"^# %% (\S+)\n", EXAMPLES.read_text(), flags=re.M)
    return {name: body.strip("\n") + "\n" for name, body in zip(parts[1::2], parts[2::2])}


def test_every_example_section_is_in_the_doc_verbatim():
    found = sections()
    assert {"imports", "retention", "session-timeout", "transaction-timeout", "retries", "non-retriable",
            "delay", "outage", "snapshot"} <= set(found)
    doc = DOC.read_text()
    for name, body in found.items():
        assert f"```python\n{body}```" in doc, f"docs/testing.md must show the {name!r} example as in {EXAMPLES.name}"
