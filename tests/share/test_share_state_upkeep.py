"""`__share_group_state` as Kafka's share coordinator keeps it: ShareUpdate records between
ShareSnapshots, the records no state needs pruned, and cold snapshots of idle share-partitions.
On a manual clock over a real LogManager: seeded schedules of acquisitions, acknowledgements,
lock expiries, upkeep rounds and restarts. After every restart each share-partition's durable
state (start offset and every record's state and delivery count) is the one it had before, and
the state topic's log start moves up as rounds pass, past a share-partition left idle."""

from __future__ import annotations

import random
import time
from types import SimpleNamespace

import pytest

from testkit.coordinators import TOPIC, reopening_broker
from trafka.broker.coordinators.share.coordinator import SHARE_STATE_TOPIC
from trafka.broker.coordinators.share.formats import SharePartitionKey
from trafka.broker.coordinators.share.partition import AcknowledgeType, AcquireLimits
from trafka.wire.errors import ErrorCode as E

LOCK_MS, LIMIT = 2000, 3
PRUNE_MS, COLD_MS = 3000, 5000


def settings(per_snapshot: int) -> dict:
    return {"group.share.record.lock.duration.ms": LOCK_MS, "group.share.delivery.count.limit": LIMIT,
            "share.coordinator.state.topic.num.partitions": 1,
            "share.coordinator.snapshot.update.records.per.snapshot": per_snapshot,
            "share.coordinator.state.topic.prune.interval.ms": PRUNE_MS,
            "share.coordinator.cold.partition.snapshot.interval.ms": COLD_MS}


def durable(share, key) -> tuple[int, dict]:
    """(start offset, offset -> (delivery state, count)) as the share-partition would be written;
    an offset in no state batch is (0, 0), never delivered."""
    start, batches = share.existing(key).snapshot()
    states = {}
    for first, last, state, count in batches:
        for offset in range(max(first, start), last + 1):
            states[offset] = (state, count)
    return start, {o: s for o, s in states.items() if s != (0, 0)}


def acquire(share, key, member, now, count):
    runs = share.existing(key).acquire([range(o, o + 3) for o in range(0, 600, 3)], member, now, LOCK_MS, LIMIT,
                                       AcquireLimits(count))
    share.locked(key)
    return [o for first, last, _ in runs for o in range(first, last + 1)]


@pytest.mark.parametrize("per_snapshot", [0, 1, 3, 500])
@pytest.mark.parametrize("seed", range(6))
def test_seeded_schedules_replay_to_the_state_written_while_the_topic_is_pruned(tmp_path, clock, seed, per_snapshot):
    rng = random.Random(seed * 1000 + per_snapshot)
    with reopening_broker(tmp_path, clock, partitions=1) as reopen:
        broker = reopen(**settings(per_snapshot))
        topic_id = broker.logs.topics[TOPIC].topic_id
        busy, idle = SharePartitionKey("busy", topic_id, 0), SharePartitionKey("idle", topic_id, 0)
        share = broker.share_coordinator
        assert share.share_partition(busy, 0) == E.NONE and share.share_partition(idle, 0) == E.NONE
        # The idle group takes five records, accepts three, rejects one, releases one; then nothing.
        assert acquire(share, idle, "i", clock.time_ms(), 5) == [0, 1, 2, 3, 4, 5]
        for first, last, kind in ((0, 2, AcknowledgeType.ACCEPT), (3, 3, AcknowledgeType.REJECT),
                                  (4, 5, AcknowledgeType.RELEASE)):
            batch = SimpleNamespace(first_offset=first, last_offset=last, acknowledge_types=[kind])
            assert share.acknowledge(idle, "i", [batch]) == E.NONE
        idle_state = durable(share, idle)
        held: dict[int, tuple[str, int]] = {}  # offset -> (member, lock deadline)
        starts = []
        for step in range(300):
            roll, now = rng.random(), clock.time_ms()
            if roll < 0.35:
                member = rng.choice("xyz")
                for offset in acquire(share, busy, member, now, rng.choice([1, 3, 7])):
                    held[offset] = (member, now + LOCK_MS)
            elif roll < 0.7 and held:
                first = rng.choice(sorted(held))
                member, last = held[first][0], first
                while last + 1 in held and held[last + 1][0] == member and rng.random() < 0.7:
                    last += 1
                kinds = ([rng.choice([1, 2, 3])] if rng.random() < 0.6
                         else [rng.choice([1, 2, 3]) for _ in range(first, last + 1)])
                batch = SimpleNamespace(first_offset=first, last_offset=last, acknowledge_types=kinds)
                assert share.acknowledge(busy, member, [batch]) == E.NONE, f"seed {seed} step {step}"
                for offset in range(first, last + 1):
                    del held[offset]
            elif roll < 0.9:
                clock.advance(rng.choice([300, 1100, LOCK_MS, 2600]))
                share.expire_due(clock.time_ms())  # lock expiries, and the upkeep rounds when due
                held = {o: h for o, h in held.items() if h[1] > clock.time_ms()}  # the others' locks ran out
            elif not held:  # a restart with nothing held: every change so far was written
                before = durable(share, busy)
                broker = reopen(**settings(per_snapshot))
                share = broker.share_coordinator
                assert durable(share, busy) == before, f"seed {seed} step {step}: the restart changed the state"
                assert durable(share, idle) == idle_state, f"seed {seed} step {step}: the idle state changed"
            starts.append(broker.logs.log(SHARE_STATE_TOPIC, 0).log_start_offset)
        assert starts == sorted(starts), "the state topic's log start went back"
        before = durable(share, busy)
        clock.advance(LOCK_MS)
        share.expire_due(clock.time_ms())
        before = durable(share, busy)
        for _ in range(3):  # rounds of upkeep with nothing else happening
            clock.advance(max(PRUNE_MS, COLD_MS))
            share.expire_due(clock.time_ms())
        state_log = broker.logs.log(SHARE_STATE_TOPIC, 0)
        assert state_log.log_start_offset > 0, "nothing was pruned"
        # Two rounds with nothing changing leave each share-partition's latest snapshot and
        # little else: the idle share-partition does not hold the log start back.
        assert state_log.log_end_offset - state_log.log_start_offset <= 4
        broker = reopen(**settings(per_snapshot))
        share = broker.share_coordinator
        assert durable(share, busy) == before
        assert durable(share, idle) == idle_state


