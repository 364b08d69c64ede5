"""TxnOffsetCommit (key 28), versions 0-5.

Behavior:
- The offsets are written to `__consumer_offsets` at once, as a transactional batch of the
  producer, and become visible to OffsetFetch when the transaction commits (dropped if it
  aborts); meanwhile OffsetFetch with require_stable answers UNSTABLE_OFFSET_COMMIT for them.
- The group's partition must have been added with AddOffsetsToTxn and the producer must hold
  the current epoch: else INVALID_TXN_STATE / PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before
  v2 has no meaning here: Kafka answers PRODUCER_FENCED for every version).
- v3 carries the member's generation, member id and group instance id, checked as an
  OffsetCommit's are when given.
- v5 marks a transaction version 2 producer (KIP-890 part 2), which sends no AddOffsetsToTxn:
  the group's `__consumer_offsets` partition is added to the transaction here (starting one if
  none is open). Below v5 it must have been added with AddOffsetsToTxn (else INVALID_TXN_STATE).
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import GROUP, TOPIC, TRANSACTIONAL_ID, Op, authorize, denied
from trafka.broker.coordinators.group.offsets import OffsetCommit
from trafka.broker.coordinators.group.offsets_topic import OFFSETS_TOPIC
from trafka.wire.errors import ErrorCode

FIRST_IMPLICIT_ADD_VERSION = 5


def _respond(request, errors) -> dict:
    errors = iter(errors)
    return {
        "throttle_time_ms": 0,
        "topics": [
            {"name": t.name, "partitions": [{"partition_index": p.partition_index, "error_code": next(errors)} for p in t.partitions]}
            for t in request.topics
        ],
    }


@routes.handles(28, min_version=0, max_version=5)
async def handle(ctx, request):
    if not authorize(ctx, Op.WRITE, TRANSACTIONAL_ID, request.transactional_id):
        return denied(ctx, request, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    if not authorize(ctx, Op.READ, GROUP, request.group_id):
        return denied(ctx, request, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    refused = {t.name for t in request.topics if not authorize(ctx, Op.READ, TOPIC, t.name)}
    if refused:
        return _respond(request, (ErrorCode.TOPIC_AUTHORIZATION_FAILED if t.name in refused else ErrorCode.OPERATION_NOT_ATTEMPTED
                                  for t in request.topics for p in t.partitions))
    commits = [
        OffsetCommit(t.name, p.partition_index, p.committed_offset, p.committed_leader_epoch, p.committed_metadata)
        for t in request.topics
        for p in t.partitions
    ]
    groups = ctx.broker.group_coordinator
    partition = groups.offsets_topic.partition_for(request.group_id)
    coordinator = ctx.broker.txn_coordinator_for(request.transactional_id)
    if coordinator is None:  # in a simulated cluster, its partition has no leader just now
        return _respond(request, [ErrorCode.COORDINATOR_NOT_AVAILABLE] * len(commits))
    error = coordinator.verify_produce(
        request.transactional_id, request.producer_id, request.producer_epoch, OFFSETS_TOPIC, partition,
        add=ctx.version >= FIRST_IMPLICIT_ADD_VERSION,
    )
    if error == ErrorCode.INVALID_PRODUCER_EPOCH:
        error = ErrorCode.PRODUCER_FENCED
    if error:
        return _respond(request, [error] * len(commits))
    return _respond(request, groups.txn_commit_offsets(
        request.group_id, request.producer_id, request.producer_epoch, request.generation_id,
        request.member_id, request.group_instance_id, commits,
    ))
