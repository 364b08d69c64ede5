"""Field groups several messages share, declared once. Each message still states its own
version ranges; a group is a function, so every message gets Field objects of its own."""

from __future__ import annotations

from trafka.wire.schema import Array, Field
from trafka.wire.types import BOOL, INT8, INT16, INT32, INT64, STRING


def by_topic(partition_fields: list[Field], versions: str = "0+", **kwargs) -> Field:
    """`topics`: each topic's `name` and its `partitions`, an array of `partition_fields` (the
    shape of most partition-level requests and responses)."""
    return Field("topics", Array([Field("name", STRING), Field("partitions", Array(partition_fields))]), versions, **kwargs)


def partition_errors() -> list[Field]:
    """A partition's answer when all there is to say is an error code."""
    return [Field("partition_index", INT32), Field("error_code", INT16)]


def committed_offset(leader_epoch_versions: str) -> list[Field]:
    """One partition's offset to commit, as OffsetCommit and TxnOffsetCommit carry it (the
    committed leader epoch came in OffsetCommit v6 and TxnOffsetCommit v2)."""
    return [
        Field("partition_index", INT32),
        Field("committed_offset", INT64),
        Field("committed_leader_epoch", INT32, leader_epoch_versions, default=-1),
        Field("committed_metadata", STRING, nullable="0+"),
    ]


def config_resource_result() -> list[Field]:
    """A config resource's outcome, as AlterConfigs, IncrementalAlterConfigs and DescribeConfigs
    answer it (DescribeConfigs adds the configs after it)."""
    return [
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
        Field("resource_type", INT8),
        Field("resource_name", STRING),
    ]


def config_changes(config_fields: list[Field]) -> list[Field]:
    """AlterConfigs' and IncrementalAlterConfigs' request: each resource with its config changes
    (`config_fields` per config), then validate_only."""
    return [
        Field("resources", Array([
            Field("resource_type", INT8),
            Field("resource_name", STRING),
            Field("configs", Array(config_fields)),
        ])),
        Field("validate_only", BOOL),
    ]


def leader_hint(versions: str, *, tag: int) -> Field:
    """`current_leader`, the tagged leader hint of a NOT_LEADER_OR_FOLLOWER partition answer
    (KIP-951 in Produce, the v12+ tagged field in Fetch)."""
    return Field(
        "current_leader",
        [Field("leader_id", INT32, default=-1), Field("leader_epoch", INT32, default=-1)],
        versions,
        tag=tag,
        tagged=versions,
    )


def node_endpoints(versions: str) -> Field:
    """`node_endpoints`: the leaders named by leader hints (KIP-951), Produce's and Fetch's tag 0."""
    endpoint = [
        Field("node_id", INT32),
        Field("host", STRING),
        Field("port", INT32),
        Field("rack", STRING, nullable="0+", default=None),
    ]
    return Field("node_endpoints", Array(endpoint), versions, tag=0, tagged=versions)
