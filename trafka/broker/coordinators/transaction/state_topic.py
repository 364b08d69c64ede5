"""`__transaction_state`: where the transaction coordinator writes each transactional id's
metadata, replayed at start-up.

Created at start-up if missing as an `InternalTopic` (trafka/broker/coordinators/runtime): compacted,
transaction.state.log.num.partitions partitions (Kafka: 50) of
transaction.state.log.segment.bytes segments. A transactional id lives in partition
abs(hashCode(id)) % partitions, as in Kafka, and each partition is one shard of the
transaction coordinator's runtime.
"""

TRANSACTION_STATE_TOPIC = "__transaction_state"


def topic_configs(segment_bytes: int) -> dict[str, str]:
    return {"cleanup.policy": "compact", "segment.bytes": str(segment_bytes)}
