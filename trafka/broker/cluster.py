"""What this one-node KRaft cluster says about itself where several APIs ask the same question."""

from __future__ import annotations

from trafka.broker.security.authorizer import CLUSTER, Op, authorize, authorized_operations

OPERATIONS_NOT_ASKED = -2147483648


def cluster_authorized_operations(ctx, asked: bool) -> int:
    """Metadata's and DescribeCluster's bitfield of cluster operations (AclOperation codes) the
    caller may do: every one without an authorizer; none unless it may DESCRIBE the cluster, as
    Kafka's AuthHelper answers."""
    if not asked:
        return OPERATIONS_NOT_ASKED
    return authorized_operations(ctx, CLUSTER) if authorize(ctx, Op.DESCRIBE, CLUSTER, log_denied=False) else 0
