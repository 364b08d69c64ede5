"""The coordinators in process, on a manual clock: a broker (a cluster of one, on no socket) over a
real data dir, whose coordinators the tests drive directly: what tests/groups/test_coordinator_clock.py,
tests/transactions/test_txn_coordinator.py and the share coordinator's clock tests open."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from trafka.broker.cluster.nodes import open_broker
from trafka.broker.config import BrokerConfig
from trafka.storage.clock import ManualClock
from trafka.storage.manager import LogManager
from trafka.wire import records as rec

TOPIC = "t"


@contextmanager
def reopening_broker(data_dir: Path, clock: ManualClock, partitions: int) -> Iterator[Callable[..., object]]:
    """A function that opens a broker over the data dir with the test's settings
    (`coordinator_config`), closing the one it opened before (a restart), with topic `t` of
    `partitions` partitions; the last one is closed on exit. Its coordinators load their shards
    as the cluster of one elects them, as in `trafka serve`."""
    opened: list = []

    def reopen(**settings):
        for broker in opened:
            broker.cluster.close()
        opened.clear()
        broker = open_broker(data_dir, coordinator_config(settings), clock)
        if TOPIC not in broker.logs.topics:
            broker.logs.create_topic(TOPIC, partitions)
        opened.append(broker)
        return broker

    try:
        yield reopen
    finally:
        for broker in opened:
            broker.cluster.close()


def coordinator_config(settings: dict) -> BrokerConfig:
    """Three partitions per internal topic, then the test's own settings."""
    return BrokerConfig({
        "offsets.topic.num.partitions": "3", "transaction.state.log.num.partitions": "3",
        **{k: str(v) for k, v in settings.items()},
    })


def produce(logs: LogManager, pid: int, epoch: int, seq: int, values, partition: int = 0):
    """Append one transactional batch of `values` to `t`'s `partition`, as a producer would."""
    batch = rec.encode_batch([rec.Record(None, v, (), 1) for v in values], producer_id=pid, producer_epoch=epoch,
                             base_sequence=seq, transactional=True)
    return logs.log(TOPIC, partition).append(batch)


def markers(logs: LogManager, topic: str, partition: int) -> list[tuple[int, int, int]]:
    """(producer id, epoch, COMMIT/ABORT) of every control batch in the partition."""
    log_ = logs.log(topic, partition)
    data = log_.read(log_.log_start_offset, 1 << 20).to_bytes()
    return [(h.producer_id, h.producer_epoch, rec.control_type(data, pos))
            for pos, h in rec.iter_batches(data) if h.is_control]
