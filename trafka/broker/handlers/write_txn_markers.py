"""WriteTxnMarkers (key 27), versions 1-2.

Behavior:
- Writes each COMMIT/ABORT marker to the named partitions, as a partition leader does for its
  coordinator. On one broker the transaction coordinator writes its own markers directly;
  this API is what admin tools use to abort a hanging transaction (`kafka-transactions.sh
  abort`, kafka-python's `abort_transaction`): coordinator epoch -1, the producer's id and
  epoch as DescribeProducers showed them.
- A marker older than the producer's epoch is INVALID_PRODUCER_EPOCH; unknown partitions are
  UNKNOWN_TOPIC_OR_PARTITION; `__consumer_offsets` markers go through the group coordinator,
  which applies or drops the producer's pending transactional offsets.
- v2's transaction_version (KIP-1228) is read and not needed: the marker is written and its
  epoch checked the same way for every transaction version.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import CLUSTER, Op, authorize, denied
from trafka.broker.coordinators.group.offsets_topic import OFFSETS_TOPIC
from trafka.broker.requests.errors import error_code
from trafka.broker.requests.topics import find_log, led_elsewhere
from trafka.storage.errors import StorageError
from trafka.wire.errors import ErrorCode


def _write(broker, marker, topic: str, partition: int) -> ErrorCode:
    if led_elsewhere(broker, topic, partition):
        return ErrorCode.NOT_LEADER_OR_FOLLOWER
    log_ = find_log(broker, topic, partition)
    if log_ is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    try:
        if topic == OFFSETS_TOPIC:
            broker.group_coordinator.complete_txn(
                partition, marker.producer_id, marker.producer_epoch, marker.transaction_result, marker.coordinator_epoch
            )
        else:
            log_.append_control(marker.producer_id, marker.producer_epoch, marker.transaction_result, marker.coordinator_epoch)
    except StorageError as exc:
        return error_code(exc)
    return ErrorCode.NONE


@routes.handles(27, min_version=1, max_version=2)
async def handle(ctx, request):
    if not authorize(ctx, Op.CLUSTER_ACTION, CLUSTER):
        return denied(ctx, request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    broker = ctx.broker
    results = [
        {
            "producer_id": marker.producer_id,
            "topics": [
                {
                    "name": t.name,
                    "partitions": [
                        {"partition_index": p, "error_code": _write(broker, marker, t.name, p)} for p in t.partition_indexes
                    ],
                }
                for t in marker.topics
            ],
        }
        for marker in request.markers
    ]
    broker.notify_data_arrived()  # markers move last stable offsets
    return {"markers": results}
