"""ACLs as Kafka's StandardAuthorizer keeps and applies them.

An ACL binding is a resource pattern (type, name, LITERAL or PREFIXED) and an entry (principal,
host, operation, ALLOW or DENY). For one action — a principal from a host wants an operation on
a named resource — the authorizer looks at the ACLs whose pattern covers the name (the literal
name, the literal `*`, every prefix) and whose principal (or `User:*`) and host (or `*`, or a
CIDR range holding it, KIP-1276) match:
a matching DENY wins, else a matching ALLOW allows, else it is denied — unless no ACL at all
covers the resource and `allow.everyone.if.no.acl.found` is true. ALLOW on READ, WRITE, DELETE
or ALTER implies DESCRIBE, ALLOW on ALTER_CONFIGS implies DESCRIBE_CONFIGS; ALL matches every
operation. `super.users` are allowed everything.

The bindings live where Kafka keeps them: an AccessControlEntryRecord (with a random id) per
binding created and a RemoveAccessControlEntryRecord per binding deleted, a request's in one
batch of the metadata log (trafka/broker/metadata/image.py), fsynced before the answer and
applied only then. Handlers ask through `authorize(ctx, ...)`, which
allows everything when no authorizer is configured (as Kafka does).
"""

from __future__ import annotations

import ipaddress
import logging
import uuid
from functools import lru_cache
from dataclasses import asdict, dataclass
from enum import IntEnum

from trafka.broker.metadata.image import ClusterMetadata
from trafka.broker.metadata.records import MetadataRecord

log = logging.getLogger("trafka.broker")

