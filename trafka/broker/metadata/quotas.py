"""Client quotas (KIP-546): stored and reported as Kafka's controller keeps them, never enforced.

An entity is a set of (type, name) pairs: `user`, `client-id` (alone or together) or `ip`
(alone); a None name is the default entity of that type. Each has quota values by key. The
checks are Kafka's ClientQuotaControlManager's, the filter Kafka's ClientQuotasImage.describe.
Kafka throttles clients over their quotas; trafka never throttles (docs/compatibility.md).

The quotas are ClientQuotaRecords of the metadata log (image.py), one per entity and key, all of
one AlterClientQuotas in one batch, fsynced before it answers and applied only then.
"""

from __future__ import annotations

import ipaddress

from trafka.broker.metadata.image import ClusterMetadata
from trafka.broker.metadata.java_hashmap import iteration_order, string_hash, string_map_hash
from trafka.broker.metadata.records import MetadataRecord
from trafka.wire.errors import ErrorCode

USER, CLIENT_ID, IP = "user", "client-id", "ip"
# Kafka's QuotaConfig: the keys of user/client-id entities and of ip entities, with their types.
USER_AND_CLIENT_KEYS = {
    "producer_byte_rate": "long",
    "consumer_byte_rate": "long",
    "request_percentage": "double",
    "controller_mutation_rate": "double",
}
IP_KEYS = {"connection_creation_rate": "int"}
_LIMITS = {"int": 2**31 - 1, "long": 2**63 - 1}

MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED = 0, 1, 2

Entity = frozenset  # of (entity type, entity name or None)


class QuotaError(Exception):
    def __init__(self, code: ErrorCode, message: str):
        super().__init__(message)
        self.code = code


def _valid_ip(name: str | None) -> bool:
    if name is None:
        return True
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False  # Kafka also resolves host names; trafka takes addresses only (no DNS in the loop)


def _check_entity(pairs: list[tuple[str, str | None]]) -> dict[str, tuple[str, str]]:
    """The valid keys (key -> type) for this entity, or QuotaError."""
    if not pairs:
        raise QuotaError(ErrorCode.INVALID_REQUEST, "Invalid empty client quota entity")
    seen: dict[str, str | None] = {}
    for entity_type, name in pairs:
        if entity_type in seen:
            raise QuotaError(ErrorCode.INVALID_REQUEST, f"Invalid client quota entity, duplicate entity entry {entity_type}")
        if entity_type not in (USER, CLIENT_ID, IP):
            raise QuotaError(ErrorCode.INVALID_REQUEST, f"Unhandled client quota entity type: {entity_type}")
        if name is not None and name == "":
            raise QuotaError(ErrorCode.INVALID_REQUEST, f"Empty {entity_type} not supported")
        seen[entity_type] = name
    if IP in seen:
        if len(seen) > 1:
            raise QuotaError(ErrorCode.INVALID_REQUEST,
                             "Invalid quota entity combination, IP entity should not be combined with User or ClientId")
        if not _valid_ip(seen[IP]):
            raise QuotaError(ErrorCode.INVALID_REQUEST, f"{seen[IP]} is not a valid IP or resolvable host.")
        return IP_KEYS
    return USER_AND_CLIENT_KEYS


def _check_value(keys: dict[str, str], key: str, value: float) -> None:
    kind = keys.get(key)
    if kind is None:
        raise QuotaError(ErrorCode.INVALID_REQUEST, f"Invalid configuration key {key}")
    if value <= 0.0:
        raise QuotaError(ErrorCode.INVALID_REQUEST, f"Quota {key} must be greater than 0")
    if kind == "double":
        return
    if value > _LIMITS[kind]:
        article = "an" if kind == "int" else "a"
        raise QuotaError(ErrorCode.INVALID_REQUEST, f"Proposed value for {key} is too large for {article} {kind.upper()}.")
    if abs(value % 1.0) > 1e-6:
        raise QuotaError(ErrorCode.INVALID_REQUEST, f"{key} cannot be a fractional value.")


def entity_hash(entity: Entity) -> int:
    """Java's hashCode of Kafka's ClientQuotaEntity: Objects.hash of its type -> name map."""
    return 31 + string_map_hash(dict(entity))


def entity_pairs(pairs, initial: int | None = None) -> list[tuple[str, str | None]]:
    """An entity's (type, name) pairs, put in this order into a map made with `initial` (None:
    the default size), in the order Kafka's map of them iterates."""
    names = dict(pairs)
    return [(t, names[t]) for t in iteration_order(names, string_hash, initial)]


