"""`__consumer_offsets`: where committed offsets and group metadata are written and replayed.

Created at startup if missing (compacted, offsets.topic.num.partitions partitions, Kafka's
100 MiB segments) as an `InternalTopic` (trafka/broker/coordinators/runtime): a group lives in one
partition, abs(hashCode(group)) % partitions, so all of a group's records are in order in one
log, and each partition is one `GroupShard` of the coordinator runtime.
"""

OFFSETS_TOPIC = "__consumer_offsets"
TOPIC_CONFIGS = {"cleanup.policy": "compact", "segment.bytes": str(100 * 1024 * 1024)}
