"""Screenshots of the console's main pages for docs/console.md.

    /work/bin/wtpy tests/console/make_screenshots.py    (or .venv/bin/python ...)

Starts an in-process broker, makes a small scene with kafka-python (a topic with small
segments and retention, a consumer group behind by a few records, a compacted topic with a
tombstone), opens each page in Debian's chromium and writes docs/console/*.png (palette PNGs,
so they stay small).
"""

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from kafka import KafkaConsumer, KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.structs import OffsetAndMetadata, TopicPartition
from PIL import Image
from playwright.sync_api import sync_playwright

from trafka.testing import TrafkaBroker

OUT = Path(__file__).resolve().parents[2] / "docs" / "console"


def scene(broker):
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    admin.create_topics([
        NewTopic("orders", 2, 1, topic_configs={"segment.bytes": "1200", "retention.ms": "3600000", "retention.bytes": "6000"}),
        NewTopic("customers", 1, 1, topic_configs={"cleanup.policy": "compact", "segment.bytes": "400",
                                                    "min.cleanable.dirty.ratio": "0.01"}),
    ])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers, linger_ms=0, client_id="checkout-service")
    for i in range(40):
        order = {"order": 1000 + i, "total": round(9.5 + i * 1.25, 2), "items": ["book", "pen"][: 1 + i % 2]}
        producer.send("orders", key=b"customer-%d" % (i % 7), value=json.dumps(order).encode(), partition=0,
                      headers=[("source", b"web" if i % 3 else b"app")])
    for i in range(24):
        producer.send("customers", key=b"customer-%d" % (i % 5), value=json.dumps({"name": f"Customer {i}"}).encode()).get(10)
    producer.send("customers", key=b"customer-2", value=None).get(10)
    for i in range(3):
        producer.send("customers", key=b"customer-%d" % i, value=json.dumps({"name": f"Customer {i}"}).encode()).get(10)
    producer.flush()
    producer.close()
    broker.advance_clock(20_000)  # past log.cleaner.backoff.ms: the cleaner compacts "customers"
    time.sleep(0.5)
    billing = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers, group_id="billing", enable_auto_commit=False)
    billing.commit({TopicPartition("orders", 0): OffsetAndMetadata(31, "", -1)})
    billing.close()
    shipping = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers, group_id="shipping", enable_auto_commit=False)
    shipping.commit({TopicPartition("orders", 0): OffsetAndMetadata(37, "", -1)})
    shipping.close()
    avro_widgets(broker)
    live = KafkaConsumer("orders", bootstrap_servers=broker.bootstrap_servers, group_id="analytics",
                         client_id="analytics-1", auto_offset_reset="earliest", consumer_timeout_ms=1500)
    list(live)
    live.commit()
    return live


def avro_widgets(broker):
    """A topic written by Confluent's Avro serializer through trafka's own registry: what the
    record browser decodes by default."""
    from confluent_kafka import Producer
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    widget = json.dumps({"type": "record", "name": "Widget", "fields": [
        {"name": "name", "type": "string"}, {"name": "count", "type": "int"},
        {"name": "colour", "type": "string", "default": "grey"}]})
    serialize = AvroSerializer(SchemaRegistryClient({"url": broker.schema_registry_url}), widget)
    context = SerializationContext("widgets", MessageField.VALUE)
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
    for i, (name, colour) in enumerate([("widget", "red"), ("gadget", "blue"), ("gizmo", "grey"), ("sprocket", "green")]):
        producer.produce("widgets", key=b"sku-%d" % i, value=serialize({"name": name, "count": i + 1, "colour": colour}, context))
    producer.flush(10)


def shoot(page, url, name, height=None):
    page.goto(url)
    page.wait_for_selector("#live.on")
    time.sleep(0.6)
    path = OUT / f"{name}.png"
    page.screenshot(path=str(path), full_page=height is None, clip=None if height is None else {"x": 0, "y": 0, "width": 1100, "height": height})
    Image.open(path).convert("RGB").quantize(colors=64).save(path, optimize=True)
    print(f"{path.relative_to(OUT.parents[1])}: {path.stat().st_size // 1024} KiB")


def main() -> int:
    chromium = shutil.which("chromium")
    if chromium is None:
        print("no chromium on PATH (python -m testkit.setup_deps installs it)", file=sys.stderr)
        return 1
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, TrafkaBroker(data_dir=Path(tmp) / "data", in_process=True) as broker:
        live = scene(broker)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1100, "height": 700})
            url = broker.console_url
            shoot(page, url, "overview")
            shoot(page, url + "topics/orders/partitions/0", "partition")
            shoot(page, url + "topics/customers/partitions/0", "compacted", height=330)
            page.goto(url + "topics/widgets/partitions/0/records")  # decoded by default
            page.wait_for_selector("#live.on")
            page.wait_for_selector('#records tr[data-offset="3"]')
            path = OUT / "records.png"
            page.screenshot(path=str(path))
            Image.open(path).convert("RGB").quantize(colors=64).save(path, optimize=True)
            shoot(page, url + "groups/analytics", "group")
            shoot(page, url + "broker", "broker", height=700)
            browser.close()
        live.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
