"""What AlterConfigs and IncrementalAlterConfigs share: per-resource checks and the answer."""

from __future__ import annotations

from typing import Callable

from trafka.broker.metadata.topic_configs import ResourceType
from trafka.broker.security.authorizer import CLUSTER, GROUP, TOPIC, authorize
from trafka.storage.config import validate_topic_config
from trafka.broker.requests.errors import error_code, error_message
from trafka.storage.errors import StorageError, UnknownTopic
from trafka.wire.errors import ErrorCode

def response(resource, error: ErrorCode = ErrorCode.NONE, message: str | None = None) -> dict:
    return {
        "error_code": error,
        "error_message": message,
        "resource_type": resource.resource_type,
        "resource_name": resource.resource_name,
    }


def config_authorization_error(ctx, resource, operation) -> ErrorCode | None:
    """DESCRIBE_CONFIGS/ALTER_CONFIGS on the topic, or on the cluster for broker resources (Kafka's rule)."""
    if resource.resource_type == ResourceType.TOPIC:
        if not authorize(ctx, operation, TOPIC, resource.resource_name):
            return ErrorCode.TOPIC_AUTHORIZATION_FAILED
    elif resource.resource_type == ResourceType.GROUP:
        if not authorize(ctx, operation, GROUP, resource.resource_name):
            return ErrorCode.GROUP_AUTHORIZATION_FAILED
    elif not authorize(ctx, operation, CLUSTER):
        return ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    return None


def alter_resource(broker, resource, validate_only: bool, new_overrides: Callable[[dict], dict]) -> dict:
    """Apply `new_overrides(current) -> overrides` to a topic, or refuse the resource."""
    if resource.resource_type == ResourceType.BROKER:
        return _alter_broker(broker, resource, validate_only, new_overrides)
    if resource.resource_type == ResourceType.GROUP:
        return _alter_group(broker, resource, validate_only, new_overrides)
    if resource.resource_type == ResourceType.CLIENT_METRICS:
        return _alter_client_metrics(broker, resource, validate_only, new_overrides)
    if resource.resource_type != ResourceType.TOPIC:
        return response(resource, ErrorCode.INVALID_REQUEST, f"resource type {resource.resource_type} is not supported")
    try:
        topic = broker.logs.topic(resource.resource_name)
        overrides = new_overrides(dict(topic.configs))
        if validate_only:
            validate_topic_config(overrides)
        else:
            broker.logs.set_topic_config(topic.name, overrides)
    except UnknownTopic:
        return response(resource, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {resource.resource_name} does not exist")
    except (StorageError, OSError) as exc:
        return response(resource, error_code(exc), error_message(exc))
    return response(resource)


def _alter_broker(broker, resource, validate_only: bool, new_overrides: Callable[[dict], dict]) -> dict:
    """Dynamic broker configs (dynamic_configs.py): this broker's (its node id) or the cluster
    default (""); another node id is INVALID_REQUEST, as on a one-node Kafka cluster."""
    dynamic = broker.dynamic_configs
    entity = dynamic.entity(resource.resource_name)
    if entity is None:
        return response(resource, ErrorCode.INVALID_REQUEST, f"broker {resource.resource_name!r} is not in this cluster "
                        f"(this broker is node {broker.node_id})")
    try:
        dynamic.alter(entity, new_overrides(dynamic.overrides(entity)), validate_only)
    except (StorageError, OSError) as exc:
        return response(resource, error_code(exc), error_message(exc))
    return response(resource)


def _alter_group(broker, resource, validate_only: bool, new_overrides: Callable[[dict], dict]) -> dict:
    """A group's configs (group_configs.py): the group need not exist yet, as in Kafka."""
    if not resource.resource_name:
        return response(resource, ErrorCode.INVALID_REQUEST, "a group config resource needs the group id")
    try:
        broker.group_configs.alter(resource.resource_name, new_overrides(broker.group_configs.overrides(resource.resource_name)),
                                   validate_only)
    except (StorageError, OSError) as exc:
        return response(resource, error_code(exc), error_message(exc))
    return response(resource)


def _alter_client_metrics(broker, resource, validate_only: bool, new_overrides: Callable[[dict], dict]) -> dict:
    """A client-metrics subscription (telemetry.py, KIP-714); all its configs deleted deletes it."""
    if not resource.resource_name:
        return response(resource, ErrorCode.INVALID_REQUEST, "a client-metrics resource needs a subscription name")
    manager = broker.client_metrics
    try:
        manager.alter(resource.resource_name, new_overrides(manager.overrides(resource.resource_name)), validate_only)
    except (StorageError, OSError) as exc:
        return response(resource, error_code(exc), error_message(exc))
    return response(resource)
