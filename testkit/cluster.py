"""What the simulated-cluster tests (tests/cluster/) share: reading a topic back, waiting."""

from __future__ import annotations

import time


def read_from_start(bootstrap: str, topic: str, partitions: int, want: int, *, timeout: float = 20,
                    settle: float = 0.0, **config) -> list[bytes]:
    """The values of `topic`'s partitions read by assignment from offset 0 (confluent-kafka),
    until `want` arrived or `timeout` passed; then `settle` seconds more, so a caller can see
    records beyond `want` (there should be none)."""
    from confluent_kafka import Consumer, TopicPartition

    reader = Consumer({"bootstrap.servers": bootstrap, "group.id": "reader", "enable.auto.commit": False, **config})
    reader.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    values: list[bytes] = []
    try:
        deadline = time.monotonic() + timeout
        while len(values) < want and time.monotonic() < deadline:
            message = reader.poll(0.3)
            if message is not None and message.error() is None:
                values.append(message.value())
        deadline = time.monotonic() + settle
        while time.monotonic() < deadline:
            message = reader.poll(0.2)
            if message is not None and message.error() is None:
                values.append(message.value())
    finally:
        reader.close()
    return values


def wait_for(condition, *, timeout: float = 20, what: str = "the condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