class ClientQuotas:
    """The quotas by entity, kept in the order of Kafka's metadata image (ClientQuotasImage and
    ClientQuotaImage, java.util.HashMaps rebuilt at each change), which is the order
    DescribeClientQuotas answers in: the records of one batch are one delta, applied as Kafka's
    ClientQuotasDelta applies its changes (the image's entities in their order, then the new
    ones, into a map sized by the last image)."""

    def __init__(self, metadata=None):
        """`metadata`: the broker's ClusterMetadata (ClusterMetadata.of for the other forms)."""
        self.entities: dict[Entity, dict[str, float]] = {}
        self._delta: dict[Entity, dict[str, float | None]] = {}  # None: removed
        self.metadata = ClusterMetadata.of(metadata)
        self.metadata.register(["ClientQuotaRecord"], self._replay)
        self._apply_delta()  # the image loaded from the log is one delta, as a snapshot is in Kafka

    def _replay(self, record: MetadataRecord) -> None:
        entity = frozenset((t, n) for t, n in record.fields["entity"])
        self._delta.setdefault(entity, {})[record.fields["key"]] = None if record.removal else float(record.fields["value"])

    def _apply_delta(self) -> None:
        delta, self._delta = self._delta, {}
        if not delta:
            return
        changed = iteration_order(delta, entity_hash)
        entities: dict[Entity, dict[str, float]] = {}
        for entity in [*self.entities, *(e for e in changed if e not in self.entities)]:
            if entity not in delta:  # Kafka keeps an unchanged entity's values as they were
                entities[entity] = self.entities[entity]
                continue
            values = _apply_values(self.entities.get(entity, {}), delta[entity])
            if values:
                entities[entity] = values
        self.entities = {e: entities[e] for e in iteration_order(entities, entity_hash, len(self.entities))}

    def alter(self, entries: list[tuple[list[tuple[str, str | None]], list[tuple[str, float | None]]]],
              validate_only: bool) -> list[tuple[list[tuple[str, str | None]], ErrorCode, str | None]]:
        """(entity pairs, error, message) per entity, in the order Kafka's controller answers
        (its results map); the valid entries are applied together (unless validate_only), as one
        batch of records in the order Kafka's controller writes them."""
        results: dict[Entity, tuple[ErrorCode, str | None]] = {}
        components: dict[Entity, list[tuple[str, str | None]]] = {}
        records: list[MetadataRecord] = []
        for pairs, ops in entries:
            entity = frozenset(pairs)
            components.setdefault(entity, pairs)
            try:
                if entity in results:
                    raise QuotaError(ErrorCode.INVALID_REQUEST, f"Ignoring duplicate entity {dict(pairs)}")
                keys = _check_entity(pairs)
                alterations: dict[str, float | None] = {}
                for key, value in ops:
                    if key in alterations:
                        raise QuotaError(ErrorCode.INVALID_REQUEST, f"Duplicate quota key {key} not updating quota for this entity")
                    alterations[key] = value
                for key, value in alterations.items():
                    if value is not None:
                        _check_value(keys, key, value)
            except QuotaError as exc:
                results[entity] = (exc.code, str(exc))
                continue
            current = self.entities.get(entity, {})
            record_entity = sorted([t, n] for t, n in entity)
            for key in iteration_order(alterations, string_hash, len(ops)):
                value = alterations[key]
                if (value is None and key in current) or (value is not None and current.get(key) != value):
                    records.append(MetadataRecord("ClientQuotaRecord", {
                        "entity": record_entity, "key": key, "value": value, "remove": value is None}))
            results[entity] = (ErrorCode.NONE, None)
        if not validate_only and records:
            self.metadata.write(records)
            self._apply_delta()
        return [(entity_pairs(components[entity], len(components[entity])), *results[entity])
                for entity in iteration_order(results, entity_hash)]

    def describe(self, components: list[tuple[str, int, str | None]], strict: bool) -> list[tuple[Entity, dict[str, float]]]:
        """The entities matching the filter (Kafka's ClientQuotasImage.describe), or QuotaError."""
        exact: dict[str, str | None] = {}
        specified: set[str] = set()
        for entity_type, match_type, match in components:
            if not entity_type:
                raise QuotaError(ErrorCode.INVALID_REQUEST, "Invalid empty entity type.")
            if entity_type in exact or entity_type in specified:
                raise QuotaError(ErrorCode.INVALID_REQUEST, f"Entity type {entity_type} cannot appear more than once in the filter.")
            if entity_type not in (USER, CLIENT_ID, IP):
                raise QuotaError(ErrorCode.UNSUPPORTED_VERSION, f"Unsupported entity type {entity_type}")
            if match_type == MATCH_EXACT:
                if match is None:
                    raise QuotaError(ErrorCode.INVALID_REQUEST, "Request specified MATCH_TYPE_EXACT, but set match string to null.")
                exact[entity_type] = match
            elif match_type == MATCH_DEFAULT:
                if match is not None:
                    raise QuotaError(ErrorCode.INVALID_REQUEST, "Request specified MATCH_TYPE_DEFAULT, but also specified a match string.")
                exact[entity_type] = None
            elif match_type == MATCH_SPECIFIED:
                if match is not None:
                    raise QuotaError(ErrorCode.INVALID_REQUEST, "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.")
                specified.add(entity_type)
            else:
                raise QuotaError(ErrorCode.INVALID_REQUEST, f"Unknown match type {match_type}")
        used = set(exact) | specified
        if IP in used and used & {USER, CLIENT_ID}:
            raise QuotaError(ErrorCode.INVALID_REQUEST, "Invalid entity filter component combination. IP filter component "
                             "should not be used with user or clientId filter component.")
        found = []
        for entity, values in self.entities.items():
            names = dict(entity)
            if strict and len(names) != len(used):
                continue
            if all(t in names and names[t] == name for t, name in exact.items()) and all(t in names for t in specified):
                found.append((entity, values))
        return found


def _apply_values(old: dict[str, float], change: dict[str, float | None]) -> dict[str, float]:
    """One entity's values after a delta, in the order of the map Kafka's ClientQuotaDelta
    builds: the old values in their order, then the new keys, into a map sized by the old one."""
    values = {k: change.get(k, v) for k, v in old.items() if change.get(k, v) is not None}
    for key in iteration_order(change, string_hash):
        if key not in values and change[key] is not None:
            values[key] = change[key]
    return {k: values[k] for k in iteration_order(values, string_hash, len(old))}
