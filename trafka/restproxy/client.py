"""The REST proxy's Kafka client: requests sent to the broker that should answer them, through
that broker's own `dispatch`, as a connected client's would be.

Confluent's REST Proxy is a Kafka client of its cluster; so is this one, without the socket.
It routes as a client does: partition requests to the partition's leader and group requests to
the group's coordinator, both learned from Metadata and FindCoordinator answers and learned
again when an answer says they moved (NOT_LEADER_OR_FOLLOWER, NOT_COORDINATOR, ...), within
`RETRY_MS`. Every request carries the caller's principal (HTTP Basic, or ANONYMOUS), so ACLs,
quotas and every check a handler makes apply to it as to any client.
"""

from __future__ import annotations

import itertools

import trio

from trafka.broker.network.connection import dispatch
from trafka.restproxy import errors
from trafka.wire import framing
from trafka.wire.errors import ErrorCode
from trafka.wire.messages import APIS
from trafka.wire.types import ZERO_UUID

CLIENT_ID = "trafka-rest-proxy"
ANONYMOUS = "User:ANONYMOUS"
RETRY_MS = 15_000  # as long as a request may keep finding a leader or coordinator
BACKOFF_S = 0.1

# The versions this client speaks, one per API (field names as in trafka.wire.messages).
PRODUCE, FETCH, LIST_OFFSETS, METADATA, OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR = 0, 1, 2, 3, 8, 9, 10
LIST_GROUPS, DESCRIBE_GROUPS, CREATE_TOPICS, DELETE_TOPICS, DESCRIBE_ACLS, CREATE_ACLS, DELETE_ACLS = 16, 15, 19, 20, 29, 30, 31
DESCRIBE_CONFIGS, CREATE_PARTITIONS, INCREMENTAL_ALTER_CONFIGS, DESCRIBE_CLUSTER = 32, 37, 44, 60
LIST_PARTITION_REASSIGNMENTS = 46
CONSUMER_GROUP_HEARTBEAT, CONSUMER_GROUP_DESCRIBE = 68, 69
VERSIONS = {PRODUCE: 9, FETCH: 12, LIST_OFFSETS: 7, METADATA: 12, OFFSET_COMMIT: 9, OFFSET_FETCH: 8,
            FIND_COORDINATOR: 4, LIST_GROUPS: 4, DESCRIBE_GROUPS: 5, CREATE_TOPICS: 7, DELETE_TOPICS: 6,
            DESCRIBE_ACLS: 3, CREATE_ACLS: 3, DELETE_ACLS: 3, DESCRIBE_CONFIGS: 4, CREATE_PARTITIONS: 3,
            INCREMENTAL_ALTER_CONFIGS: 1, DESCRIBE_CLUSTER: 1, LIST_PARTITION_REASSIGNMENTS: 0, CONSUMER_GROUP_HEARTBEAT: 0, CONSUMER_GROUP_DESCRIBE: 0}

# Answers that mean "ask again elsewhere, or a moment later", as a Kafka client treats them.
MOVED = frozenset({ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.LEADER_NOT_AVAILABLE, ErrorCode.FENCED_LEADER_EPOCH,
                   ErrorCode.UNKNOWN_LEADER_EPOCH, ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE,
                   ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NOT_ENOUGH_REPLICAS,
                   ErrorCode.REQUEST_TIMED_OUT, ErrorCode.KAFKA_STORAGE_ERROR})

_correlation = itertools.count(1)


class Unavailable(Exception):
    """No broker could be asked (every one stopped, or none leads the partition) within RETRY_MS."""


class ProxySession:
    """What a handler reads of a connection's session: the principal and the listener."""

    __slots__ = ("principal", "listener")

    def __init__(self, principal: str, listener):
        self.principal = principal
        self.listener = listener

    def refusal(self, api_key: int) -> None:
        return None

    def unexpected_request(self, api_key: int) -> None:
        return None


class KafkaClient:
    """One HTTP caller's view of the cluster (its principal), made per request."""

    def __init__(self, broker, principal: str = ANONYMOUS):
        self.broker = broker
        self.cluster = broker.cluster
        self.principal = principal

    # --- one request to one broker -------------------------------------------------------

    def nodes(self) -> list:
        return self.cluster.running_nodes()

    async def send(self, api_key: int, body: dict, node=None):
        """One request to `node` (any running broker when None); the decoded answer."""
        node = node if node is not None else self._any_node()
        api, version = APIS[api_key], VERSIONS[api_key]
        frame = framing.encode_request(api, version, next(_correlation), CLIENT_ID, body)
        session = ProxySession(self.principal, node.listeners[0] if node.listeners else None)
        parts = await dispatch(node, frame[4:], "rest-proxy", session)
        data = b"".join(p if isinstance(p, (bytes, bytearray, memoryview)) else p.read() for p in parts)
        return framing.decode_response(api, version, data[4:])[1]

    def _any_node(self):
        nodes = [n for n in self.nodes() if n.listeners] or self.nodes()
        if not nodes:
            raise Unavailable("no broker is running")
        return nodes[0]

    # --- routed requests -----------------------------------------------------------------

    async def metadata(self, topics: list[str] | None = None, *, auto_create: bool = False):
        body = {"topics": None if topics is None else [{"name": t, "topic_id": ZERO_UUID} for t in topics],
                "allow_auto_topic_creation": auto_create, "include_topic_authorized_operations": True}
        return await self.send(METADATA, body)

    async def leader(self, topic: str, partition: int):
        """The running broker leading topic-partition per Metadata, or None (no leader now).
        LookupError when the topic or partition does not exist (or may not be described)."""
        answer = await self.metadata([topic])
        found = answer.topics[0]
        if found.error_code in (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.TOPIC_AUTHORIZATION_FAILED):
            raise LookupError(ErrorCode(found.error_code))
        for p in found.partitions:
            if p.partition_index == partition:
                return self.cluster.running_node(p.leader_id) if p.leader_id >= 0 else None
        raise LookupError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)

    async def coordinator(self, key: str, key_type: int = 0):
        """The running broker coordinating group `key` (key_type 0) or transactional id (1), or
        None while there is none; an answer no retry can change (the caller may not use the
        group) is raised as its REST error, as a Kafka client raises it."""
        answer = await self.send(FIND_COORDINATOR, {"key_type": key_type, "coordinator_keys": [key]})
        found = answer.coordinators[0]
        if found.error_code in MOVED:
            return None
        errors.check(found.error_code, found.error_message)
        return self.cluster.running_node(found.node_id)

    async def to_leader(self, topic: str, partition: int, api_key: int, body: dict, error_of):
        """Send to the partition's leader until its answer is not a MOVED error (`error_of`
        reads the error code from the answer) or RETRY_MS pass; the last answer."""
        return await self._routed(lambda: self.leader(topic, partition), api_key, body, error_of)

    async def to_coordinator(self, group: str, api_key: int, body: dict, error_of):
        return await self._routed(lambda: self.coordinator(group), api_key, body, error_of)

    async def _routed(self, locate, api_key: int, body: dict, error_of):
        with trio.move_on_after(RETRY_MS / 1000):
            while True:
                node = await locate()
                if node is not None:
                    answer = await self.send(api_key, body, node)
                    if error_of(answer) not in MOVED:
                        return answer
                await trio.sleep(BACKOFF_S)
        if node is None:
            raise Unavailable(f"no broker answered for it within {RETRY_MS} ms")
        return answer
