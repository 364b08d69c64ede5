"""OffsetForLeaderEpoch (key 23), versions 2-4.

Behavior:
- The leader epoch is the controller's: 0 from when the partition was made (on one broker it
  stays there), one more at each election. As Kafka's leader epoch cache answers, the current
  epoch ends at the log end offset (the next offset to be written); an older epoch is answered
  from the batches' leader epochs, the largest epoch at or below it and the first offset of the
  next one; a later epoch or -1 is unknown (leader epoch -1, end offset -1). Consumers ask after
  a leader change to detect truncation.
- current_leader_epoch above the partition's is UNKNOWN_LEADER_EPOCH (the client knows a newer
  leader than this broker), below it FENCED_LEADER_EPOCH; -1 skips the check. As in Kafka's
  Partition, the epoch is checked before leadership. Absent topics or partitions are
  UNKNOWN_TOPIC_OR_PARTITION.
- replica_id (v3+: -1 consumer, -2 debug consumer, a broker id for followers) changes nothing:
  the high watermark is the log end offset.
- As in Kafka, CLUSTER_ACTION on the cluster allows every topic; otherwise a topic needs
  DESCRIBE (else TOPIC_AUTHORIZATION_FAILED for its partitions).
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import CLUSTER, TOPIC, Op, authorize
from trafka.broker.requests.topics import current_leader_epoch, find_log, leader_epoch_error, led_elsewhere
from trafka.storage.log_replica import epoch_end_offset
from trafka.wire.errors import ErrorCode

UNDEFINED = -1


def _partition(broker, topic: str, p) -> dict:
    answer = {"partition": p.partition, "error_code": ErrorCode.NONE, "leader_epoch": UNDEFINED, "end_offset": UNDEFINED}
    log_ = find_log(broker, topic, p.partition)
    if log_ is None:
        return answer | {"error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    fenced = leader_epoch_error(broker, topic, p.partition, p.current_leader_epoch)
    if fenced is not None:
        return answer | {"error_code": fenced}
    if led_elsewhere(broker, topic, p.partition):
        return answer | {"error_code": ErrorCode.NOT_LEADER_OR_FOLLOWER}
    epoch, end = epoch_end_offset(log_, p.leader_epoch, current_leader_epoch(broker, topic, p.partition))
    return answer | {"leader_epoch": epoch, "end_offset": end}


def _refused(index: int) -> dict:
    return {"partition": index, "error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED, "leader_epoch": UNDEFINED, "end_offset": UNDEFINED}


@routes.handles(23, min_version=2, max_version=4)
async def handle(ctx, request):
    everything = authorize(ctx, Op.CLUSTER_ACTION, CLUSTER, log_denied=False)  # a follower; clients are not
    topics = []
    for t in request.topics:
        if everything or authorize(ctx, Op.DESCRIBE, TOPIC, t.topic):
            partitions = [_partition(ctx.broker, t.topic, p) for p in t.partitions]
        else:
            partitions = [_refused(p.partition) for p in t.partitions]
        topics.append({"topic": t.topic, "partitions": partitions})
    return {"throttle_time_ms": 0, "topics": topics}
