"""The group and transaction coordinators in process, over a real LogManager on a manual clock:
what tests/groups/test_coordinator_clock.py and tests/transactions/test_txn_coordinator.py open."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from trafka.broker.config import BrokerConfig
from trafka.storage.clock import ManualClock
from trafka.storage.manager import LogManager

TOPIC = "t"


@contextmanager
def reopening_logs(data_dir: Path, clock: ManualClock, partitions: int) -> Iterator[Callable[[], LogManager]]:
    """A function that opens the data dir's LogManager, closing the one it opened before (a
    restart), with topic `t` of `partitions` partitions; the last one is closed on exit."""
    opened: list[LogManager] = []

    def reopen() -> LogManager:
        for logs in opened:
            logs.close()
        logs = LogManager(data_dir, clock=clock)
        if TOPIC not in logs.topics:
            logs.create_topic(TOPIC, partitions)
        opened.append(logs)
        return logs

    try:
        yield reopen
    finally:
        for logs in opened:
            logs.close()


def coordinator_config(settings: dict) -> BrokerConfig:
    """Three partitions per internal topic, then the test's own settings."""
    return BrokerConfig({
        "offsets.topic.num.partitions": "3", "transaction.state.log.num.partitions": "3",
        **{k: str(v) for k, v in settings.items()},
    })
