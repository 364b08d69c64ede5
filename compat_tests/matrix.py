"""The compatibility matrix of docs/compatibility.md, made from the compat tests themselves.

A test declares which cells it proves with markers:

* ``@pytest.mark.compat("produce", "headers")``: capabilities (keys of CAPABILITIES);
* the client is the module's ``pytestmark = pytest.mark.compat_client("kcat")``, or the test's
  ``client`` parameter (``test_common.py``, ``test_java.py``);
* ``@pytest.mark.compat_cross`` on a test parametrized with ``writer`` and ``reader``: one cell of
  the cross-client table.

A cell is ✅ when at least one test covers it and none of them is a known failure, ❌ when a test
covering it is marked ``xfail(strict=True, reason="F<n>: ...")`` (F<n> is the finding in the
doc), and — when no test covers it. ``test_matrix.py`` fails when the tables in the doc differ
from the ones rendered from the collected tests; the conftest records each run's outcomes to
``.cache/compat-results.json`` and reports any covered cell whose test failed.

    python -m compat_tests.matrix            # print the tables for the collected tests
    python -m compat_tests.matrix --write    # rewrite them in docs/compatibility.md
    python -m compat_tests.matrix --results  # per cell: passed/failed/skipped in the last run
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "compatibility.md"
RESULTS = ROOT / ".cache" / "compat-results.json"
CELLS_ENV = "TRAFKA_COMPAT_CELLS"  # collect-only runs write the cells of each test here

CLIENTS = {
    "kafka-python": "kafka-python 3.0.12",
    "confluent-kafka": "confluent-kafka 2.16.1 (librdkafka 2.16.0)",
    "aiokafka": "aiokafka 0.14.0",
    "kcat": "kcat 1.7.1 (Debian, librdkafka 2.0.2)",
    "java-3.9.1": "Java kafka-clients 3.9.1",
    "java-4.3.0": "Java kafka-clients 4.3.0",
    "kafkajs": "KafkaJS 2.2.4 (Node.js 22.23.3)",
    "platformatic-kafka": "@platformatic/kafka 2.12.1 (Node.js 22.23.3)",
}

CAPABILITIES = {
    "produce": "produce, client defaults",
    "idempotent": "idempotent producer (InitProducerId, sequences)",
    "compression": "produce compressed: gzip, snappy, lz4, zstd",
    "headers": "record headers",
    "consume": "consume: assign, seek, poll",
    "timestamps": "timestamps: CreateTime and LogAppendTime",
    "group": "group: subscribe, commit, resume after restart (basic)",
    "metadata": "metadata / list topics",
    "admin-topics": "admin: create and delete topics",
    "admin-configs": "admin: describe configs",
    "admin-cluster": "admin: describe cluster (DescribeCluster)",
    "admin-log-dirs": "admin: describe log dirs, alter replica log dirs",
    "admin-elect-leaders": "admin: elect leaders (ElectLeaders)",
    "admin-reassignments": "admin: alter / list partition reassignments",
    "admin-describe-topics": "admin: describe topics (DescribeTopicPartitions, cursor)",
    "admin-quorum": "admin: describe metadata quorum (DescribeQuorum)",
    "admin-features": "admin: describe / update features (UpdateFeatures, ApiVersions features)",
    "admin-quotas": "admin: describe / alter client quotas (stored, not enforced)",
    "admin-config-resources": "admin: list config resources (ListConfigResources)",
    "list-offsets": "list offsets: earliest, latest, by timestamp",
    "transactions": "transactions: commit/abort, read_committed, offsets in a transaction, fencing, timeout",
}

BEGIN, END = "<!-- matrix:begin -->", "<!-- matrix:end -->"
_FINDING = re.compile(r"^(F\d+)")


def client_of(item) -> str | None:
    marker = item.get_closest_marker("compat_client")
    if marker is not None:
        return marker.args[0]
    callspec = getattr(item, "callspec", None)
    return callspec.params.get("client") if callspec else None


def cells_of(item) -> list[tuple[str, str, str]]:
    """[(table, row, column)] this test covers: ("clients", client, capability) or ("cross", writer, reader)."""
    callspec = getattr(item, "callspec", None)
    if item.get_closest_marker("compat_cross") is not None:
        return [("cross", callspec.params["writer"], callspec.params["reader"])]
    client = client_of(item)
    caps = [c for m in item.iter_markers("compat") for c in m.args]
    if not caps:
        return []
    unknown = [c for c in caps if c not in CAPABILITIES] + ([client] if client not in CLIENTS else [])
    if unknown:
        raise ValueError(f"{item.nodeid}: unknown matrix names {unknown}")
    return [("clients", client, cap) for cap in caps]


def known_failure(item) -> str | None:
    """The finding id of a strict xfail marker (the cell is ❌), else None."""
    marker = item.get_closest_marker("xfail")
    if marker is None:
        return None
    match = _FINDING.match(marker.kwargs.get("reason", ""))
    if not marker.kwargs.get("strict") or match is None:
        raise ValueError(f"{item.nodeid}: compat xfails are strict and their reason starts with a finding id (F<n>)")
    return match.group(1)


def describe(items) -> dict[str, dict]:
    """{nodeid: {"cells": [...], "finding": F<n> | None}} for every test that covers a cell."""
    out = {}
    for item in items:
        cells = cells_of(item)
        if cells:
            out[item.nodeid] = {"cells": [list(c) for c in cells], "finding": known_failure(item)}
    return out


def collect() -> dict[str, dict]:
    """Collect compat_tests in a subprocess (never runs a test) and return describe() of it."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cells.json"
        env = dict(os.environ, **{CELLS_ENV: str(path)})
        proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                               str(ROOT / "compat_tests")], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=120)
        if not path.exists():
            raise RuntimeError(f"collecting compat_tests failed:\n{proc.stdout}\n{proc.stderr}")
        return json.loads(path.read_text())


