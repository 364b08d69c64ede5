"""The console's Schemas pages and the record browser's schema decoding, in headless Chromium:
subjects with their versions and compatibility, a subject's versions and the diff between two,
Avro values decoded by the id that frames them; the overview folds internal topics away and the
partition diagram shows whole offsets."""

from __future__ import annotations

from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from playwright.sync_api import expect

V1 = '{"type":"record","name":"Order","fields":[{"name":"id","type":"int"}]}'
V2 = '{"type":"record","name":"Order","fields":[{"name":"id","type":"int"},{"name":"note","type":"string","default":""}]}'


def test_schemas_pages_and_decoded_records(broker, page):
    client = SchemaRegistryClient({"url": broker.schema_registry_url.rstrip("/")})
    ctx = SerializationContext("orders", MessageField.VALUE)
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
    producer.produce("orders", AvroSerializer(client, V1)({"id": 1}, ctx), partition=0)
    producer.produce("orders", AvroSerializer(client, V2)({"id": 2, "note": "gift"}, ctx), partition=0)
    assert producer.flush(10) == 0

    page.goto(broker.console_url + "schemas")
    row = page.locator('#subjects tr[data-subject="orders-value"]')
    expect(row.locator(".versions")).to_have_text("1, 2")
    expect(row.locator(".type")).to_have_text("AVRO")
    expect(row.locator(".level")).to_have_text("BACKWARD")
    row.locator("a").click()
    expect(page.locator('section.schema[data-version="2"] pre')).to_contain_text('"note"')
    expect(page.locator("#diff .add", has_text='"name": "note"')).to_have_count(1)

    page.goto(broker.console_url + "topics/orders/partitions/0/records")  # decoded by default
    value = page.locator('#records tr[data-offset="1"] .value')
    expect(value.locator("pre")).to_contain_text('"note": "gift"')
    expect(value.locator(".schema")).to_have_text("orders-value v2")

    page.goto(broker.console_url)
    expect(page.locator('#topics tr[data-topic="orders"]').first).to_be_visible()
    internal = page.locator('#topics tr[data-topic="_schemas"]')
    expect(internal).to_be_hidden()
    page.check("#show-internal")
    expect(internal).to_be_visible()


def test_the_partition_diagram_shows_whole_offsets(broker, page):
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 50})
    for i in range(10_020):
        producer.produce("long", b"x", partition=0)
    assert producer.flush(30) == 0
    page.goto(broker.console_url + "topics/long/partitions/0")
    cell = page.locator('#cells .cell[data-offset="10019"]')
    expect(cell).to_have_text("10019")
    box = cell.bounding_box()
    assert box is not None and box["width"] > 0
    assert page.evaluate("(el) => el.scrollWidth <= el.clientWidth + 1", cell.element_handle())
