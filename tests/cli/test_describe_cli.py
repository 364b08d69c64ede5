"""`trafka groups`: states, members, assignments, committed offsets and lag, read from the
data dir (as a subprocess, beside the running broker)."""

from __future__ import annotations

import subprocess
import sys
import threading

from kafka.errors import KafkaError
from kafka.structs import OffsetAndMetadata, TopicPartition

from trafka.testing.waiting import wait_until
from testkit.groups import create_topic, group_consumer, produce

TOPIC = "described"
GROUP = "inspected"
PARTITIONS = 4
PER_PARTITION = 10


def trafka_groups(data_dir) -> dict[str, list[list[str]]]:
    """The three tables, by their first header cell after GROUP, as rows of cells."""
    out = subprocess.run([sys.executable, "-m", "trafka", "groups", "--data-dir", str(data_dir), "--group", GROUP],
                         capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("# States and members as of each group's last persisted group metadata")
    tables = {}
    for block in out.stdout.split("\n\n")[1:]:
        rows = [line.split() for line in block.strip().splitlines()]
        tables[rows[0][1]] = rows[1:]
    return tables


class CommittingConsumer:
    """A kafka-python group member in its own thread; once it owns two partitions it commits
    offset partition+2 on each (part of the data), then keeps polling."""

    def __init__(self, bootstrap: str, client_id: str):
        self.consumer = group_consumer(bootstrap, TOPIC, GROUP, client_id=client_id, max_poll_records=1)
        self.committed: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        try:
            while not self._stop.is_set():
                self.consumer.poll(timeout_ms=200)
                owned = {tp.partition for tp in self.consumer.assignment()}
                if len(owned) == 2 and owned != self.committed:
                    try:
                        self.consumer.commit({TopicPartition(TOPIC, p): OffsetAndMetadata(p + 2, "", -1) for p in owned})
                        self.committed = owned
                    except KafkaError:
                        pass  # a rebalance started; commit after it
        finally:
            self.consumer.close()  # sends LeaveGroup

    def close(self) -> None:
        self._stop.set()
        self._thread.join(30)


def test_groups_shows_members_assignments_offsets_and_lag_then_the_empty_group(broker):
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, TOPIC, PARTITIONS)
    produce(bootstrap, TOPIC, [f"v{i}" for i in range(PARTITIONS * PER_PARTITION)], partitions=PARTITIONS)
    consumers = [CommittingConsumer(bootstrap, "describe-a"), CommittingConsumer(bootstrap, "describe-b")]
    try:
        wait_until(lambda: all(len(c.committed) == 2 for c in consumers), 15, "both consumers committing")
        tables = trafka_groups(broker.data_dir)
    finally:
        for consumer in consumers:
            consumer.close()

    [state] = tables["STATE"]
    assert state[:2] == [GROUP, "Stable"] and state[2:4] == ["consumer", "range"] and state[5] == "2"
    members = {row[1]: row for row in tables["MEMBER-ID"]}
    assert sorted(row[3] for row in members.values()) == ["describe-a", "describe-b"]
    owner = {}
    for member_id, (_, _, instance_id, _, host, subscription, assignment) in members.items():
        assert (instance_id, host, subscription) == ("-", "/127.0.0.1", TOPIC)
        partitions = assignment.split(",")
        assert len(partitions) == 2
        owner.update({int(p.rsplit("-", 1)[1]): member_id for p in partitions})
    assert sorted(owner) == list(range(PARTITIONS))
    expected = [[GROUP, TOPIC, str(p), str(p + 2), str(PER_PARTITION), str(PER_PARTITION - p - 2), owner[p]]
                for p in range(PARTITIONS)]
    assert tables["TOPIC"] == expected

    def empty():
        nonlocal tables
        tables = trafka_groups(broker.data_dir)
        return tables["STATE"][0][1] == "Empty"

    wait_until(empty, 10, "the group persisted as Empty")
    assert tables["STATE"][0][5] == "0" and tables["MEMBER-ID"] == []
    assert tables["TOPIC"] == [row[:-1] + ["-"] for row in expected]
