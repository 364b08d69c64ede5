"""The schema registry's state, on the coordinator runtime over the compacted `_schemas` topic
(one partition), as Confluent Schema Registry keeps it: subjects with numbered versions, each
naming a schema by a global id, the compatibility level and mode per subject or global.

Write, then apply: every change is the registry's records (records.py), appended to `_schemas`
and only then replayed into the state, so what a client was told is what a restart (or a
kill -9) replays. Reads come from the state.

Errors are `RegistryError(http status, error code, message)` with Confluent's codes: 40401
subject not found, 40402 version not found, 40403 schema not found, 40404/40406 soft-deleted,
40405/40407 not soft-deleted before a permanent delete, 40408/40409 no subject-level config or
mode, 409 incompatible, 42201 invalid schema, 42202 invalid version, 42203 invalid
compatibility level, 42204 invalid mode, 42205 operation not permitted, 42206 references exist,
50001 the store could not be written, 50004 the leadership of `_schemas` is moving (or it has
no live leader).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

from trafka.broker.coordinators.runtime.internal_topic import InternalTopic
from trafka.broker.coordinators.runtime.records import CoordinatorRecord, CoordinatorResult
from trafka.broker.coordinators.runtime.runtime import CoordinatorRuntime, CoordinatorWriteError, NotCoordinator
from trafka.broker.schemas import kinds, records
from trafka.broker.schemas.records import Reference, SchemaRecord

log = logging.getLogger("trafka.schemas")

SCHEMAS_TOPIC = "_schemas"
TOPIC_CONFIGS = {"cleanup.policy": "compact"}
LEVELS = ("BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE", "NONE")
MODES = ("READWRITE", "READONLY", "IMPORT")
DEFAULT_LEVEL = "BACKWARD"
DEFAULT_MODE = "READWRITE"


UNKNOWN_LEADER = 50004


class RegistryError(Exception):
    def __init__(self, status: int, code: int, message: str):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def _moved() -> RegistryError:
    """The registry's state is not on this broker (the leadership of `_schemas` moved while the
    request was served): Confluent's 50004, which its clients retry."""
    return RegistryError(500, UNKNOWN_LEADER, f"Unknown leader: the leadership of {SCHEMAS_TOPIC} is moving; retry")


def not_found(code: int, message: str) -> RegistryError:
    return RegistryError(404, code, message)


def unprocessable(code: int, message: str) -> RegistryError:
    return RegistryError(422, code, message)


@dataclass
class RegistryShard:
    """The registry's state: what replaying `_schemas` builds."""

    versions: dict[str, dict[int, SchemaRecord]] = field(default_factory=dict)
    by_id: dict[int, SchemaRecord] = field(default_factory=dict)  # the first registration of each id
    configs: dict[str | None, str] = field(default_factory=dict)
    modes: dict[str | None, str] = field(default_factory=dict)

    def replay(self, key: bytes, value: bytes | None, offset: int = -1) -> None:
        k = records.parse_key(key)
        v = records.parse_value(value)
        keytype = k["keytype"]
        if keytype == "SCHEMA":
            subject, version = str(k.get("subject")), int(k.get("version", 0))
            if v is None:
                self.versions.get(subject, {}).pop(version, None)
                if subject in self.versions and not self.versions[subject]:
                    del self.versions[subject]
                return
            rec = records.schema_record(v)
            self.versions.setdefault(rec.subject, {})[rec.version] = rec
            self.by_id.setdefault(rec.id, rec)
        elif keytype == "CONFIG":
            if v is None:
                self.configs.pop(k.get("subject"), None)
            else:
                self.configs[k.get("subject")] = str(v.get("compatibilityLevel") or v.get("compatibility") or DEFAULT_LEVEL)
        elif keytype == "MODE":
            if v is None:
                self.modes.pop(k.get("subject"), None)
            else:
                self.modes[k.get("subject")] = str(v.get("mode") or DEFAULT_MODE)
        elif keytype == "DELETE_SUBJECT" and v is not None:
            subject, upto = str(v.get("subject")), int(v.get("version", 0))
            for version, rec in list(self.versions.get(subject, {}).items()):
                if version <= upto:
                    self.versions[subject][version] = replace(rec, deleted=True)

    def next_id(self) -> int:
        return max(self.by_id, default=0) + 1


