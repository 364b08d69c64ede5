"""Metadata (key 3), versions 0-13.

Behavior:
- Every live broker of the cluster is listed (one, or a simulated cluster's:
  trafka/broker/cluster/nodes.py), at its listener of the caller's listener name, and each
  partition's leader, replicas and ISR come from the controller (one broker leads every
  partition, its only replica; it is also the controller).
- Unknown topics are auto-created with num.partitions when auto.create.topics.enable is true
  and the request allows it (v4+ asks explicitly; older versions always allow). Unlike Kafka,
  a freshly created topic is reported ready at once (no LEADER_NOT_AVAILABLE round).
- Topic ids (v10+) are looked up by id when a request names topics by id.
- v13's top-level error code is NONE: Kafka sets it only to ask the client to rebootstrap
  (REBOOTSTRAP_REQUIRED, KIP-1102), which a broker that answers never needs.
- ACLs (docs/security.md): a topic the caller may not DESCRIBE is TOPIC_AUTHORIZATION_FAILED when
  named and left out of an all-topics answer; auto-creation needs CREATE on the cluster or the
  topic. Cluster (v8-10) and topic (v8+) authorized operations are filled when asked (every
  operation without an authorizer, as Kafka).
- Answers are encoded once and cached (per version and requested topics) until the topic set
  or the controller's state changes (LogManager.generation, Controller.generation); a cache hit encodes nothing. Anything that makes the answer
  depend on the caller (ACL filtering) must add the caller to the cache key.
"""

from __future__ import annotations

from trafka.broker.coordinators.runtime.internal_topic import INTERNAL_TOPICS
from trafka.broker.requests import routes
from trafka.broker.cluster.describe import cluster_authorized_operations, controller_id, live_brokers
from trafka.broker.security.authorizer import CLUSTER, TOPIC, Op, authorize, authorized_operations, client_host, principal_of
from trafka.broker.network.sending import EncodedBody
from trafka.broker.requests.topics import get_or_create_topic
from trafka.storage.errors import InvalidTopic, UnknownTopic
from trafka.storage.topic_store import validate_topic_name
from trafka.wire.codegen import Shared
from trafka.wire.errors import ErrorCode
from trafka.wire.types import ZERO_UUID

def topic_metadata(broker, topic, led: dict | None = None) -> dict:
    """A topic's Metadata entry: each partition's leader, replicas and ISR from the controller;
    a partition with no live replica is LEADER_NOT_AVAILABLE with leader -1, as Kafka answers.
    Topics placed by default alike (on one broker: every topic nothing was reassigned in) with
    the same partition count have alike partitions: one Shared list from `led` serves them, and
    is encoded once per version for all of them (codegen.Shared)."""
    controller = broker.cluster.controller
    layout = controller.default_layout(topic.topic_id)
    shared = None if layout is None or led is None else (topic.partitions, layout, controller.generation)
    partitions = None if shared is None else led.get(shared)
    if partitions is None:
        partitions = Shared(_partition_metadata(controller, topic.topic_id, index) for index in range(topic.partitions))
        if shared is not None:
            led[shared] = partitions
    return {
        "error_code": ErrorCode.NONE,
        "name": topic.name,
        "topic_id": topic.topic_id,
        "is_internal": topic.name in INTERNAL_TOPICS,
        "partitions": partitions,
    }


def _partition_metadata(controller, topic_id, index: int) -> dict:
    state = controller.partition(topic_id, index)
    return {
        "error_code": ErrorCode.NONE if state.leader >= 0 else ErrorCode.LEADER_NOT_AVAILABLE,
        "partition_index": index,
        "leader_id": state.leader,
        "leader_epoch": state.leader_epoch,
        "replica_nodes": list(state.replicas),
        "isr_nodes": list(state.isr),
        "offline_replicas": [r for r in state.replicas if r not in controller.alive],
    }


def topic_error(name: str | None, error: ErrorCode, topic_id=ZERO_UUID) -> dict:
    return {"error_code": error, "name": name, "topic_id": topic_id, "partitions": []}


