"""The registry's REST API over plain HTTP: every endpoint's answer and every error path in
Confluent's shape ({"error_code", "message"}, application/vnd.schemaregistry.v1+json)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

AVRO_V1 = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]})
AVRO_V2 = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"},
                                                               {"name": "b", "type": "string", "default": ""}]})
AVRO_BREAKS = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "string"}]})


def call(base: str, method: str, path: str, body=None, raw: bytes | None = None):
    """(status, parsed body, content type)."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    request = urllib.request.Request(base + path, data=data, method=method,
                                     headers={"Content-Type": "application/vnd.schemaregistry.v1+json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            text = response.read().decode()
            return response.status, _maybe_json(text), response.headers.get("Content-Type")
    except urllib.error.HTTPError as exc:
        return exc.code, _maybe_json(exc.read().decode()), exc.headers.get("Content-Type")


def _maybe_json(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return text


def test_register_lookup_versions_and_ids(registry):
    status, body, ctype = call(registry, "POST", "/subjects/s1/versions", {"schema": AVRO_V1})
    assert (status, ctype) == (200, "application/vnd.schemaregistry.v1+json")
    first = body["id"]
    assert call(registry, "POST", "/subjects/s1/versions", {"schema": AVRO_V1})[1] == {"id": first}
    second = call(registry, "POST", "/subjects/s1/versions", {"schema": AVRO_V2})[1]["id"]
    assert second != first
    assert call(registry, "POST", "/subjects/other/versions", {"schema": AVRO_V1})[1] == {"id": first}  # ids are global
    assert call(registry, "GET", "/subjects")[1] == ["other", "s1"]
    assert call(registry, "GET", "/subjects/s1/versions")[1] == [1, 2]
    latest = call(registry, "GET", "/subjects/s1/versions/latest")[1]
    assert (latest["subject"], latest["version"], latest["id"]) == ("s1", 2, second)
    assert call(registry, "GET", "/subjects/s1/versions/1/schema")[1] == json.loads(AVRO_V1)  # the raw schema
    assert json.loads(call(registry, "GET", f"/schemas/ids/{first}")[1]["schema"]) == json.loads(AVRO_V1)
    assert call(registry, "GET", f"/schemas/ids/{first}/subjects")[1] == ["other", "s1"]
    assert call(registry, "GET", f"/schemas/ids/{first}/versions")[1] == [{"subject": "other", "version": 1},
                                                                         {"subject": "s1", "version": 1}]
    found = call(registry, "POST", "/subjects/s1", {"schema": AVRO_V2})[1]
    assert (found["version"], found["id"]) == (2, second)
    assert sorted(call(registry, "GET", "/schemas/types")[1]) == ["AVRO", "JSON", "PROTOBUF"]


def test_errors_in_the_registrys_shape(registry):
    call(registry, "POST", "/subjects/s2/versions", {"schema": AVRO_V1})
    cases = [
        (("GET", "/subjects/nope/versions"), 404, 40401),
        (("GET", "/subjects/s2/versions/7"), 404, 40402),
        (("GET", "/subjects/s2/versions/zero"), 422, 42202),
        (("GET", "/schemas/ids/999"), 404, 40403),
        (("POST", "/subjects/s2", {"schema": AVRO_V2}), 404, 40403),
        (("POST", "/subjects/s2/versions", {"schema": "{not json"}), 422, 42201),
        (("POST", "/subjects/s2/versions", {"schema": '{"type": "record", "name": "R", "fields": [{"name": "a", "type": "Nope"}]}'}), 422, 42201),
        (("POST", "/subjects/s2/versions", {"schema": '{"type": 12}', "schemaType": "JSON"}), 422, 42201),
        (("POST", "/subjects/s2/versions", {"schema": "message M { string a = ; }", "schemaType": "PROTOBUF"}), 422, 42201),
        (("POST", "/subjects/s2/versions", {"schema": AVRO_V1, "schemaType": "XML"}), 422, 42201),
        (("POST", "/subjects/s2/versions", {"schema": AVRO_BREAKS}), 409, 409),
        (("PUT", "/config", {"compatibility": "SIDEWAYS"}), 422, 42203),
        (("PUT", "/mode", {"mode": "LOUD"}), 422, 42204),
        (("GET", "/config/s2"), 404, 40408),
        (("DELETE", "/subjects/s2?permanent=true"), 404, 40405),
        (("GET", "/no/such/route"), 404, 404),
    ]
    for (method, path, *body), status, code in cases:
        got_status, got, ctype = call(registry, method, path, body[0] if body else None)
        assert (got_status, got.get("error_code")) == (status, code), (method, path, got)
        assert isinstance(got.get("message"), str) and got["message"]
        assert ctype == "application/vnd.schemaregistry.v1+json"
    bad_json = call(registry, "POST", "/subjects/s2/versions", raw=b"{oops")
    assert bad_json[0] == 400 and bad_json[1]["error_code"] == 400


def test_compatibility_config_mode_and_deletes(broker, registry):
    call(registry, "POST", "/subjects/s3/versions", {"schema": AVRO_V1})
    verbose = call(registry, "POST", "/compatibility/subjects/s3/versions/latest?verbose=true", {"schema": AVRO_BREAKS})[1]
    assert verbose["is_compatible"] is False and verbose["messages"]
    assert call(registry, "POST", "/compatibility/subjects/s3/versions/latest", {"schema": AVRO_V2})[1] == {"is_compatible": True}
    assert call(registry, "PUT", "/config/s3", {"compatibility": "NONE"})[1] == {"compatibility": "NONE"}
    assert call(registry, "GET", "/config/s3")[1] == {"compatibilityLevel": "NONE"}
    assert call(registry, "GET", "/config")[1] == {"compatibilityLevel": "BACKWARD"}
    assert call(registry, "POST", "/subjects/s3/versions", {"schema": AVRO_BREAKS})[0] == 200  # NONE allows it
    assert call(registry, "PUT", "/mode/s3", {"mode": "READONLY"})[1] == {"mode": "READONLY"}
    refused = call(registry, "POST", "/subjects/s3/versions", {"schema": AVRO_V2})
    assert (refused[0], refused[1]["error_code"]) == (422, 42205)
    assert call(registry, "DELETE", "/mode/s3")[1] == {"mode": "READONLY"}
    assert call(registry, "GET", "/mode")[1] == {"mode": "READWRITE"}

    assert call(registry, "DELETE", "/subjects/s3/versions/1")[1] == 1
    assert call(registry, "GET", "/subjects/s3/versions")[1] == [2]
    assert call(registry, "GET", "/subjects/s3/versions?deleted=true")[1] == [1, 2]
    assert call(registry, "DELETE", "/subjects/s3")[1] == [2]
    assert call(registry, "GET", "/subjects")[1] == []
    assert call(registry, "GET", "/subjects?deleted=true")[1] == ["s3"]
    again = call(registry, "DELETE", "/subjects/s3")
    assert (again[0], again[1]["error_code"]) == (404, 40404)
    broker.restart(kill=True)
    base = broker.schema_registry_url.rstrip("/")
    assert call(base, "GET", "/subjects?deleted=true")[1] == ["s3"]
    assert call(base, "GET", "/config/s3")[1] == {"compatibilityLevel": "NONE"}
    assert call(base, "DELETE", "/subjects/s3?permanent=true")[1] == [1, 2]
    assert call(base, "GET", "/subjects?deleted=true")[1] == []


def test_serve_prints_the_registry_url_and_a_taken_port_is_one_clear_error(tmp_path):
    """`trafka serve` prints where the registry listens (make run shows it); a taken
    schema.registry.port given explicitly stops the start with one line, no traceback."""
    import socket
    import subprocess
    import sys

    def serve(*settings):
        cmd = [sys.executable, "-m", "trafka", "serve", "--port", "0", "--data-dir", str(tmp_path / "data"),
               "--config", "console.port=-1"]
        for setting in settings:
            cmd += ["--config", setting]
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    process = serve("schema.registry.port=0")
    try:
        line = process.stdout.readline()
        url = line.split("schema registry at ", 1)[1].split(";")[0].strip()
        assert call(url.rstrip("/"), "GET", "/subjects")[:2] == (200, [])
    finally:
        process.terminate()
        process.communicate(timeout=30)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        process = serve(f"schema.registry.port={port}")
        _, err = process.communicate(timeout=60)
    assert process.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port} for the schema registry (schema.registry.port)" in err
    assert "Traceback" not in err


def test_json_schema_and_protobuf_compatibility(registry):
    """JSON Schema: an optional property may come, a new required one or a changed type may not.
    Protobuf: fields may come and go, a field number may not change its wire type or kind."""
    obj = {"type": "object", "properties": {"a": {"type": "string"}}}

    def register(subject, schema, kind):
        text = schema if isinstance(schema, str) else json.dumps(schema)
        return call(registry, "POST", f"/subjects/{subject}/versions", {"schema": text, "schemaType": kind})

    assert register("j", obj, "JSON")[0] == 200
    more = {**obj, "properties": {**obj["properties"], "b": {"type": "integer"}}}
    assert register("j", more, "JSON")[0] == 200
    required = {**more, "required": ["c"], "properties": {**more["properties"], "c": {"type": "string"}}}
    status, body, _ = register("j", required, "JSON")
    assert (status, body["error_code"]) == (409, 409) and "REQUIRED" in body["message"]
    retyped = {**more, "properties": {**more["properties"], "a": {"type": "integer"}}}
    assert register("j", retyped, "JSON")[0] == 409
    closed = {**more, "additionalProperties": False}
    assert register("j", closed, "JSON")[0] == 409

    proto = 'syntax = "proto3"; package shop; message Order { string id = 1; } message Line { int32 n = 1; }'
    assert register("p", proto, "PROTOBUF")[0] == 200
    added = proto.replace("string id = 1;", "string id = 1; int64 total = 2;")
    assert register("p", added, "PROTOBUF")[0] == 200
    as_bytes = added.replace("string id = 1;", "bytes id = 1;")  # string and bytes share a wire type
    assert register("p", as_bytes, "PROTOBUF")[0] == 200
    retyped = as_bytes.replace("int64 total = 2;", "double total = 2;")
    status, body, _ = register("p", retyped, "PROTOBUF")
    assert status == 409 and "FIELD_SCALAR_KIND_CHANGED" in body["message"]
    repeated = as_bytes.replace("int64 total = 2;", "repeated int64 total = 2;")
    assert register("p", repeated, "PROTOBUF")[0] == 409
    without_line = as_bytes.replace(" message Line { int32 n = 1; }", "")
    status, body, _ = register("p", without_line, "PROTOBUF")
    assert status == 409 and "MESSAGE_REMOVED" in body["message"]
    verbose = call(registry, "POST", "/compatibility/subjects/p/versions/latest?verbose=true",
                   {"schema": retyped, "schemaType": "PROTOBUF"})[1]
    assert verbose["is_compatible"] is False and any("total" not in m and "2" in m for m in verbose["messages"])


def test_protobuf_compatibility_of_base64_descriptors(registry):
    """The FileDescriptorProto form (what confluent-kafka's ProtobufSerializer sends) is checked by
    the same rules as .proto text."""
    import base64

    from google.protobuf import descriptor_pb2

    def descriptor(total_type: int) -> str:
        proto = descriptor_pb2.FileDescriptorProto(name="order.proto", package="shop", syntax="proto3")
        message = proto.message_type.add(name="Order")
        message.field.add(name="id", number=1, type=9, label=1)  # string
        message.field.add(name="total", number=2, type=total_type, label=1)
        return base64.b64encode(proto.SerializeToString()).decode()

    assert call(registry, "POST", "/subjects/d/versions", {"schema": descriptor(3), "schemaType": "PROTOBUF"})[0] == 200
    assert call(registry, "POST", "/subjects/d/versions", {"schema": descriptor(5), "schemaType": "PROTOBUF"})[0] == 200  # int64 -> int32
    refused = call(registry, "POST", "/subjects/d/versions", {"schema": descriptor(1), "schemaType": "PROTOBUF"})  # -> double
    assert refused[0] == 409 and "FIELD_SCALAR_KIND_CHANGED" in refused[1]["message"]


def test_avro_references_and_import_mode(registry):
    """An Avro schema naming a type another subject holds (a reference), refused while that
    reference does not exist and while another schema still references it; IMPORT mode keeps
    the ids and versions it is given."""
    address = json.dumps({"type": "record", "name": "Address", "namespace": "shop",
                          "fields": [{"name": "city", "type": "string"}]})
    person = json.dumps({"type": "record", "name": "Person", "namespace": "shop",
                         "fields": [{"name": "home", "type": "shop.Address"}]})
    ref = [{"name": "shop.Address", "subject": "address", "version": 1}]
    missing = call(registry, "POST", "/subjects/person/versions", {"schema": person, "references": ref})
    assert (missing[0], missing[1]["error_code"]) == (422, 42201)
    assert call(registry, "POST", "/subjects/address/versions", {"schema": address})[0] == 200
    person_id = call(registry, "POST", "/subjects/person/versions", {"schema": person, "references": ref})[1]["id"]
    got = call(registry, "GET", "/subjects/person/versions/1")[1]
    assert got["references"] == ref and got["id"] == person_id
    assert call(registry, "GET", "/subjects/address/versions/1/referencedby")[1] == [person_id]
    in_use = call(registry, "DELETE", "/subjects/address")
    assert (in_use[0], in_use[1]["error_code"]) == (422, 42206)

    assert call(registry, "PUT", "/mode/imported", {"mode": "IMPORT"})[1] == {"mode": "IMPORT"}
    imported = call(registry, "POST", "/subjects/imported/versions", {"schema": address, "id": 500, "version": 7})
    assert imported[1] == {"id": 500}
    assert call(registry, "GET", "/subjects/imported/versions")[1] == [7]
    outside = call(registry, "POST", "/subjects/other/versions", {"schema": address, "id": 501})
    assert (outside[0], outside[1]["error_code"]) == (422, 42205)
