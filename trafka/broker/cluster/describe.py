"""What the cluster (one broker, or a simulated cluster of several: trafka/broker/cluster/nodes.py)
says about itself where several APIs ask the same question."""

from __future__ import annotations

from trafka.broker.security.authorizer import CLUSTER, Op, authorize, authorized_operations
from trafka.wire.errors import ErrorCode

OPERATIONS_NOT_ASKED = -2147483648


def cluster_authorized_operations(ctx, asked: bool) -> int:
    """Metadata's and DescribeCluster's bitfield of cluster operations (AclOperation codes) the
    caller may do: every one without an authorizer; none unless it may DESCRIBE the cluster, as
    Kafka's AuthHelper answers."""
    if not asked:
        return OPERATIONS_NOT_ASKED
    return authorized_operations(ctx, CLUSTER) if authorize(ctx, Op.DESCRIBE, CLUSTER, log_denied=False) else 0


def live_brokers(ctx) -> list[dict]:
    """The brokers a client can reach, each at its listener of the caller's listener name."""
    broker = ctx.broker
    found = []
    for node in broker.cluster.live_nodes():
        listener = next((l for l in node.listeners if l.name == ctx.listener.name), None)
        if listener is not None:
            host, port = listener.advertised
            found.append({"node_id": node.node_id, "host": host, "port": port, "rack": node.config["broker.rack"] or None})
    return found


def controller_id(broker) -> int:
    """The controller Metadata and DescribeCluster name: the lowest live broker (KRaft names a
    live broker, the controller quorum being unreachable to clients)."""
    return min(broker.cluster.controller.alive, default=-1)


def node_address(ctx, node_id: int) -> tuple[str, int] | None:
    """Where a client on the caller's listener reaches broker `node_id`, or None (not live)."""
    broker = ctx.broker
    if node_id not in broker.cluster.controller.alive:
        return None
    node = broker.cluster.node(node_id)
    listener = next((l for l in node.listeners if l.name == ctx.listener.name), None)
    return None if listener is None else listener.advertised


def assignment_problem(broker, replicas) -> str | None:
    """Why a CreateTopics / CreatePartitions replica assignment cannot be used, or None."""
    controller = broker.cluster.controller
    return controller.validate_replicas(replicas) or controller.fenced_assignment(replicas)


def replication_factor_problem(broker, replication_factor: int) -> str | None:
    """Why a replication factor cannot be used (-1: the default), or None."""
    brokers = broker.cluster.controller.brokers
    if replication_factor == -1:
        replication_factor = broker.config["default.replication.factor"]
    if replication_factor < 1 or replication_factor > brokers:
        return f"replication factor {replication_factor} is larger than the {brokers} available broker{'s' if brokers > 1 else ''}"
    return None


def place(broker, topic_id, partitions: range, replication_factor: int) -> None:
    """Kafka's default placement for new partitions with `replication_factor` replicas
    (-1: default.replication.factor, placed when the topic was made)."""
    if replication_factor != -1:
        broker.cluster.controller.place(topic_id, partitions, replication_factor)


def assign(broker, topic_id, assignments: dict[int, list[int]]) -> None:
    """Record explicit replica assignments with the controller."""
    if assignments:
        broker.cluster.controller.assign(topic_id, {p: tuple(r) for p, r in assignments.items()})


RACK_AWARE_SELECTOR = "org.apache.kafka.common.replica.RackAwareReplicaSelector"


def fetch_refusal(broker, topic: str, partition: int, client_rack: str | None) -> tuple[ErrorCode | None, int]:
    """For a consumer's Fetch of the partition here: (NOT_LEADER_OR_FOLLOWER or None, the
    preferred read replica or -1). The leader serves, and with
    replica.selector.class set to Kafka's RackAwareReplicaSelector (KIP-392) it names a live
    in-sync replica in the consumer's rack (`client.rack`) when it is not in it itself; a
    follower then serves that consumer, up to its own high watermark."""
    cluster = broker.cluster
    metadata = broker.logs.topics.get(topic)
    if metadata is None or not 0 <= partition < metadata.partitions:
        return None, -1
    state = cluster.controller.partition(metadata.topic_id, partition)
    rack_aware = broker.config["replica.selector.class"] == RACK_AWARE_SELECTOR
    if state.leader == broker.node_id:
        racks = cluster.controller.racks
        if rack_aware and client_rack and racks[broker.node_id] != client_rack:
            in_rack = [r for r in state.isr if r in cluster.controller.alive and racks[r] == client_rack]
            if in_rack:
                return None, in_rack[0]
        return None, -1
    if rack_aware and broker.node_id in state.replicas:
        return None, -1  # a follower serves consumers sent to it
    return ErrorCode.NOT_LEADER_OR_FOLLOWER, -1