def _requested_topic(ctx, requested, allow_auto_create: bool) -> dict:
    broker = ctx.broker
    topic_id = requested.topic_id
    name = requested.name
    # A lookup by id: Java 4.x sends the name as "" (its default), not null, beside the id.
    if not name and topic_id is not None and topic_id.int != 0:
        try:
            topic = broker.logs.topic_by_id(topic_id)
        except UnknownTopic:
            return topic_error(None, ErrorCode.UNKNOWN_TOPIC_ID, topic_id)
        if not authorize(ctx, Op.DESCRIBE, TOPIC, topic.name):
            return topic_error(None, ErrorCode.TOPIC_AUTHORIZATION_FAILED, topic_id)
        return broker.metadata_cache.topic_entry(broker, topic)
    try:
        validate_topic_name(name or "")
    except InvalidTopic:
        return topic_error(name, ErrorCode.INVALID_TOPIC_EXCEPTION)
    if not authorize(ctx, Op.DESCRIBE, TOPIC, name):
        return topic_error(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    if allow_auto_create and name not in broker.logs.topics and not (
            authorize(ctx, Op.CREATE, CLUSTER, log_denied=False) or authorize(ctx, Op.CREATE, TOPIC, name)):
        return topic_error(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    topic = get_or_create_topic(broker, name, allow_auto_create=allow_auto_create)
    if topic is None:
        return topic_error(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    return broker.metadata_cache.topic_entry(broker, topic)


_CACHE_LIMIT = 512  # distinct (version, topics) answers kept; clients ask a few each


class MetadataCache:
    """Encoded Metadata answers, valid for one generation of the topic set; and each topic's
    entry, valid while the topic keeps its id and partition count, so the first answer after a
    change builds only the changed topics' entries (5,000 partitions' dicts took ~5-20 ms)."""

    def __init__(self):
        self.generation = -1
        self.answers: dict[tuple, EncodedBody] = {}
        self.entries: dict[str, tuple[tuple, dict]] = {}  # name -> ((id, partitions, node), entry)
        self.led: dict[tuple, Shared] = {}  # (partition count, layout, generation) -> partitions (topic_metadata)

    def topic_entry(self, broker, topic) -> dict:
        """The topic's Metadata entry, shared between answers: callers must not change it."""
        key = (topic.topic_id, topic.partitions, broker.node_id, broker.cluster.controller.generation)
        found = self.entries.get(topic.name)
        if found is None or found[0] != key:
            if len(self.led) > _CACHE_LIMIT:
                self.led.clear()
            found = self.entries[topic.name] = (key, topic_metadata(broker, topic, self.led))
        return found[1]

    def _drop_deleted(self, broker) -> None:
        topics = broker.logs.topics
        for name in [n for n in self.entries if n not in topics]:
            del self.entries[name]

    @staticmethod
    def _generation(broker):
        """What the cached answers depend on: the topic set, the controller's placement and
        live brokers."""
        return (broker.logs.generation, broker.cluster.controller.generation)

    def get(self, broker, key: tuple) -> EncodedBody | None:
        if self.generation != self._generation(broker):
            self._new_generation(broker)
            return None
        return self.answers.get(key)

    def put(self, broker, key: tuple, answer: EncodedBody) -> None:
        if self.generation != self._generation(broker):
            self._new_generation(broker)
        if len(self.answers) >= _CACHE_LIMIT:
            self.answers.clear()
        self.answers[key] = answer

    def _new_generation(self, broker) -> None:
        self.answers.clear()
        self._drop_deleted(broker)
        self.generation = self._generation(broker)


def _cache_key(ctx, request) -> tuple:
    topics = request.topics
    named = None if topics is None else tuple((t.name, t.topic_id) for t in topics)
    return (
        ctx.version, named, request.allow_auto_topic_creation,
        request.include_cluster_authorized_operations,
        request.include_topic_authorized_operations,
        ctx.listener.name,  # each listener advertises its own address
        *_caller(ctx),
    )


def _caller(ctx) -> tuple:
    """With ACLs on, the answer depends on who asks and from where (hidden topics, auto-creation)."""
    return () if ctx.broker.authorizer is None else (principal_of(ctx), client_host(ctx))


@routes.handles(3, min_version=0, max_version=13)
async def handle(ctx, request):
    broker = ctx.broker
    cache = broker.metadata_cache
    key = _cache_key(ctx, request)
    answer = cache.get(broker, key)
    if answer is None:
        # Auto-creation inside _answer bumps the generation; the answer is cached after it.
        answer = EncodedBody(routes.ROUTES[3].api, ctx.version, _answer(ctx, request))
        cache.put(broker, key, answer)
    return answer


def _answer(ctx, request) -> dict:
    broker = ctx.broker
    all_topics = request.topics is None or (ctx.version == 0 and not request.topics)
    if all_topics:  # only the topics the caller may describe, without a word about the others
        entry = broker.metadata_cache.topic_entry
        topics = [entry(broker, broker.logs.topic(name)) for name in broker.logs.list_topics()
                  if authorize(ctx, Op.DESCRIBE, TOPIC, name, log_denied=False)]
    else:
        allow = request.allow_auto_topic_creation
        topics = [_requested_topic(ctx, t, allow) for t in request.topics]
    if request.include_topic_authorized_operations:
        topics = [{**topic, "topic_authorized_operations": authorized_operations(ctx, TOPIC, topic["name"])}
                  if topic["error_code"] == ErrorCode.NONE else topic for topic in topics]
    return {
        "throttle_time_ms": 0,
        "brokers": live_brokers(ctx),
        "cluster_id": broker.cluster_id,
        "controller_id": controller_id(broker),
        "topics": topics,
        "cluster_authorized_operations": cluster_authorized_operations(
            ctx, request.include_cluster_authorized_operations),
    }