CLUSTER_NAME = "kafka-cluster"
WILDCARD = "*"
WILDCARD_PRINCIPAL = "User:*"
ANONYMOUS = "User:ANONYMOUS"
AUTHORIZER_CLASSES = ("org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                      "kafka.security.authorizer.AclAuthorizer")


class ResourceType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class PermissionType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


TOPIC = ResourceType.TOPIC
GROUP = ResourceType.GROUP
CLUSTER = ResourceType.CLUSTER
TRANSACTIONAL_ID = ResourceType.TRANSACTIONAL_ID
DELEGATION_TOKEN = ResourceType.DELEGATION_TOKEN
USER = ResourceType.USER
Op = AclOperation

# What an ALLOW on an operation also grants (Kafka's implied operations).
_IMPLIED_BY = {
    Op.DESCRIBE: frozenset({Op.DESCRIBE, Op.READ, Op.WRITE, Op.DELETE, Op.ALTER}),
    Op.DESCRIBE_CONFIGS: frozenset({Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS}),
}

# The operations each resource type has, for the authorized-operations bitfields.
OPERATIONS = {
    TOPIC: (Op.READ, Op.WRITE, Op.CREATE, Op.DESCRIBE, Op.DELETE, Op.ALTER, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS),
    GROUP: (Op.READ, Op.DESCRIBE, Op.DELETE, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS),  # configs: KIP-848 group configs
    CLUSTER: (Op.CREATE, Op.CLUSTER_ACTION, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS, Op.IDEMPOTENT_WRITE, Op.ALTER,
              Op.DESCRIBE),
    TRANSACTIONAL_ID: (Op.DESCRIBE, Op.WRITE),
}


class InvalidAcl(ValueError):
    """A binding or filter Kafka refuses with INVALID_REQUEST."""


@dataclass(frozen=True)
class AclBinding:
    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: AclOperation
    permission_type: PermissionType

    @classmethod
    def from_wire(cls, c) -> "AclBinding":
        """From a CreateAcls creation; raises InvalidAcl with Kafka's messages."""
        try:
            binding = cls(ResourceType(c.resource_type), c.resource_name, PatternType(c.resource_pattern_type),
                          c.principal, c.host, AclOperation(c.operation), PermissionType(c.permission_type))
        except ValueError as exc:
            raise InvalidAcl(f"Invalid ACL: {exc}") from None
        binding.validate()
        return binding

    def validate(self) -> None:
        if self.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
            raise InvalidAcl(f"Invalid resourceType {self.resource_type.name}")
        if self.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
            raise InvalidAcl(f"Invalid patternType {self.pattern_type.name}")
        if self.operation in (Op.UNKNOWN, Op.ANY):
            raise InvalidAcl(f"Invalid operation {self.operation.name}")
        if self.permission_type not in (PermissionType.ALLOW, PermissionType.DENY):
            raise InvalidAcl(f"Invalid permissionType {self.permission_type.name}")
        if self.resource_type == CLUSTER and self.resource_name != CLUSTER_NAME:
            raise InvalidAcl(f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}")
        if not self.resource_name:
            raise InvalidAcl("Invalid empty resource name")
        if ":" not in (self.principal or ""):
            raise InvalidAcl(f"Could not parse principal from `{self.principal}` (no colon is present separating "
                             "the principal type from the principal name)")
        if not self.host:
            raise InvalidAcl("Invalid empty host (use * for every host)")
        if "/" in self.host and _network(self.host) is None:
            raise InvalidAcl(f"Invalid CIDR pattern '{self.host}' in host")

    def applies_to(self, principal: str, host: str) -> bool:
        """The caller or User:*, from the host, `*`, or a CIDR range holding it (KIP-1276)."""
        if self.principal not in (principal, WILDCARD_PRINCIPAL):
            return False
        if self.host in (host, WILDCARD):
            return True
        return "/" in self.host and _in_network(host, self.host)

    def covers(self, resource_type: ResourceType, name: str) -> bool:
        if resource_type != self.resource_type:
            return False
        if self.pattern_type == PatternType.PREFIXED:
            return name.startswith(self.resource_name)
        return self.resource_name in (name, WILDCARD)

    def grants(self, operation: AclOperation) -> bool:
        """Whether this ACL's operation applies to `operation` (ALL, equal, or implied by an ALLOW)."""
        if self.operation == Op.ALL or self.operation == operation:
            return True
        return self.permission_type == PermissionType.ALLOW and self.operation in _IMPLIED_BY.get(operation, ())

    def to_json(self) -> dict:
        return {k: (v.name if isinstance(v, IntEnum) else v) for k, v in asdict(self).items()}

    @classmethod
    def from_json(cls, data: dict) -> "AclBinding":
        return cls(ResourceType[data["resource_type"]], data["resource_name"], PatternType[data["pattern_type"]],
                   data["principal"], data["host"], AclOperation[data["operation"]],
                   PermissionType[data["permission_type"]])


@dataclass(frozen=True)
class AclFilter:
    """A DescribeAcls/DeleteAcls filter: None names and ANY enums match everything; the MATCH
    pattern type matches every pattern that covers the name (literal, `*`, prefixes)."""

    resource_type: ResourceType
    resource_name: str | None
    pattern_type: PatternType
    principal: str | None
    host: str | None
    operation: AclOperation
    permission_type: PermissionType

    @classmethod
    def from_wire(cls, f) -> "AclFilter":
        try:
            acl_filter = cls(ResourceType(f.resource_type_filter), f.resource_name_filter,
                             PatternType(f.pattern_type_filter), f.principal_filter, f.host_filter,
                             AclOperation(f.operation), PermissionType(f.permission_type))
        except ValueError as exc:
            raise InvalidAcl(f"Invalid ACL filter: {exc}") from None
        if ResourceType.UNKNOWN == acl_filter.resource_type or PatternType.UNKNOWN == acl_filter.pattern_type:
            raise InvalidAcl("Unknown patternFilter.")
        if Op.UNKNOWN == acl_filter.operation or PermissionType.UNKNOWN == acl_filter.permission_type:
            raise InvalidAcl("Unknown entryFilter.")
        return acl_filter

    def matches(self, acl: AclBinding) -> bool:
        return self._matches_pattern(acl) and self._matches_entry(acl)

    def _matches_pattern(self, acl: AclBinding) -> bool:
        if self.resource_type != ResourceType.ANY and self.resource_type != acl.resource_type:
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH) and self.pattern_type != acl.pattern_type:
            return False
        if self.resource_name is None:
            return True
        if self.pattern_type in (PatternType.ANY, acl.pattern_type):
            return self.resource_name == acl.resource_name
        if acl.pattern_type == PatternType.PREFIXED:  # MATCH
            return self.resource_name.startswith(acl.resource_name)
        return acl.resource_name in (self.resource_name, WILDCARD)

    def _matches_entry(self, acl: AclBinding) -> bool:
        return ((self.principal is None or self.principal == acl.principal)
                and (self.host is None or self.host == acl.host)
                and (self.operation == Op.ANY or self.operation == acl.operation)
                and (self.permission_type == PermissionType.ANY or self.permission_type == acl.permission_type))


