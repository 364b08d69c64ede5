"""Idempotent produce through the wire, byte for byte: the same Produce request replayed is
answered with the original offsets and stored once; a sequence gap is refused with
OUT_OF_ORDER_SEQUENCE_NUMBER (45); both hold across a clean restart and a SIGKILL.

Raw sockets (trafka.testing.rawwire) because no client lets a test resend its exact bytes.
"""

from __future__ import annotations

import pytest

from trafka.testing.rawwire import RawClient
from trafka.wire import records
from trafka.wire.errors import ErrorCode

TOPIC = "idem"


def batch(producer_id: int, epoch: int, base_sequence: int, values: list[bytes]) -> bytes:
    return records.encode_batch([records.Record(None, v, (("h", b"1"),), 1_700_000_000_000) for v in values],
                                compression=records.Compression.LZ4, producer_id=producer_id,
                                producer_epoch=epoch, base_sequence=base_sequence)


def result(response) -> tuple[int, int]:
    part = response.responses[0].partition_responses[0]
    return part.error_code, part.base_offset


def create_topic(raw: RawClient) -> None:
    body = raw.request(19, 4, {"topics": [{"name": TOPIC, "num_partitions": 1, "replication_factor": 1,
                                           "assignments": [], "configs": []}], "timeout_ms": 10000,
                               "validate_only": False})
    assert body.topics[0].error_code == 0, body


def stored(bootstrap: str) -> list[tuple[int, int, int]]:
    with RawClient(bootstrap) as raw:
        return [(b.base_offset, b.base_sequence, b.record_count) for b in raw.fetch_batches(TOPIC)]


@pytest.mark.parametrize("restart", ["none", "stop", "kill"])
def test_replayed_produce_is_stored_once(trafka_broker, restart):
    with RawClient(trafka_broker.bootstrap_servers) as raw:
        create_topic(raw)
        pid, epoch = raw.init_producer_id()
        assert pid >= 0 and epoch == 0
        raw.request(0, 7, {"transactional_id": None, "acks": -1, "timeout_ms": 10000, "topic_data": [
            {"name": TOPIC, "partition_data": [{"index": 0, "records": batch(-1, -1, -1, [b"plain"])}]}]})
        first = raw.produce_frame(TOPIC, 0, batch(pid, epoch, 0, [b"a", b"b", b"c"]))
        assert result(raw.send_frame(0, 7, first)) == (ErrorCode.NONE, 1)
    if restart == "stop":
        trafka_broker.restart()
    elif restart == "kill":
        trafka_broker.restart(kill=True)
    with RawClient(trafka_broker.bootstrap_servers) as raw:
        # The very same bytes again: the original offsets, nothing appended.
        assert result(raw.send_frame(0, 7, first)) == (ErrorCode.NONE, 1)
        # A gap (sequence 5 where 3 is next) is refused.
        gap = raw.produce_frame(TOPIC, 0, batch(pid, epoch, 5, [b"x"]))
        assert result(raw.send_frame(0, 7, gap))[0] == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER == 45
        # The next sequence is accepted right after the first batch.
        following = raw.produce_frame(TOPIC, 0, batch(pid, epoch, 3, [b"d"]))
        assert result(raw.send_frame(0, 7, following)) == (ErrorCode.NONE, 4)
        assert result(raw.send_frame(0, 7, following)) == (ErrorCode.NONE, 4)
    assert stored(trafka_broker.bootstrap_servers) == [(0, -1, 1), (1, 0, 3), (4, 3, 1)]


def test_producers_are_tracked_apart(trafka_broker):
    with RawClient(trafka_broker.bootstrap_servers) as raw:
        create_topic(raw)
        one, two = raw.init_producer_id(), raw.init_producer_id()
        assert one[0] != two[0]
        assert result(raw.send_frame(0, 7, raw.produce_frame(TOPIC, 0, batch(*one, 0, [b"1a"])))) == (0, 0)
        assert result(raw.send_frame(0, 7, raw.produce_frame(TOPIC, 0, batch(*two, 0, [b"2a"])))) == (0, 1)
        # Sequence 0 of the second producer is not a duplicate of the first's.
        assert result(raw.send_frame(0, 7, raw.produce_frame(TOPIC, 0, batch(*one, 1, [b"1b"])))) == (0, 2)
        # As in Kafka, a producer the partition has no state for may start at any sequence;
        # from then on its sequences must follow.
        three = raw.init_producer_id()
        assert result(raw.send_frame(0, 7, raw.produce_frame(TOPIC, 0, batch(*three, 7, [b"3a"])))) == (0, 3)
        assert result(raw.send_frame(0, 7, raw.produce_frame(TOPIC, 0, batch(*three, 9, [b"3b"]))))[0] == 45
