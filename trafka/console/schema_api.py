"""Confluent Schema Registry's REST API (v1), served by the broker on `schema.registry.port`,
over the broker's registry (trafka/broker/schemas/registry.py), on the console's
hypercorn/Starlette stack. Serializers of confluent-kafka (`SchemaRegistryClient`) and Java
(`KafkaAvroSerializer`) talk to it unchanged. The routes, answers and error shapes are
Confluent's: JSON bodies of content type application/vnd.schemaregistry.v1+json, errors as
{"error_code": ..., "message": ...}. docs/schema-registry.md lists them and what differs.
"""

from __future__ import annotations

import json
import logging

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from trafka.broker.schemas.kinds import TYPES
from trafka.broker.schemas.records import Reference, SchemaRecord
from trafka.broker.schemas.registry import UNKNOWN_LEADER, RegistryError, SchemaRegistry

log = logging.getLogger("trafka.schemas")

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


def _json(body, status: int = 200) -> Response:
    return Response(json.dumps(body), status_code=status, media_type=CONTENT_TYPE)


def _error(status: int, code: int, message: str) -> Response:
    return _json({"error_code": code, "message": message}, status)


def _flag(request: Request, name: str) -> bool:
    return request.query_params.get(name, "false").strip().lower() == "true"


def _schema_json(rec: SchemaRecord, *, subject_version: bool = True) -> dict:
    out: dict = {}
    if subject_version:
        out.update(subject=rec.subject, version=rec.version)
    out["id"] = rec.id
    if rec.schema_type != "AVRO":
        out["schemaType"] = rec.schema_type
    if rec.references:
        out["references"] = [r.to_json() for r in rec.references]
    out["schema"] = rec.schema
    return out


async def _body(request: Request) -> dict:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise RegistryError(400, 400, f"Unrecognized request body: {exc}") from None
    if not isinstance(body, dict):
        raise RegistryError(400, 400, "The request body must be a JSON object")
    return body


def _schema_request(body: dict) -> tuple[str, str, tuple[Reference, ...]]:
    text = body.get("schema")
    if not isinstance(text, str) or not text.strip():
        raise RegistryError(422, 42201, "Empty schema")
    kind = body.get("schemaType") or "AVRO"
    if kind not in TYPES:
        raise RegistryError(422, 42201, f"Invalid schema type {kind}")
    try:
        references = tuple(Reference(str(r["name"]), str(r["subject"]), int(r["version"]))
                           for r in body.get("references") or ())
    except (KeyError, TypeError, ValueError):
        raise RegistryError(422, 42201, "Invalid schema references: each needs name, subject and version") from None
    return kind, text, references


