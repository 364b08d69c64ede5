"""docs/compatibility.md's matrix says what the compat tests prove, no more and no less."""

from __future__ import annotations

import pytest

from compat_tests import matrix


@pytest.fixture(scope="module")
def described():
    return matrix.collect()


def test_doc_matrix_matches_the_tests(described):
    assert matrix.doc_tables(matrix.DOC.read_text()) == matrix.render(described), (
        "docs/compatibility.md's matrix differs from the compat tests; "
        "run `python -m compat_tests.matrix --write` and review the diff"
    )


def test_every_client_is_covered_for_the_basics(described):
    covered = {tuple(cell) for info in described.values() for cell in info["cells"]}
    for client in matrix.CLIENTS:
        for capability in ("produce", "consume", "compression", "headers", "timestamps", "group", "idempotent"):
            assert ("clients", client, capability) in covered, (client, capability)
        for reader in matrix.CLIENTS:
            assert ("cross", client, reader) in covered, (client, reader)