def test_a_work_queue_goes_on_after_pruning_and_a_restart_without_a_record_twice(tmp_path):
    """Real clients, where users lean. 3,000 records in 60 batches; a slow member takes some and
    never acknowledges them, two workers accept all the others (confluent-kafka
    ShareConsumers), the state written as ShareUpdates between snapshots (one every 5). A second
    group reads 1,000 and goes idle. The broker clock moves past the pruning and cold-snapshot
    rounds: `__share_group_state`'s earliest offset (a client's ListOffsets) moves up. After a
    restart the workers get what the slow member held and the 500 records produced since, none
    of the others again; the idle group goes on where it stopped."""
    from confluent_kafka import AcknowledgeType, Consumer, TopicPartition

    from testkit.groups import create_topic, share_from_earliest
    from trafka.testing import TrafkaBroker
    from tests.share.test_share_work_queue import (produce_batches, raw_join, raw_share_fetch, share_consumer,
                                                   topic_id_of)
    from trafka.testing.rawwire import RawClient

    # The slow member holds the first batch, so the in-flight window spans the whole backlog.
    config = {"group.share.record.lock.duration.ms": 600000, "group.share.heartbeat.interval.ms": 500,
              "group.share.partition.max.record.locks": 10000,
              "offsets.topic.num.partitions": 1, "share.coordinator.state.topic.num.partitions": 1,
              "share.coordinator.snapshot.update.records.per.snapshot": 5,
              "share.coordinator.state.topic.prune.interval.ms": 60000,
              "share.coordinator.cold.partition.snapshot.interval.ms": 60000}

    def work(broker, group: str, wanted, seen: list, workers: int = 2) -> None:
        members = [share_consumer(broker, group, f"{group}-{i}") for i in range(workers)]
        for member in members:
            member.subscribe(["jobs"])
        deadline = time.monotonic() + 60
        try:
            while not wanted(seen) and time.monotonic() < deadline:
                for member in members:
                    for message in member.poll(0.2) or []:
                        seen.append(message.offset())
                        member.acknowledge(message, AcknowledgeType.ACCEPT)
        finally:
            for member in members:
                member.close()  # sends the last acknowledgements

    def earliest(broker) -> int:
        consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "watcher"})
        try:
            return consumer.get_watermark_offsets(TopicPartition(SHARE_STATE_TOPIC, 0), timeout=10)[0]
        finally:
            consumer.close()

    with TrafkaBroker(data_dir=tmp_path / "data", config=config) as broker:
        create_topic(broker.bootstrap_servers, "jobs", 1)
        share_from_earliest(broker.bootstrap_servers, "jobs")
        share_from_earliest(broker.bootstrap_servers, "audit")
        produce_batches(broker, "jobs", 3000, 50)
        # The slow member, on the wire: one ShareFetch of one batch, then nothing until the restart.
        slow = RawClient(broker.bootstrap_servers)
        raw_join(slow, "jobs", "slow", "jobs")
        answer = raw_share_fetch(slow, "jobs", "slow", topic_id_of(broker, "jobs"), 0, 50, max_wait_ms=5000)
        held = [o for t in answer.responses for p in t.partitions for a in p.acquired_records
                for o in range(a.first_offset, a.last_offset + 1)]
        assert held, "the slow member got nothing"
        done: list[int] = []
        work(broker, "jobs", lambda seen: len(seen) >= 3000 - len(held), done)
        assert sorted(done + held) == list(range(3000)), "each record once, all of them"
        audited: list[int] = []
        work(broker, "audit", lambda seen: len(seen) >= 1000, audited, workers=1)
        assert earliest(broker) == 0
        for _ in range(3):  # cold snapshots, then pruning below them
            broker.advance_clock(60000)
        assert earliest(broker) > 0, "the state topic was not pruned"
        broker.restart()  # the slow member's session ends with its connection: what it held is released
        produce_batches(broker, "jobs", 500, 50)
        again: list[int] = []
        work(broker, "jobs", lambda seen: len(seen) >= len(held) + 500, again)
        assert sorted(again) == sorted(held) + list(range(3000, 3500)), \
            f"{len(set(again) & set(done))} records accepted before the restart came again"
        more: list[int] = []
        work(broker, "audit", lambda seen: len(seen) >= 100, more, workers=1)
        assert min(more) == max(audited) + 1, "the idle group did not go on where it stopped"
        slow.close()