class Authorizer:
    """The broker's ACLs, their file, and the one question handlers ask."""

    def __init__(self, config, metadata=None):
        """`metadata`: the broker's ClusterMetadata (ClusterMetadata.of for the other forms)."""
        self.super_users = frozenset(u.strip() for u in (config["super.users"] or "").split(";") if u.strip())
        self.allow_if_no_acl = config["allow.everyone.if.no.acl.found"]
        self.acls: list[AclBinding] = []
        self._ids: dict[AclBinding, str] = {}  # each binding's record id
        self.metadata = ClusterMetadata.of(metadata)
        self.metadata.register(["AccessControlEntryRecord", "RemoveAccessControlEntryRecord"], self._replay)

    def _replay(self, record: MetadataRecord) -> None:
        acl_id = record.fields["id"]
        if record.removal:
            gone = [b for b, i in self._ids.items() if i == acl_id]
            for binding in gone:
                del self._ids[binding]
            self.acls = [acl for acl in self.acls if acl not in gone]
            return
        try:
            binding = AclBinding.from_json(record.fields)
        except (KeyError, ValueError) as exc:
            raise ValueError(f"unreadable ACL record {acl_id} in the metadata log: {exc}") from None
        if binding not in self._ids:
            self.acls.append(binding)
        self._ids[binding] = acl_id

    # -- the question ------------------------------------------------------------------------
    def authorize(self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType,
                  name: str) -> bool:
        if principal in self.super_users:
            return True
        allowed = covered = False
        for acl in self.acls:
            if not acl.covers(resource_type, name):
                continue
            covered = True
            if not acl.applies_to(principal, host) or not acl.grants(operation):
                continue
            if acl.permission_type == PermissionType.DENY:
                return False
            allowed = True
        return allowed or (not covered and self.allow_if_no_acl)

    def authorize_any(self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType) -> bool:
        """Whether `operation` is allowed on some resource of the type (Kafka's
        authorizeByResourceType, which idempotent producers' InitProducerId asks for TOPIC WRITE):
        allowed for a name no ACL names (super users, `*`, allow.everyone.if.no.acl.found), or
        some ALLOW pattern of the caller's that no DENY of the same literal name or of a prefix of
        it dominates; a DENY of the literal `*` denies outright."""
        if self.authorize(principal, host, operation, resource_type, "hardcode"):
            return True
        deny_literal, deny_prefixes, allows = set(), set(), []
        for acl in self.acls:
            if (acl.resource_type != resource_type or not acl.applies_to(principal, host)
                    or acl.operation not in (operation, Op.ALL)):
                continue
            if acl.permission_type == PermissionType.DENY:
                if acl.pattern_type == PatternType.LITERAL and acl.resource_name == WILDCARD:
                    return False
                (deny_literal if acl.pattern_type == PatternType.LITERAL else deny_prefixes).add(acl.resource_name)
            elif acl.pattern_type == PatternType.LITERAL and acl.resource_name == WILDCARD:
                return True
            else:
                allows.append(acl)
        for acl in allows:
            if acl.pattern_type == PatternType.LITERAL and acl.resource_name in deny_literal:
                continue
            if not any(acl.resource_name[:n] in deny_prefixes for n in range(1, len(acl.resource_name) + 1)):
                return True
        return False

    def authorized_operations(self, principal: str, host: str, resource_type: ResourceType, name: str) -> int:
        """Kafka's authorized-operations bitfield: bit n set when operation n is allowed."""
        bits = 0
        for operation in OPERATIONS.get(resource_type, ()):
            if self.authorize(principal, host, operation, resource_type, name):
                bits |= 1 << operation
        return bits

    # -- CreateAcls / DescribeAcls / DeleteAcls -------------------------------------------------
    def create(self, bindings: list[AclBinding]) -> None:
        known = set(self.acls)
        added = [b for b in dict.fromkeys(bindings) if b not in known]
        if added:
            self.metadata.write([MetadataRecord("AccessControlEntryRecord", {"id": str(uuid.uuid4()), **b.to_json()})
                                 for b in added])
            log.info("created ACLs: %s", "; ".join(map(_describe, added)))

    def describe(self, acl_filter: AclFilter) -> list[AclBinding]:
        return [acl for acl in self.acls if acl_filter.matches(acl)]

    def delete(self, filters: list[AclFilter]) -> list[list[AclBinding]]:
        """The bindings each filter removed (a binding matched by two filters is listed under both)."""
        removed = [[acl for acl in self.acls if f.matches(acl)] for f in filters]
        gone = {acl for acls in removed for acl in acls}
        if gone:
            self.metadata.write([MetadataRecord("RemoveAccessControlEntryRecord", {"id": self._ids[acl]})
                                 for acl in self.acls if acl in gone])
            log.info("deleted ACLs: %s", "; ".join(map(_describe, gone)))
        return removed


