"""What this one-node KRaft cluster says about itself where several APIs ask the same question."""

from __future__ import annotations

# Kafka's cluster operations (AclOperation codes): ALTER, CREATE, DESCRIBE, CLUSTER_ACTION,
# DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE. Without an authorizer Kafka grants them
# all; trafka enforces no ACLs, so Metadata and DescribeCluster answer the same bitfield.
CLUSTER_OPERATIONS = sum(1 << op for op in (4, 7, 8, 9, 10, 11, 12))
OPERATIONS_NOT_ASKED = -2147483648


def cluster_authorized_operations(asked: bool) -> int:
    return CLUSTER_OPERATIONS if asked else OPERATIONS_NOT_ASKED