class SchemaRegistry:
    def __init__(self, logs, clock):
        """Its state is loaded where `_schemas` is led, and moves with the leadership as the
        coordinators' shards do (the cluster loads and unloads its runtime's shard)."""
        self.topic = InternalTopic(logs, SCHEMAS_TOPIC, 1, TOPIC_CONFIGS, clock)
        self.runtime: CoordinatorRuntime[RegistryShard] = CoordinatorRuntime(self.topic, lambda p: RegistryShard())
        # Stored schemas' canonical texts by (type, text, references): a stored schema and the
        # versions it references never change, so each is parsed once, not at every lookup.
        self._canonical: dict[tuple, str | None] = {}

    def log_loaded(self) -> None:
        for state in self.runtime:
            log.info("loaded %d subjects, %d schemas from %s", len(state.versions), len(state.by_id), SCHEMAS_TOPIC)

    @property
    def state(self) -> RegistryShard:
        try:
            return self.runtime.shard(0)
        except NotCoordinator:
            raise _moved() from None

    def _write(self, entries: list[tuple[bytes, bytes | None]], response):
        recs = [CoordinatorRecord(k, v) for k, v in entries]
        try:
            return self.runtime.write(0, lambda shard: CoordinatorResult(recs, response, None))
        except NotCoordinator:  # refused before anything was written
            raise _moved() from None
        except CoordinatorWriteError as exc:
            raise RegistryError(500, 50001, f"Error while storing the schema registry's change: {exc.cause}") from None

    # --- reading ------------------------------------------------------------------------------

    def subjects(self, *, deleted: bool = False, prefix: str = "") -> list[str]:
        return sorted(s for s, vs in self.state.versions.items()
                      if s.startswith(prefix) and any(deleted or not r.deleted for r in vs.values()))

    def versions(self, subject: str, *, deleted: bool = False) -> list[int]:
        live = self._subject(subject, deleted=deleted)
        return sorted(v for v, r in live.items() if deleted or not r.deleted)

    def version(self, subject: str, spec: str, *, deleted: bool = False) -> SchemaRecord:
        live = self._subject(subject, deleted=deleted)
        if spec in ("latest", "-1"):
            candidates = [r for r in live.values() if deleted or not r.deleted]
            if not candidates:
                raise not_found(40401, f"Subject '{subject}' not found.")
            return max(candidates, key=lambda r: r.version)
        number = _version_number(spec)
        rec = live.get(number)
        if rec is None or (rec.deleted and not deleted):
            raise not_found(40402, f"Version {number} not found.")
        return rec

    def schema(self, schema_id: int) -> SchemaRecord:
        rec = self.state.by_id.get(schema_id)
        if rec is None:
            raise not_found(40403, "Schema not found")
        return rec

    def usages(self, schema_id: int, *, deleted: bool = False) -> list[tuple[str, int]]:
        """(subject, version) pairs that name the schema id."""
        self.schema(schema_id)
        return sorted((r.subject, r.version) for vs in self.state.versions.values() for r in vs.values()
                      if r.id == schema_id and (deleted or not r.deleted))

    def referenced_by(self, subject: str, version: int) -> list[int]:
        return sorted({r.id for vs in self.state.versions.values() for r in vs.values()
                       if not r.deleted and any(ref.subject == subject and ref.version == version for ref in r.references)})

    def level(self, subject: str | None, *, fall_back: bool = True) -> str | None:
        configs = self.state.configs
        if subject is not None and subject in configs:
            return configs[subject]
        if subject is not None and not fall_back:
            return None
        return configs.get(None, DEFAULT_LEVEL)

    def mode(self, subject: str | None, *, fall_back: bool = True) -> str | None:
        modes = self.state.modes
        if subject is not None and subject in modes:
            return modes[subject]
        if subject is not None and not fall_back:
            return None
        return modes.get(None, DEFAULT_MODE)

    def _subject(self, subject: str, *, deleted: bool) -> dict[int, SchemaRecord]:
        live = self.state.versions.get(subject)
        if not live or not (deleted or any(not r.deleted for r in live.values())):
            raise not_found(40401, f"Subject '{subject}' not found.")
        return live

    # --- schemas ------------------------------------------------------------------------------

    def parse(self, kind: str, text: str, references: tuple[Reference, ...]) -> kinds.Parsed:
        if kind not in kinds.TYPES:
            raise unprocessable(42201, f"Invalid schema type {kind}")
        resolved = []
        for ref in self._closure(references):
            resolved.append((ref.schema_type, ref.schema))
        try:
            return kinds.parse(kind, text, resolved)
        except kinds.InvalidSchema as exc:
            raise unprocessable(42201, str(exc)) from None

    def _closure(self, references: tuple[Reference, ...], seen=None) -> list[SchemaRecord]:
        """The referenced schemas, each after the ones it references."""
        seen = set() if seen is None else seen
        out = []
        for ref in references:
            if (ref.subject, ref.version) in seen:
                continue
            seen.add((ref.subject, ref.version))
            try:
                rec = self.version(ref.subject, str(ref.version), deleted=False)
            except RegistryError:
                raise unprocessable(42201, f"Invalid schema: reference {ref.name} to subject {ref.subject} "
                                           f"version {ref.version} does not exist") from None
            out.extend(self._closure(rec.references, seen))
            out.append(rec)
        return out

    def lookup(self, subject: str, kind: str, text: str, references: tuple[Reference, ...], *,
               deleted: bool = False) -> SchemaRecord:
        """The subject's version holding this schema (POST /subjects/{subject})."""
        live = self._subject(subject, deleted=deleted)
        parsed = self.parse(kind, text, references)
        for rec in sorted(live.values(), key=lambda r: r.version):
            if (deleted or not rec.deleted) and self._same(rec, parsed, references):
                return rec
        raise not_found(40403, "Schema not found")

    def _same(self, rec: SchemaRecord, parsed: kinds.Parsed, references: tuple[Reference, ...]) -> bool:
        if rec.schema_type != parsed.kind or rec.references != references:
            return False
        return self._canonical_of(rec) == parsed.canonical

    def _canonical_of(self, rec: SchemaRecord) -> str | None:
        key = (rec.schema_type, rec.schema, rec.references)
        if key not in self._canonical:
            try:
                self._canonical[key] = self.parse(rec.schema_type, rec.schema, rec.references).canonical
            except RegistryError:
                self._canonical[key] = None
        return self._canonical[key]

    def incompatibilities(self, subject: str, parsed: kinds.Parsed, *, against: list[SchemaRecord] | None = None,
                          level: str | None = None) -> list[str]:
        """Why `parsed` may not follow the subject's versions under its compatibility level."""
        level = level or self.level(subject)
        if level == "NONE":
            return []
        live = sorted((r for r in self.state.versions.get(subject, {}).values() if not r.deleted), key=lambda r: r.version)
        if against is None:
            against = live if level.endswith("_TRANSITIVE") else live[-1:]
        problems: list[str] = []
        for old in against:
            previous = self.parse(old.schema_type, old.schema, old.references)
            if previous.kind != parsed.kind:
                problems.append(f"Incompatible schema type {parsed.kind} with version {old.version} ({old.schema_type})")
                continue
            if level.startswith(("BACKWARD", "FULL")):
                problems += kinds.incompatibilities(parsed.kind, reader=parsed, writer=previous)
            if level.startswith(("FORWARD", "FULL")):
                problems += kinds.incompatibilities(parsed.kind, reader=previous, writer=parsed)
        return problems

    # --- changing -----------------------------------------------------------------------------

    def register(self, subject: str, kind: str, text: str, references: tuple[Reference, ...], *,
                 schema_id: int | None = None, version: int | None = None) -> int:
        """POST /subjects/{subject}/versions: the schema's id (the same schema again: the same
        id and no new version)."""
        mode = self.mode(subject)
        if mode == "READONLY":
            raise unprocessable(42205, f"Subject {subject} is in read-only mode")
        if (schema_id is not None or version is not None) and mode != "IMPORT":
            raise unprocessable(42205, "Schema id or version may only be given in IMPORT mode")
        parsed = self.parse(kind, text, references)
        live = self.state.versions.get(subject, {})
        for rec in sorted(live.values(), key=lambda r: r.version):
            if not rec.deleted and self._same(rec, parsed, references):
                return rec.id
        if mode != "IMPORT":
            problems = self.incompatibilities(subject, parsed)
            if problems:
                raise RegistryError(409, 409, f"Schema being registered is incompatible with an earlier schema for "
                                              f"subject \"{subject}\", details: [{', '.join(problems)}]")
        if schema_id is None:
            schema_id = next((i for i, rec in sorted(self.state.by_id.items()) if self._same(rec, parsed, references)),
                             self.state.next_id())
        elif schema_id in self.state.by_id and not self._same(self.state.by_id[schema_id], parsed, references):
            raise unprocessable(42205, f"Overwrite new schema with id {schema_id} is not permitted.")
        if version is None:
            version = max(live, default=0) + 1
        elif version in live:
            raise unprocessable(42205, f"Version {version} already exists in subject {subject}")
        rec = SchemaRecord(subject, version, schema_id, kind, text, references)
        self._write([(records.schema_key(subject, version), records.schema_value(rec))], None)
        log.info("subject %s: version %d is schema id %d (%s)", subject, version, schema_id, kind)
        return schema_id

    def delete_subject(self, subject: str, *, permanent: bool) -> list[int]:
        live = self._subject(subject, deleted=True)
        if self.mode(subject) == "READONLY":
            raise unprocessable(42205, f"Subject {subject} is in read-only mode")
        if permanent:
            if any(not r.deleted for r in live.values()):
                raise not_found(40405, f"Subject '{subject}' was not deleted first before being permanently deleted")
            self._check_unreferenced(subject, list(live))
            versions = sorted(live)
            self._write([(records.schema_key(subject, v), None) for v in versions], None)
            return versions
        versions = sorted(v for v, r in live.items() if not r.deleted)
        if not versions:
            raise not_found(40404, f"Subject '{subject}' was soft deleted. Set permanent=true to delete permanently")
        self._check_unreferenced(subject, versions)
        entries = [(records.schema_key(subject, v), records.schema_value(replace(live[v], deleted=True))) for v in versions]
        entries.append((records.delete_subject_key(subject), records.delete_subject_value(subject, versions[-1])))
        self._write(entries, None)
        return versions

    def delete_version(self, subject: str, spec: str, *, permanent: bool) -> int:
        live = self._subject(subject, deleted=True)
        if self.mode(subject) == "READONLY":
            raise unprocessable(42205, f"Subject {subject} is in read-only mode")
        if spec in ("latest", "-1"):
            rec = self.version(subject, "latest", deleted=permanent)
        else:
            rec = live.get(_version_number(spec))
            if rec is None:
                raise not_found(40402, f"Version {_version_number(spec)} not found.")
        if permanent:
            if not rec.deleted:
                raise not_found(40407, f"Subject '{subject}' Version {rec.version} was not deleted first before "
                                       "being permanently deleted")
            self._check_unreferenced(subject, [rec.version])
            self._write([(records.schema_key(subject, rec.version), None)], None)
            return rec.version
        if rec.deleted:
            raise not_found(40406, f"Subject '{subject}' Version {rec.version} was soft deleted. "
                                   "Set permanent=true to delete permanently")
        self._check_unreferenced(subject, [rec.version])
        self._write([(records.schema_key(subject, rec.version), records.schema_value(replace(rec, deleted=True)))], None)
        return rec.version

    def _check_unreferenced(self, subject: str, versions: list[int]) -> None:
        for version in versions:
            if self.referenced_by(subject, version):
                raise unprocessable(42206, f"One or more references exist to the schema "
                                           f"{{subject={subject},version={version}}}.")

    def set_level(self, subject: str | None, level: str) -> str:
        if level not in LEVELS:
            raise unprocessable(42203, f"Invalid compatibility level. Valid values are: {', '.join(LEVELS)}")
        self._write([(records.config_key(subject), records.config_value(level))], None)
        return level

    def delete_level(self, subject: str | None) -> str:
        level = self.level(subject, fall_back=False)
        if level is None:
            raise not_found(40408, f"Subject '{subject}' does not have subject-level compatibility configured")
        self._write([(records.config_key(subject), None)], None)
        return level

    def set_mode(self, subject: str | None, mode: str, *, force: bool = False) -> str:
        if mode not in MODES:
            raise unprocessable(42204, f"Invalid mode. Valid values are: {', '.join(MODES)}")
        if mode == "IMPORT" and not force and (self.subjects(prefix="") if subject is None else
                                               self.state.versions.get(subject)):
            raise unprocessable(42205, "Cannot import since found existing subjects")
        self._write([(records.mode_key(subject), records.mode_value(mode))], None)
        return mode

    def delete_mode(self, subject: str) -> str:
        mode = self.mode(subject, fall_back=False)
        if mode is None:
            raise not_found(40409, f"Subject '{subject}' does not have subject-level mode configured")
        self._write([(records.mode_key(subject), None)], None)
        return mode


def _version_number(spec: str) -> int:
    try:
        number = int(spec)
    except (TypeError, ValueError):
        number = 0
    if number < 1:
        raise unprocessable(42202, f"The specified version '{spec}' is not a valid version id. Allowed values are "
                                   "between [1, 2^31-1] and the string \"latest\"")
    return number