def build_app(broker) -> Starlette:
    def registry() -> SchemaRegistry:
        return broker.schema_registry()  # created (with `_schemas`) at the first request

    def authorized(request: Request) -> bool:
        """schema.registry.auth=basic: HTTP Basic credentials of one of the broker's SASL users."""
        if broker.config["schema.registry.auth"] != "basic":
            return True
        return broker.security.basic_user(broker.listeners, request.headers.get("authorization", "")) is not None

    def route(path: str, methods: list[str]):
        def wrap(fn):
            async def endpoint(request: Request) -> Response:
                if not authorized(request):
                    log.info("schema registry: %s %s refused: no valid Basic credentials", request.method, request.url.path)
                    response = _error(401, 401, "Unauthorized: HTTP Basic credentials of a SASL user are required")
                    response.headers["WWW-Authenticate"] = 'Basic realm="trafka schema registry"'
                    return response
                try:
                    try:
                        return await fn(request, registry(), **request.path_params)
                    except RegistryError as exc:
                        if exc.code != UNKNOWN_LEADER:
                            raise
                        # The leadership of `_schemas` moved while this was served (nothing was
                        # written): once more, on the leader there is now.
                        return await fn(request, registry(), **request.path_params)
                except RegistryError as exc:
                    return _error(exc.status, exc.code, exc.message)
                except Exception:  # noqa: BLE001 - one failed request, logged; never a traceback to the client
                    log.exception("schema registry: %s %s failed", request.method, request.url.path)
                    return _error(500, 50001, "Error in the backend data store; see the broker log")
            routes.append(Route(path, endpoint, methods=methods))
            return fn
        return wrap

    routes: list[Route] = []

    @route("/", ["GET"])
    async def root(request, reg):
        return _json({})

    @route("/schemas/types", ["GET"])
    async def schema_types(request, reg):
        return _json(["JSON", "PROTOBUF", "AVRO"])

    @route("/schemas", ["GET"])
    async def schemas(request, reg):
        prefix = request.query_params.get("subjectPrefix", "")
        deleted, latest_only = _flag(request, "deleted"), _flag(request, "latestOnly")
        out = []
        for subject in reg.subjects(deleted=deleted, prefix=prefix):
            versions = reg.versions(subject, deleted=deleted)
            for version in versions[-1:] if latest_only else versions:
                out.append(_schema_json(reg.version(subject, str(version), deleted=deleted)))
        return _json(out)

    @route("/schemas/ids/{schema_id:int}", ["GET"])
    async def schema_by_id(request, reg, schema_id):
        body = _schema_json(reg.schema(schema_id), subject_version=False)
        del body["id"]
        return _json(body)

    @route("/schemas/ids/{schema_id:int}/schema", ["GET"])
    async def raw_schema_by_id(request, reg, schema_id):
        return Response(reg.schema(schema_id).schema, media_type=CONTENT_TYPE)

    @route("/schemas/ids/{schema_id:int}/subjects", ["GET"])
    async def subjects_of_id(request, reg, schema_id):
        return _json(sorted({s for s, _ in reg.usages(schema_id, deleted=_flag(request, "deleted"))}))

    @route("/schemas/ids/{schema_id:int}/versions", ["GET"])
    async def versions_of_id(request, reg, schema_id):
        return _json([{"subject": s, "version": v} for s, v in reg.usages(schema_id, deleted=_flag(request, "deleted"))])

    @route("/subjects", ["GET"])
    async def subjects(request, reg):
        return _json(reg.subjects(deleted=_flag(request, "deleted"), prefix=request.query_params.get("subjectPrefix", "")))

    @route("/subjects/{subject:path}", ["POST"])
    async def lookup(request, reg, subject):
        kind, text, references = _schema_request(await _body(request))
        rec = reg.lookup(subject, kind, text, references, deleted=_flag(request, "deleted"))
        return _json(_schema_json(rec))

    @route("/subjects/{subject:path}", ["DELETE"])
    async def delete_subject(request, reg, subject):
        return _json(reg.delete_subject(subject, permanent=_flag(request, "permanent")))

    @route("/subjects/{subject:path}/versions", ["GET"])
    async def versions(request, reg, subject):
        return _json(reg.versions(subject, deleted=_flag(request, "deleted")))

    @route("/subjects/{subject:path}/versions", ["POST"])
    async def register(request, reg, subject):
        body = await _body(request)
        kind, text, references = _schema_request(body)
        schema_id = body.get("id")
        version = body.get("version")
        try:
            schema_id = None if schema_id in (None, -1, 0) else int(schema_id)
            version = None if version in (None, -1, 0) else int(version)
        except (TypeError, ValueError):
            raise RegistryError(422, 42201, "id and version must be numbers") from None
        return _json({"id": reg.register(subject, kind, text, references, schema_id=schema_id, version=version)})

    @route("/subjects/{subject:path}/versions/{version}", ["GET"])
    async def get_version(request, reg, subject, version):
        return _json(_schema_json(reg.version(subject, version, deleted=_flag(request, "deleted"))))

    @route("/subjects/{subject:path}/versions/{version}/schema", ["GET"])
    async def get_version_schema(request, reg, subject, version):
        return Response(reg.version(subject, version, deleted=_flag(request, "deleted")).schema, media_type=CONTENT_TYPE)

    @route("/subjects/{subject:path}/versions/{version}/referencedby", ["GET"])
    async def referenced_by(request, reg, subject, version):
        rec = reg.version(subject, version, deleted=True)
        return _json(reg.referenced_by(subject, rec.version))

    @route("/subjects/{subject:path}/versions/{version}", ["DELETE"])
    async def delete_version(request, reg, subject, version):
        return _json(reg.delete_version(subject, version, permanent=_flag(request, "permanent")))

    @route("/compatibility/subjects/{subject:path}/versions/{version}", ["POST"])
    async def compatibility(request, reg, subject, version):
        kind, text, references = _schema_request(await _body(request))
        parsed = reg.parse(kind, text, references)
        against = [reg.version(subject, version)]
        level = reg.level(subject)
        problems = reg.incompatibilities(subject, parsed, against=against, level=level.removesuffix("_TRANSITIVE"))
        return _compatibility_answer(request, problems)

    @route("/compatibility/subjects/{subject:path}/versions", ["POST"])
    async def compatibility_all(request, reg, subject):
        kind, text, references = _schema_request(await _body(request))
        parsed = reg.parse(kind, text, references)
        problems = reg.incompatibilities(subject, parsed) if subject in reg.subjects() else []
        return _compatibility_answer(request, problems)

    @route("/config", ["GET"])
    async def get_global_config(request, reg):
        return _json({"compatibilityLevel": reg.level(None)})

    @route("/config", ["PUT"])
    async def put_global_config(request, reg):
        return _json({"compatibility": reg.set_level(None, _level(await _body(request)))})

    @route("/config", ["DELETE"])
    async def delete_global_config(request, reg):
        return _json({"compatibilityLevel": reg.delete_level(None) if None in reg.state.configs else reg.level(None)})

    @route("/config/{subject:path}", ["GET"])
    async def get_config(request, reg, subject):
        level = reg.level(subject, fall_back=_flag(request, "defaultToGlobal"))
        if level is None:
            raise RegistryError(404, 40408, f"Subject '{subject}' does not have subject-level compatibility configured")
        return _json({"compatibilityLevel": level})

    @route("/config/{subject:path}", ["PUT"])
    async def put_config(request, reg, subject):
        return _json({"compatibility": reg.set_level(subject, _level(await _body(request)))})

    @route("/config/{subject:path}", ["DELETE"])
    async def delete_config(request, reg, subject):
        return _json({"compatibilityLevel": reg.delete_level(subject)})

    @route("/mode", ["GET"])
    async def get_global_mode(request, reg):
        return _json({"mode": reg.mode(None)})

    @route("/mode", ["PUT"])
    async def put_global_mode(request, reg):
        return _json({"mode": reg.set_mode(None, _mode(await _body(request)), force=_flag(request, "force"))})

    @route("/mode/{subject:path}", ["GET"])
    async def get_mode(request, reg, subject):
        mode = reg.mode(subject, fall_back=_flag(request, "defaultToGlobal"))
        if mode is None:
            raise RegistryError(404, 40409, f"Subject '{subject}' does not have subject-level mode configured")
        return _json({"mode": mode})

    @route("/mode/{subject:path}", ["PUT"])
    async def put_mode(request, reg, subject):
        return _json({"mode": reg.set_mode(subject, _mode(await _body(request)), force=_flag(request, "force"))})

    @route("/mode/{subject:path}", ["DELETE"])
    async def delete_mode(request, reg, subject):
        return _json({"mode": reg.delete_mode(subject)})

    async def not_found(request: Request, exc) -> Response:
        return _error(404, 404, "HTTP 404 Not Found")

    async def not_allowed(request: Request, exc) -> Response:
        return _error(405, 405, "HTTP 405 Method Not Allowed")

    # Subjects may hold slashes (Protobuf references are named by their file, "a/b/c.proto"), so
    # they match as paths: the routes with more after the subject are tried first.
    routes.sort(key=lambda r: r.path.count("/"), reverse=True)
    return Starlette(routes=routes, exception_handlers={404: not_found, 405: not_allowed})


def _compatibility_answer(request: Request, problems: list[str]) -> Response:
    body: dict = {"is_compatible": not problems}
    if _flag(request, "verbose"):
        body["messages"] = problems
    return _json(body)


def _level(body: dict) -> str:
    level = body.get("compatibility") or body.get("compatibilityLevel")
    if not isinstance(level, str):
        raise RegistryError(422, 42203, "Invalid compatibility level")
    return level.upper()


def _mode(body: dict) -> str:
    mode = body.get("mode")
    if not isinstance(mode, str):
        raise RegistryError(422, 42204, "Invalid mode")
    return mode.upper()
