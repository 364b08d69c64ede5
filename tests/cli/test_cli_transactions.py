"""Inspecting transactions on disk: `trafka dump-log` prints markers and .txnindex entries,
`trafka describe` the last stable offset, `trafka transactions` each transactional id."""

from __future__ import annotations

import re
import subprocess
import sys
import uuid

import pytest

from testkit.txn_clients import producer

pytestmark = pytest.mark.trafka_config({"offsets.topic.num.partitions": 3, "transaction.state.log.num.partitions": 3})


def trafka(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trafka", *map(str, args)], capture_output=True, text=True, timeout=60)


def test_dump_log_describe_and_transactions(request, trafka_broker):
    from confluent_kafka.admin import AdminClient, NewTopic

    bootstrap = trafka_broker.bootstrap_servers
    topic = f"inspect-txn-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, 1, 1)]).values():
        future.result(10)
    p = producer(request, "confluent-kafka", bootstrap, "inspect-app", timeout_ms=45000)
    p.init()
    p.begin(); p.send(topic, b"c"); p.commit()             # offsets 0, marker 1
    p.begin(); p.send(topic, b"a"); p.flush(); p.abort()   # offset 2, marker 3
    p.begin(); p.send(topic, b"open"); p.flush()           # offset 4, still open

    directory = trafka_broker.data_dir / f"{topic}-0"
    dumped = trafka("dump-log", directory / "00000000000000000000.log", directory / "00000000000000000000.txnindex")
    assert dumped.returncode == 0, dumped.stderr
    markers = re.findall(r"^\| offset: (\d+) CreateTime: \d+ endTxnMarker: (\w+) coordinatorEpoch: 0$", dumped.stdout, re.M)
    assert markers == [("1", "COMMIT"), ("3", "ABORT")]
    pid = re.search(r"producerId: (\d+)", dumped.stdout).group(1)
    assert f"version: 0 producerId: {pid} firstOffset: 2 lastOffset: 3 lastStableOffset: 4" in dumped.stdout

    described = trafka("describe", "--data-dir", trafka_broker.data_dir, "--topic", topic)
    assert described.returncode == 0, described.stderr
    assert described.stdout.splitlines()[1].split()[:5] == [topic, "0", "0", "5", "4"]

    # After a clean restart the open transaction comes from the producer-state snapshot.
    trafka_broker.restart()
    assert list((trafka_broker.data_dir / f"{topic}-0").glob("*.snapshot"))
    again = trafka("describe", "--data-dir", trafka_broker.data_dir, "--topic", topic)
    assert again.stdout.splitlines()[1].split()[:5] == [topic, "0", "0", "5", "4"]

    listed = trafka("transactions", "--data-dir", trafka_broker.data_dir, "--transactional-id", "inspect-app")
    assert listed.returncode == 0, listed.stderr
    rows = [line.split() for line in listed.stdout.splitlines()]
    assert rows[0] == ["TRANSACTIONAL-ID", "STATE", "PRODUCER-ID", "EPOCH", "TIMEOUT-MS", "START-TIME-MS", "PARTITIONS"]
    assert rows[1][:5] == ["inspect-app", "Ongoing", pid, "0", "45000"] and rows[1][6] == f"{topic}-0"
    p.commit()
