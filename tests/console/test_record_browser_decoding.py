"""The record browser decodes by default: a key or value Confluent's Avro serializer framed (magic
byte 0, the 4-byte id of a schema in trafka's built-in registry) is shown decoded with its subject
and version, in `GET /api/v1/topics/<t>/partitions/<p>/records` and on the page (headless
Chromium); raw text, hex, base64 and JSON stay one choice away. Bytes that only look framed (an
id the registry does not hold) are shown as text."""

from __future__ import annotations

import json
import urllib.request

from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from playwright.sync_api import expect

WIDGET = '{"type":"record","name":"Widget","fields":[{"name":"name","type":"string"},{"name":"count","type":"int"}]}'
WIDGET_V2 = ('{"type":"record","name":"Widget","fields":[{"name":"name","type":"string"},{"name":"count","type":"int"},'
             '{"name":"colour","type":"string","default":"grey"}]}')
KEY = '{"type":"record","name":"WidgetKey","fields":[{"name":"sku","type":"string"}]}'
NOT_REGISTERED = b"\x00\x00\x00\x03\xe7plain"  # magic byte 0 and id 999, which nobody registered


def produce_widgets(broker) -> dict[str, int]:
    """Three Avro records (key and value framed, the second with version 2) and two that are not."""
    client = SchemaRegistryClient({"url": broker.schema_registry_url.rstrip("/")})
    values, keys = SerializationContext("widgets", MessageField.VALUE), SerializationContext("widgets", MessageField.KEY)
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
    producer.produce("widgets", key=AvroSerializer(client, KEY)({"sku": "w-1"}, keys),
                     value=AvroSerializer(client, WIDGET)({"name": "widget", "count": 3}, values), partition=0)
    producer.produce("widgets", key=AvroSerializer(client, KEY)({"sku": "w-2"}, keys),
                     value=AvroSerializer(client, WIDGET_V2)({"name": "gadget", "count": 1, "colour": "red"}, values),
                     partition=0)
    producer.produce("widgets", key=b"plain-key", value=b"just text", partition=0)
    producer.produce("widgets", value=NOT_REGISTERED, partition=0)
    assert producer.flush(10) == 0
    return {"value": client.get_latest_version("widgets-value").schema_id,
            "value_v1": client.get_version("widgets-value", 1).schema_id,
            "key": client.get_latest_version("widgets-key").schema_id}


def get_records(broker, query: str = "") -> list[dict]:
    url = broker.console_url + "api/v1/topics/widgets/partitions/0/records" + query
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.loads(answer.read())["records"]


def test_the_records_api_decodes_registered_avro_by_default(broker):
    ids = produce_widgets(broker)
    first, second, text, unregistered = get_records(broker)
    assert first["value"] == {"name": "widget", "count": 3}
    assert first["value_schema"] == {"schema_id": ids["value_v1"], "subject": "widgets-value", "version": 1, "type": "AVRO"}
    assert first["key"] == {"sku": "w-1"}
    assert first["key_schema"] == {"schema_id": ids["key"], "subject": "widgets-key", "version": 1, "type": "AVRO"}
    assert second["value"] == {"name": "gadget", "count": 1, "colour": "red"}
    assert (second["value_schema"]["version"], second["value_schema"]["schema_id"]) == (2, ids["value"])
    assert (text["key"], text["value"], text["key_schema"], text["value_schema"]) == ("plain-key", "just text", None, None)
    assert unregistered["value_schema"] is None and unregistered["value"].endswith("plain")

    raw = {fmt: get_records(broker, f"?format={fmt}&limit=1")[0] for fmt in ("text", "hex", "base64", "json")}
    assert raw["hex"]["value"].startswith(f"00 00 00 00 {ids['value_v1']:02x} ")
    assert raw["text"]["value"].startswith("\x00\x00\x00\x00") and raw["text"]["value"].endswith("widget\x06")
    assert all(r["value_schema"] is None for r in raw.values())


def test_the_record_browser_shows_subject_and_version_and_raw_bytes_one_choice_away(broker, page):
    produce_widgets(broker)
    page.goto(broker.console_url + "topics/widgets/partitions/0/records")
    expect(page.locator("select[name=format]")).to_have_value("decoded")
    second = page.locator('#records tr[data-offset="1"]')
    expect(second.locator(".value .schema")).to_have_text("widgets-value v2")
    expect(second.locator(".value pre")).to_contain_text('"colour": "red"')
    expect(second.locator(".key .schema")).to_have_text("widgets-key v1")
    expect(page.locator('#records tr[data-offset="2"] .value pre')).to_have_text("just text")
    expect(page.locator('#records tr[data-offset="2"] .value .schema')).to_have_count(0)

    page.select_option("select[name=format]", "hex")
    page.click("#browse button")
    expect(second.locator(".value pre")).to_contain_text("00 00 00 00 0")
    expect(second.locator(".value .schema")).to_have_count(0)
