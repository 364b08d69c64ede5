"""A simulated cluster's replicas on the broker clock, without sockets or sleeps: a `Cluster`
built in the test, its replica fetchers run one pass at a time (`fetch_once`), leaders moved
and brokers stopped through the same calls the control endpoints make (docs/cluster.md)."""

from __future__ import annotations

import json

import pytest
import trio
from testkit.cluster import replicate
from testkit.storage import batch, idempotent
from trio.testing import wait_all_tasks_blocked

from trafka.broker.config import BrokerConfig
from trafka.broker.network.connection import RequestContext
from trafka.broker.handlers.produce import handle as handle_produce
from trafka.broker.coordinators.group.offsets import OffsetCommit
from trafka.broker.cluster.nodes import Cluster
from trafka.storage.log_replica import epoch_end_offset
from trafka.storage.retention import apply_retention
from trafka.wire import framing
from trafka.wire import records as rec
from trafka.wire.errors import ErrorCode
from trafka.wire.messages import APIS

SETTINGS = {"cluster.brokers": 3, "offsets.topic.num.partitions": 1, "transaction.state.log.num.partitions": 1,
            "share.coordinator.state.topic.num.partitions": 1}


def open_cluster(data_dir, **settings) -> Cluster:
    values = {**SETTINGS, **settings}
    return Cluster(data_dir, BrokerConfig.from_sources([f"{k}={v}" for k, v in values.items()], []))


@pytest.fixture
def cluster(tmp_path):
    made = open_cluster(tmp_path / "cluster")
    yield made
    made.close()


def create(cluster, name: str, replication: int = 3) -> tuple[int, list[int]]:
    """A one-partition topic on brokers 0..replication-1 (not by the random topic id, so a run
    replays): (leader, followers)."""
    logs = cluster.running_nodes()[0].logs
    metadata = logs.create_topic(name, 1, {})
    replicas = tuple(range(replication))
    cluster.controller.assign(metadata.topic_id, {0: replicas})
    return replicas[0], list(replicas[1:])


def leader_log(cluster, name: str):
    return cluster.leader_node(name, 0).logs.log(name, 0)


