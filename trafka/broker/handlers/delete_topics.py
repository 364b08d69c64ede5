"""DeleteTopics (key 20), versions 1-6.

Behavior:
- Deletion is immediate: the topic's RemoveTopicRecord is written to the metadata log (a failed
  write: KAFKA_STORAGE_ERROR, nothing deleted), the topic is gone at once and its directories are removed (in a worker
  thread, so other clients are served meanwhile) before the response.
- v6 names topics by name or by topic id.
- Kafka's internal topics (__consumer_offsets, __transaction_state, __share_group_state) cannot
  be deleted (INVALID_TOPIC_EXCEPTION); Kafka's controller deletes them, only its kafka-topics
  tool refuses (docs/compatibility.md). Other names starting with "__" are ordinary topics.
- Every group's committed offsets for the topic are deleted with it on every broker, as in Kafka
  (each broker's group coordinator, where the cluster applies the deletion: cluster/nodes.py).
"""

from __future__ import annotations

from trafka.broker.coordinators.runtime.internal_topic import INTERNAL_TOPICS
from trafka.broker.requests import routes
from trafka.broker.security.authorizer import TOPIC, Op, authorize
from trafka.broker.requests.errors import error_code, error_message
from trafka.storage.errors import StorageError, UnknownTopic
from trafka.storage.files import remove_dirs
from trafka.wire.errors import ErrorCode
from trafka.wire.types import ZERO_UUID

def _delete(ctx, name: str | None, topic_id, chosen: dict) -> dict:
    """The topic's answer; a topic that may be deleted is added to `chosen` (name -> its
    answer), all of which `handle` deletes together."""
    broker = ctx.broker
    if name is not None and not authorize(ctx, Op.DELETE, TOPIC, name):  # before existence: nothing leaks
        return {"name": name, "topic_id": topic_id or ZERO_UUID, "error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                "error_message": None}
    try:
        if name is None and topic_id is not None:
            missing = ErrorCode.UNKNOWN_TOPIC_ID
            topic = broker.logs.topic_by_id(topic_id)
        else:
            missing = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            topic = broker.logs.topic(name)
        if topic.name in chosen:  # named twice: gone by the time its second mention is looked at
            raise UnknownTopic(topic.name)
    except UnknownTopic:
        return {"name": name, "topic_id": topic_id or ZERO_UUID, "error_code": missing, "error_message": None}
    if not authorize(ctx, Op.DELETE, TOPIC, topic.name):
        error, message = ErrorCode.TOPIC_AUTHORIZATION_FAILED, None
    elif not broker.config["delete.topic.enable"]:
        error, message = ErrorCode.TOPIC_DELETION_DISABLED, "delete.topic.enable is false"
    elif topic.name in INTERNAL_TOPICS:
        error, message = ErrorCode.INVALID_TOPIC_EXCEPTION, f"internal topic {topic.name} cannot be deleted"
    else:
        error, message = ErrorCode.NONE, None
    answer = {"name": topic.name, "topic_id": topic.topic_id, "error_code": error, "error_message": message}
    if error == ErrorCode.NONE:
        chosen[topic.name] = answer
    return answer


@routes.handles(20, min_version=1, max_version=6)
async def handle(ctx, request):
    if ctx.version >= 6:
        wanted = [(t.name, t.topic_id if t.topic_id.int else None) for t in request.topics]
    else:
        wanted = [(name, None) for name in request.topic_names]
    chosen: dict[str, dict] = {}
    responses = [_delete(ctx, n, i, chosen) for n, i in wanted]
    doomed: list = []
    if chosen:
        broker = ctx.broker
        try:  # one RemoveTopicRecord batch for the request first: a failed write deletes nothing
            doomed = broker.logs.delete_topics(list(chosen), remove=False)
        except (StorageError, OSError) as exc:
            for answer in chosen.values():
                answer.update(error_code=error_code(exc), error_message=error_message(exc))
    if doomed:
        await ctx.broker.storage_threads.run(remove_dirs, doomed)
    return {"throttle_time_ms": 0, "responses": responses}
