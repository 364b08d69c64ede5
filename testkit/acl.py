"""A broker with ACLs on, and the logins the ACL scenario tests use.

Users (PLAIN, from the JAAS line): `admin` is a super user, `alice` and `bob` are not. The
PLAINTEXT listener's principal is User:ANONYMOUS.
"""

from __future__ import annotations

import uuid

from testkit.security import Auth

from trafka.testing import TrafkaBroker

STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
USERS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}
JAAS = ("org.apache.kafka.common.security.plain.PlainLoginModule required "
        + " ".join(f'user_{u}="{p}"' for u, p in USERS.items()) + ";")


def acl_config(**more) -> dict:
    return {
        "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        "sasl.enabled.mechanisms": "PLAIN",
        "sasl.jaas.config": JAAS,
        "authorizer.class.name": STANDARD_AUTHORIZER,
        "super.users": "User:admin",
        **more,
    }


def acl_broker(data_dir, **more) -> TrafkaBroker:
    return TrafkaBroker(data_dir=data_dir, config=acl_config(**more))


def login(user: str) -> Auth:
    return Auth("SASL_PLAINTEXT", "PLAIN", user, USERS[user])


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


CONFLUENT_NAMES = {"CLUSTER": "BROKER"}  # confluent-kafka's name of Kafka's CLUSTER resource type


def confluent_admin(broker: TrafkaBroker, user: str = "admin"):
    from confluent_kafka.admin import AdminClient
    from testkit.security import confluent_config

    return AdminClient({"bootstrap.servers": broker.bootstrap("SASL_PLAINTEXT"), **confluent_config(login(user))})


def allow(admin, principal: str, resource: str, name: str, operation: str, *, pattern: str = "LITERAL",
          host: str = "*", permission: str = "ALLOW") -> None:
    """Create one ACL with confluent-kafka's AdminClient (resource/operation by Kafka's names)."""
    from confluent_kafka.admin import (AclBinding, AclOperation, AclPermissionType, ResourcePatternType,
                                       ResourceType)

    binding = AclBinding(ResourceType[CONFLUENT_NAMES.get(resource, resource)], name, ResourcePatternType[pattern], principal, host,
                         AclOperation[operation], AclPermissionType[permission])
    for future in admin.create_acls([binding]).values():
        future.result(30)