def _state(described: dict[str, dict]) -> dict[tuple[str, str, str], str]:
    findings: dict[tuple, set] = defaultdict(set)
    for info in described.values():
        for cell in info["cells"]:
            findings[tuple(cell)]
            if info["finding"]:
                findings[tuple(cell)].add(info["finding"])
    return {cell: ("❌ " + ", ".join(sorted(f))) if f else "✅" for cell, f in findings.items()}


def render(described: dict[str, dict]) -> str:
    state = _state(described)
    clients = list(CLIENTS)
    lines = ["| capability | " + " | ".join(clients) + " |", "|---" * (len(clients) + 1) + "|"]
    for cap, title in CAPABILITIES.items():
        row = [state.get(("clients", client, cap), "—") for client in clients]
        lines.append(f"| {title} | " + " | ".join(row) + " |")
    lines += ["", "Cross-client: written by (row), read by (column); every codec, headers, keys, CreateTime.", "",
              "| written by \\ read by | " + " | ".join(clients) + " |", "|---" * (len(clients) + 1) + "|"]
    for writer in clients:
        row = [state.get(("cross", writer, reader), "—") for reader in clients]
        lines.append(f"| {writer} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def doc_tables(text: str) -> str:
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[start:end].strip()


def write_doc(tables: str) -> None:
    text = DOC.read_text()
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    DOC.write_text(text[:start] + "\n" + tables + "\n" + text[end:])


def results_by_cell(results: dict[str, str], described: dict[str, dict]) -> dict[tuple, dict[str, list[str]]]:
    """{cell: {outcome: [nodeid]}} from a run's {nodeid: outcome}."""
    out: dict[tuple, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for nodeid, outcome in results.items():
        for cell in described.get(nodeid, {}).get("cells", []):
            out[tuple(cell)][outcome].append(nodeid)
    return out


def main(argv: list[str]) -> int:
    described = collect()
    if "--results" in argv:
        results = json.loads(RESULTS.read_text())
        by_cell = results_by_cell(results["outcomes"], described)
        print(f"{RESULTS}: {len(results['outcomes'])} compat tests, {len(by_cell)} matrix cells")
        for cell, outcomes in sorted(by_cell.items()):
            print(f"{cell[0]}: {cell[1]} / {cell[2]}:", ", ".join(f"{k} {len(v)}" for k, v in sorted(outcomes.items())))
        return 0
    tables = render(described)
    if "--write" in argv:
        write_doc(tables)
    else:
        print(tables)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
