"""The Python examples of docs/nemesis.md, run as they are written there: each defines one test
function taking the `trafka_cluster` fixture."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "nemesis.md"
EXAMPLES = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)


def test_the_page_has_its_examples():
    assert len(EXAMPLES) == 2


@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_an_example_of_docs_nemesis_md(index, trafka_cluster):
    namespace: dict = {}
    exec(compile(EXAMPLES[index], f"{PAGE} (example {index + 1})", "exec"), namespace)
    [example] = [fn for name, fn in namespace.items() if name.startswith("test_") and callable(fn)]
    example(trafka_cluster)