@lru_cache(maxsize=256)
def _network(text: str):
    try:
        return ipaddress.ip_network(text, strict=False)
    except ValueError:
        return None


def _in_network(host: str, cidr: str) -> bool:
    network = _network(cidr)
    try:
        return network is not None and ipaddress.ip_address(host) in network
    except ValueError:
        return False


def _describe(acl: AclBinding) -> str:
    return (f"{acl.permission_type.name} {acl.principal} from {acl.host} {acl.operation.name} on "
            f"{acl.resource_type.name}:{acl.pattern_type.name}:{acl.resource_name}")


def make_authorizer(config, metadata) -> Authorizer | None:
    """The authorizer over the ACLs in `metadata` (ClusterMetadata), or None without
    authorizer.class.name (the ACLs stay in the metadata log either way)."""
    return Authorizer(config, metadata) if config["authorizer.class.name"] else None


def principal_of(ctx) -> str:
    """The request's principal; a request without a connection session (the console's own
    admin actions) is User:ANONYMOUS, so ACLs bind it like any other client."""
    return ctx.session.principal if ctx.session is not None else ANONYMOUS


def client_host(ctx) -> str:
    """The client's address without its port (`peer` is host:port)."""
    return ctx.peer.rpartition(":")[0] or ctx.peer


def authorize(ctx, operation: AclOperation, resource_type: ResourceType, name: str = CLUSTER_NAME, *,
              log_denied: bool = True) -> bool:
    """The one check handlers make: may this request's principal do `operation` on the resource?
    True when no authorizer is configured. A denial is logged unless the check only filters
    (Metadata hiding topics, ListGroups hiding groups), as Kafka's logIfDenied."""
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return True
    allowed = authorizer.authorize(principal_of(ctx), client_host(ctx), operation, resource_type, name)
    if not allowed and log_denied:
        log.info("denied %s %s on %s:%s to %s from %s (client %r)", _api_name(ctx), operation.name,
                 resource_type.name, name, principal_of(ctx), client_host(ctx), ctx.client_id)
    return allowed


def authorize_any(ctx, operation: AclOperation, resource_type: ResourceType) -> bool:
    authorizer = ctx.broker.authorizer
    return authorizer is None or authorizer.authorize_any(principal_of(ctx), client_host(ctx), operation, resource_type)


def authorized_operations(ctx, resource_type: ResourceType, name: str = CLUSTER_NAME) -> int:
    """The authorized-operations bitfield for a resource (every operation without an authorizer)."""
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return sum(1 << op for op in OPERATIONS[resource_type])
    return authorizer.authorized_operations(principal_of(ctx), client_host(ctx), resource_type, name)


def denied(ctx, request, error: int) -> dict:
    """The whole request answered with one authorization error, in every error_code field and for
    every requested topic, partition or group (trafka.broker.requests.error_responses)."""
    from trafka.broker.requests.error_responses import error_response
    from trafka.broker.requests.routes import ROUTES

    return error_response(ROUTES[ctx.header.api_key].api, ctx.version, request, error)


def _api_name(ctx) -> str:
    from trafka.broker.requests.routes import ROUTES

    route = ROUTES.get(ctx.header.api_key)
    return route.api.name if route else str(ctx.header.api_key)