def produce(cluster, name: str, records: int, per_batch: int = 10) -> None:
    """`records` records appended on the leader's log, in batches of `per_batch` (the leader's
    role is on its log since it opened: nothing here puts it there)."""
    leader = cluster.leader_node(name, 0)
    for _ in range(records // per_batch):
        leader.logs.log(name, 0).append(batch(per_batch))


def log_starts(cluster, name: str) -> dict[int, int]:
    return {node.node_id: node.logs.log(name, 0).log_start_offset for node in cluster.running_nodes()
            if node.node_id in cluster.controller.replicas(node.logs.topics[name].topic_id, 0)}


def test_followers_learn_the_leaders_log_start_and_a_new_leader_keeps_it(cluster):
    leader, followers = create(cluster, "deleted")
    produce(cluster, "deleted", 100)
    replicate(cluster)
    assert leader_log(cluster, "deleted").delete_records_before(50) == 50
    replicate(cluster)
    assert log_starts(cluster, "deleted") == {leader: 50, followers[0]: 50, followers[1]: 50}
    cluster.move_leader("deleted", 0, followers[0])
    assert leader_log(cluster, "deleted").log_start_offset == 50  # the deleted records stay deleted


def test_followers_learn_the_log_start_the_leaders_retention_moved(cluster):
    leader, followers = create(cluster, "retained")
    cluster.running_nodes()[0].logs.set_topic_config("retained", {"segment.bytes": "2000", "retention.bytes": "4000", "retention.ms": "-1"})
    produce(cluster, "retained", 600)
    replicate(cluster)
    assert apply_retention(leader_log(cluster, "retained"), cluster.nodes[leader].clock.time_ms()) > 0
    start = leader_log(cluster, "retained").log_start_offset
    replicate(cluster)
    assert 0 < start < 600 and log_starts(cluster, "retained") == {leader: start, followers[0]: start, followers[1]: start}


def test_a_follower_behind_the_leaders_log_start_starts_again_there(cluster):
    leader, followers = create(cluster, "behind")
    lagging = followers[1]
    cluster.stop_broker(lagging)
    produce(cluster, "behind", 100)
    replicate(cluster)
    leader_log(cluster, "behind").delete_records_before(85)  # inside the batch of offsets 80-89
    cluster.start_broker(lagging)
    replicate(cluster)
    copy = cluster.nodes[lagging].logs.log("behind", 0)
    assert (copy.log_start_offset, copy.log_end_offset) == (85, 100)
    assert lagging in cluster.describe_partition("behind", 0)["isr"]


def _last_epoch(partition_log) -> int:
    data = partition_log.read(partition_log.log_start_offset, 1 << 30).to_bytes()
    return [h.partition_leader_epoch for _, h in rec.iter_batches(data)][-1]


def test_internal_topics_are_stamped_with_the_leader_epoch_after_a_restart(tmp_path):
    commit = [OffsetCommit("orders", 0, 42, -1, None)]
    cluster = open_cluster(tmp_path / "cluster")
    try:
        cluster.running_nodes()[0].logs.create_topic("orders", 1, {})
        name = "__consumer_offsets"
        assert cluster.leader_node(name, 0).group_coordinator.commit_offsets("g", -1, "", None, commit) == [ErrorCode.NONE]
        cluster.move_leader(name, 0, cluster.describe_partition(name, 0)["isr"][1])
        epoch = cluster.describe_partition(name, 0)["leader_epoch"]
        assert epoch == 1
    finally:
        cluster.close()
    cluster = open_cluster(tmp_path / "cluster")  # the process restarts
    try:
        leader = cluster.leader_node(name, 0)
        assert leader.group_coordinator.commit_offsets("g", -1, "", None, commit) == [ErrorCode.NONE]
        stored = leader.logs.log(name, 0)
        assert _last_epoch(stored) == epoch
        # OffsetForLeaderEpoch: epoch 0's writes end where epoch 1's begin (the second commit).
        assert stored.log_end_offset == 2
        assert epoch_end_offset(stored, 0, epoch) == (0, 1)
    finally:
        cluster.close()


def avro(version: int) -> str:
    """Version `version` of a record schema that grows by a defaulted field each time."""
    fields = [{"name": f"f{i}", "type": "int", "default": 0} for i in range(version)]
    return json.dumps({"type": "record", "name": "Order", "fields": fields})


def test_the_schema_registry_follows_the_leader_of_schemas_through_stops_and_restarts(tmp_path):
    cluster = open_cluster(tmp_path / "cluster")
    try:
        registry = cluster.nodes[0].schema_registry  # what the registry's HTTP routes call
        assert [registry().register("orders-value", "AVRO", avro(v), ()) for v in (1, 2, 3)] == [1, 2, 3]
        cluster.stop_broker(0)  # the broker whose registry the routes reach
        assert registry().versions("orders-value") == [1, 2, 3]
        assert registry().register("orders-value", "AVRO", avro(4), ()) == 4
        cluster.start_broker(0)
        replicate(cluster)
        assert registry().versions("orders-value") == [1, 2, 3, 4]
        assert len({node.logs.log("_schemas", 0).log_end_offset for node in cluster.nodes}) == 1  # every replica
        for node_id in range(3):  # reads and writes work whichever broker is down
            cluster.stop_broker(node_id)
            assert registry().versions("orders-value") == [1, 2, 3, 4]
            assert registry().schema(4).version == 4
            cluster.start_broker(node_id)
            replicate(cluster)
        assert registry().register("orders-value", "AVRO", avro(5), ()) == 5
    finally:
        cluster.close()
    cluster = open_cluster(tmp_path / "cluster")  # the process restarts
    try:
        registry = cluster.nodes[0].schema_registry
        assert registry().versions("orders-value") == [1, 2, 3, 4, 5]
        assert registry().schema(4).schema == avro(4)
    finally:
        cluster.close()


async def produce_request(broker, name: str, records: bytes, *, acks: int = -1) -> int:
    """One Produce v8 through the broker's handler, as a connection dispatches it; its error code."""
    frame = framing.encode_request(APIS[0], 8, 1, "replica-state", {
        "transactional_id": None, "acks": acks, "timeout_ms": 60_000,
        "topic_data": [{"name": name, "partition_data": [{"index": 0, "records": records}]}]})[4:]
    header = framing.peek_header(frame)
    request = framing.decode_request(frame, header, APIS[0])
    answer = await handle_produce(RequestContext(broker, header, "test"), request)
    return answer["responses"][0]["partition_responses"][0]["error_code"]


def test_an_acks_all_write_waiting_when_the_leadership_moves_is_not_leader_or_follower(cluster):
    """The leader appends a batch its followers have not fetched; leadership moves to a follower,
    which takes another batch at the same offset; the old leader truncates and copies it, and
    its high watermark passes the offset. The waiting write must not be told NONE."""
    old, (new, _) = create(cluster, "moving")
    answers = []

    async def main():
        async with trio.open_nursery() as nursery:
            async def waiting():
                answers.append(await produce_request(cluster.nodes[old], "moving", batch(5, key=b"waiting")))
            nursery.start_soon(waiting)
            await wait_all_tasks_blocked()
            assert not answers  # waiting for the followers
            cluster.move_leader("moving", 0, new)
            leader_log(cluster, "moving").append(batch(5, key=b"other"))
            replicate(cluster)  # the old leader truncates and copies the other batch at offsets 0-4
            assert cluster.nodes[old].logs.log("moving", 0).high_watermark == 5
            cluster.nodes[old].notify_data_arrived()  # as any other write to it would
            await wait_all_tasks_blocked()

    trio.run(main)
    assert answers == [ErrorCode.NOT_LEADER_OR_FOLLOWER]


def test_cancelling_a_reassignment_never_leaves_a_non_replica_in_the_isr(cluster):
    """A partition of broker `first` moving to two others: one caught up, one held back. With
    `first` stopped, going back to it alone would need an unclean election (no replica of
    `first`'s in sync): the cancellation is refused, as Kafka refuses it, and the ISR stays
    within the replicas."""
    first, _ = create(cluster, "moving", replication=1)
    target = [n for n in range(3) if n != first]
    produce(cluster, "moving", 20)
    cluster.replication.paused.add(target[1])
    cluster.reassign("moving", 0, target)
    replicate(cluster)
    assert sorted(cluster.describe_partition("moving", 0)["isr"]) == sorted([target[0], first])
    cluster.stop_broker(first)
    with pytest.raises(ValueError, match="unclean"):
        cluster.reassign("moving", 0, None)
    state = cluster.describe_partition("moving", 0)
    assert set(state["isr"]) <= set(state["replicas"]) and state["leader"] == target[0], state


def test_a_follower_rejoins_the_isr_once_it_reaches_the_high_watermark(cluster):
    """Kafka's rule: in sync again once its log end reached the leader's high watermark, not the
    leader's log end, which a busy partition keeps moving (the ISR would flap or never refill)."""
    leader, (steady, returning) = create(cluster, "busy")
    cluster.stop_broker(returning)
    produce(cluster, "busy", 100)
    replicate(cluster)
    cluster.replication.paused.add(steady)  # holds the high watermark at 100
    for _ in range(3):
        leader_log(cluster, "busy").append(batch(100, value_size=10_000))  # 1 MB more each
    cluster.start_broker(returning)
    assert cluster.replication.fetch_once(cluster.nodes[returning])  # one fetch: 1 MiB, not the log end
    copy = cluster.nodes[returning].logs.log("busy", 0)
    assert 100 < copy.log_end_offset < leader_log(cluster, "busy").log_end_offset
    assert returning in cluster.describe_partition("busy", 0)["isr"]


def test_a_follower_that_cannot_take_a_coordinator_write_leaves_the_isr_and_the_write_stands(cluster):
    """A coordinator's write is on the leader; copying it to one in-sync follower fails (that
    replica's log is closed, as after a disk error). The write is answered and applied, as it is
    durable, and that follower leaves the ISR, as Kafka's coordinator would wait for it to."""
    cluster.running_nodes()[0].logs.create_topic("orders", 1, {})
    name = "__consumer_offsets"
    leader = cluster.leader_node(name, 0)
    broken = [r for r in cluster.describe_partition(name, 0)["isr"] if r != leader.node_id][0]
    cluster.nodes[broken].logs.log(name, 0).close()
    commit = [OffsetCommit("orders", 0, 42, -1, None)]
    assert leader.group_coordinator.commit_offsets("g", -1, "", None, commit) == [ErrorCode.NONE]
    assert leader.group_coordinator.fetch_offsets("g", [("orders", [0])])[0][1][0][1].offset == 42
    assert broken not in cluster.describe_partition(name, 0)["isr"]


def test_a_leaders_high_watermark_is_held_from_its_first_append_whoever_appends(cluster):
    """A replica's role is on its log from the moment the log is made (LogManager's replica
    hooks), not from the first request that asks about the partition: a write nothing asked
    about first (a transaction marker, a coordinator's record) is not committed before the
    in-sync followers have it."""
    leader, followers = create(cluster, "held")
    cluster.replication.paused.update(followers)
    log_ = leader_log(cluster, "held")  # made now, by no request
    for _ in range(5):
        log_.append(batch(10))
    assert (log_.log_end_offset, log_.high_watermark) == (50, 0)
    cluster.replication.paused.clear()
    replicate(cluster)
    assert log_.high_watermark == 50


@pytest.mark.parametrize("commit", [False, True], ids=["abort", "commit"])
def test_a_transaction_marker_is_on_every_in_sync_replica_before_it_counts_as_written(cluster, commit):
    """Kafka's coordinator writes markers with acks=all: a marker counts as written once the
    partition's in-sync replicas have it. One on the leader alone goes with the leader: the new
    leader keeps the transaction open and the producer's next transaction's marker ends both (a
    nemesis run read an aborted transaction as committed, and lost a committed one that way)."""
    leader, _ = create(cluster, "marked")
    txns = cluster.running_nodes()[0].txn_coordinator_for("app")
    error, pid, epoch = txns.init_producer_id("app", 60000)
    assert error == ErrorCode.NONE
    assert txns.add_partitions("app", pid, epoch, [("marked", 0)]) == {("marked", 0): ErrorCode.NONE}
    leader_log(cluster, "marked").append(batch(10, producer_id=pid, producer_epoch=epoch, base_sequence=0,
                                               transactional=True))
    replicate(cluster)  # the followers have the records, then the marker is written
    assert txns.end_transaction("app", pid, epoch, commit) == ErrorCode.NONE
    assert txns.describe("app").state.name == ("COMPLETE_COMMIT" if commit else "COMPLETE_ABORT")
    cluster.stop_broker(leader, kill=True)  # before any fetcher pass
    now_leading = leader_log(cluster, "marked")
    assert now_leading.log_end_offset == 11  # the ten records and the marker
    assert now_leading.last_stable_offset == now_leading.high_watermark == 11  # nothing left open


def test_a_topic_made_again_under_its_name_starts_with_nothing_committed(cluster):
    """What the leaders of a deleted topic had committed is not the new topic's: made again
    under the same name with a follower lagging, a leader move must not count records that
    replica lacks as committed (the partition's committed offset is the topic id's, not the
    name's)."""
    create(cluster, "again")
    produce(cluster, "again", 3000)  # 300 batches
    replicate(cluster)
    assert leader_log(cluster, "again").high_watermark == 3000
    cluster.running_nodes()[0].logs.delete_topic("again")
    create(cluster, "again")
    cluster.replication.paused.add(2)
    produce(cluster, "again", 1000)
    replicate(cluster)  # broker 1 has the 1,000 records, broker 2 none; both still in sync
    assert leader_log(cluster, "again").high_watermark == 0
    cluster.move_leader("again", 0, 1)
    assert cluster.leader_node("again", 0).node_id == 1
    assert leader_log(cluster, "again").high_watermark == 0, "records broker 2 lacks counted as committed"
    cluster.replication.paused.discard(2)
    replicate(cluster)
    assert leader_log(cluster, "again").high_watermark == 1000


def test_a_stopped_brokers_last_fetcher_pass_does_not_bring_it_back_in_sync(cluster):
    """trio cancels a stopped broker's tasks at their next checkpoint: a replica fetcher pass
    already scheduled when `stop_broker` ran still runs once. That pass must not count: the
    broker stays out of the ISR until, started again, it has caught up. (It used to open a
    fresh log over the stopped broker's directory, copy the leader's whole log into it, and
    rejoin the ISR; started again with its own, shorter log, it could be elected and the
    acknowledged records it lacked were gone: in the nemesis, seed 1, the producers' next
    sequences were OUT_OF_ORDER_SEQUENCE_NUMBER on the new leader, the followers truncated to
    it, and committed transactional records were never read.) The new leader accepts the
    idempotent producer's next sequence and answers its retried batch with the original offsets."""
    leader, (returning, steady) = create(cluster, "orders")
    pid, epoch = 7, 0
    for seq in range(0, 2000, 10):  # 200 batches
        leader_log(cluster, "orders").append(idempotent(pid, epoch, seq, 10))
    replicate(cluster)
    directory = cluster.nodes[returning].logs.log("orders", 0).directory
    cluster.stop_broker(returning, kill=True)
    files = {path.name: path.stat().st_size for path in directory.iterdir()}
    for seq in range(2000, 4000, 10):  # 200 more while it is down
        leader_log(cluster, "orders").append(idempotent(pid, epoch, seq, 10))
    replicate(cluster)
    assert leader_log(cluster, "orders").high_watermark == 4000  # acknowledged by the leader and `steady`
    cluster.replication.fetch_once(cluster.nodes[returning])  # the pass its fetcher had scheduled
    assert returning not in cluster.describe_partition("orders", 0)["isr"]
    assert {path.name: path.stat().st_size for path in directory.iterdir()} == files  # nothing written
    topic_id = cluster.nodes[leader].logs.topics["orders"].topic_id
    assert returning not in cluster.controller.expand_isr(topic_id, 0, returning).isr  # nor would the controller take it
    cluster.start_broker(returning)
    assert cluster.nodes[returning].logs.log("orders", 0).log_end_offset == 2000  # its own log, as it was killed
    assert returning not in cluster.describe_partition("orders", 0)["isr"]
    with pytest.raises(ValueError, match="not a live in-sync replica"):
        cluster.move_leader("orders", 0, returning)
    replicate(cluster)  # caught up: in sync again, and it may lead
    cluster.move_leader("orders", 0, returning)
    new_leader = leader_log(cluster, "orders")
    assert new_leader is cluster.nodes[returning].logs.log("orders", 0)
    retried = new_leader.append(idempotent(pid, epoch, 3990, 10))  # a retry of the last acknowledged batch
    assert (retried.base_offset, retried.duplicate) == (3990, True)
    assert new_leader.append(idempotent(pid, epoch, 4000, 10)).base_offset == 4000
