"""The console's pages in a real headless Chromium, against a broker that real clients use."""

import json

from kafka import KafkaConsumer, KafkaProducer
from kafka.structs import OffsetAndMetadata, TopicPartition
from playwright.sync_api import expect


def produce(broker, topic, values, **config):
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers, **config)
    try:
        for value in values:
            producer.send(topic, key=b"k", value=value, partition=0)
        producer.flush()
    finally:
        producer.close()


def consumer(broker, group, topic=None):
    c = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers, group_id=group, enable_auto_commit=False,
                      auto_offset_reset="earliest", consumer_timeout_ms=3000)
    if topic:
        c.assign([TopicPartition(topic, 0)])
    return c


def test_overview_lists_topics_and_groups(broker, page):
    produce(broker, "orders", [b"one", b"two"])
    c = consumer(broker, "billing", "orders")
    c.commit({TopicPartition("orders", 0): OffsetAndMetadata(1, "", -1)})
    c.close()
    page.goto(broker.console_url)
    row = page.locator('#topics tr[data-topic="orders"]')
    expect(row.locator(".high-watermark")).to_have_text("2")
    expect(page.locator('#groups tr[data-group="billing"] .total-lag')).to_have_text("1")
    expect(page.locator('#groups tr[data-group="billing"] .state')).to_have_text("Empty")
    expect(page.locator("#live")).to_have_text("live")


def test_a_produced_record_appears_on_the_partition_page_within_a_second(broker, page):
    produce(broker, "clicks", [b"first"])
    page.goto(broker.console_url + "topics/clicks/partitions/0")
    expect(page.locator('.cell[data-offset="0"]')).to_be_visible()
    expect(page.locator("#high-watermark")).to_have_text("1")
    before = page.evaluate("performance.navigation.type")
    produce(broker, "clicks", [b"second"])
    expect(page.locator('.cell[data-offset="1"]')).to_be_visible(timeout=1000)
    expect(page.locator("#high-watermark")).to_have_text("2", timeout=1000)
    assert page.evaluate("performance.navigation.type") == before  # no reload
    assert page.evaluate("performance.getEntriesByType('navigation').length") == 1


def test_a_commit_changes_the_lag_shown(broker, page):
    produce(broker, "payments", [b"a", b"b", b"c", b"d"])
    c = consumer(broker, "ledger", "payments")
    c.commit({TopicPartition("payments", 0): OffsetAndMetadata(1, "", -1)})
    page.goto(broker.console_url + "topics/payments/partitions/0")
    marker = page.locator('.group-marker[data-group="ledger"]')
    expect(marker.locator(".lag")).to_have_text("3")
    c.commit({TopicPartition("payments", 0): OffsetAndMetadata(3, "", -1)})
    expect(marker.locator(".lag")).to_have_text("1", timeout=2000)
    expect(marker.locator(".committed")).to_have_text("3")
    c.close()


def test_retention_deleting_a_segment_moves_the_log_start_on_the_page(broker, page):
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    admin.create_topics([NewTopic("aging", 1, 1, topic_configs={"segment.bytes": "200", "retention.ms": "60000"})])
    admin.close()
    produce(broker, "aging", [b"x" * 120 for _ in range(4)], linger_ms=0, batch_size=1)
    page.goto(broker.console_url + "topics/aging/partitions/0")
    expect(page.locator("#log-start")).to_have_text("0")
    segments = page.locator(".segment[data-base-offset]").count()
    assert segments >= 3
    expect(page.locator("#goes-by-time")).to_contain_text("by time: segment 0 goes at")
    broker.advance_clock(400_000)  # past retention.ms and log.retention.check.interval.ms
    expect(page.locator("#log-start")).to_have_text("4", timeout=3000)
    expect(page.locator(".segment.gone")).to_contain_text("offsets < 4")


def test_the_record_browser_shows_a_json_value(broker, page):
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers)
    producer.send("events", key=b"user-7", value=json.dumps({"total": 12, "items": ["a"]}).encode(), partition=0,
                  headers=[("source", b"web")])
    producer.send("events", key=b"bin", value=bytes([0, 1, 254, 255]), partition=0)
    producer.flush()
    producer.close()
    page.goto(broker.console_url + "topics/events/partitions/0/records")
    page.select_option("select[name=format]", "json")
    page.click("#browse button")
    row = page.locator('#records tr[data-offset="0"]')
    expect(row.locator(".value")).to_contain_text('"total": 12')
    expect(row.locator(".key")).to_have_text("user-7")
    expect(row.locator(".headers")).to_contain_text("source: web")
    page.select_option("select[name=format]", "hex")
    page.fill("input[name=position]", "1")
    page.click("#browse button")
    expect(page.locator('#records tr[data-offset="1"] .value')).to_have_text("00 01 fe ff")
    expect(page.locator('#records tr[data-offset="0"]')).to_have_count(0)


def _answer_dialogs(page, accept: bool, questions: list):
    def on_dialog(dialog):
        questions.append(dialog.message)
        dialog.accept() if accept else dialog.dismiss()

    page.once("dialog", on_dialog)


def test_actions_ask_for_confirmation_and_work(broker, page):
    page.goto(broker.console_url)
    expect(page.locator("#live")).to_have_text("live")
    questions: list[str] = []
    page.fill("#create-topic input[name=name]", "made-here")
    page.fill("#create-topic input[name=partitions]", "2")
    _answer_dialogs(page, False, questions)
    page.click("#create-topic button")
    expect(page.locator("#toast")).to_have_text("cancelled")
    assert questions == ["Create topic made-here with 2 partition(s)?"]
    expect(page.locator('#topics tr[data-topic="made-here"]')).to_have_count(0)
    _answer_dialogs(page, True, questions)
    page.click("#create-topic button")
    expect(page.locator('#topics tr[data-topic="made-here"]')).to_have_count(2)

    # Produce from the partition page, seen by a real consumer.
    page.goto(broker.console_url + "topics/made-here/partitions/1")
    expect(page.locator(".siblings a")).to_have_text("P0")  # the other partition of the topic
    page.fill("#produce input[name=key]", "k1")
    page.fill("#produce input[name=value]", '{"hello": "world"}')
    page.fill("#produce input[name=headers]", "origin=console")
    _answer_dialogs(page, True, questions)
    page.click("#produce button")
    expect(page.locator('.cell[data-offset="0"]')).to_be_visible()
    c = consumer(broker, None, None)
    c.assign([TopicPartition("made-here", 1)])
    record = next(iter(c))
    c.close()
    assert (record.key, record.value, record.headers) == (b"k1", b'{"hello": "world"}', [("origin", b"console")])

    # Delete records before offset 1.
    page.fill("#delete-records input[name=offset]", "1")
    _answer_dialogs(page, True, questions)
    page.click("#delete-records button")
    expect(page.locator("#log-start")).to_have_text("1")
    assert questions[-1] == "Delete every record of made-here-1 before offset 1?"

    # Reset an empty group's offsets to earliest.
    c = consumer(broker, "resetters", "made-here")
    c.commit({TopicPartition("made-here", 0): OffsetAndMetadata(0, "", -1)})
    c.close()
    produce(broker, "made-here", [b"a", b"b", b"c"])
    page.goto(broker.console_url + "groups/resetters")
    page.select_option("#reset-offsets select[name=to]", "latest")
    _answer_dialogs(page, True, questions)
    page.click("#reset-offsets button")
    expect(page.locator('#offsets tr[data-topic="made-here"] .committed')).to_have_text("3")
    expect(page.locator("#total-lag")).to_have_text("0")

    # Delete the topic from the overview.
    page.goto(broker.console_url)
    _answer_dialogs(page, True, questions)
    page.click('button.delete-topic[data-topic="made-here"]')
    expect(page.locator('#topics tr[data-topic="made-here"]')).to_have_count(0)
    assert questions[-1] == "Delete topic made-here and all its records?"


def test_group_and_broker_pages_show_members_clients_and_settings(broker, page):
    produce(broker, "jobs", [b"1"])
    c = KafkaConsumer("jobs", bootstrap_servers=broker.bootstrap_servers, group_id="workers", client_id="worker-7",
                      auto_offset_reset="earliest", consumer_timeout_ms=2000)
    next(iter(c))
    c.commit()
    page.goto(broker.console_url + "groups/workers")
    expect(page.locator("#state")).to_have_text("Stable")
    expect(page.locator("#protocol-type")).to_have_text("consumer")
    expect(page.locator("#members .client-id")).to_have_text("worker-7")
    expect(page.locator('#offsets tr[data-topic="jobs"] .committed')).to_have_text("1")
    newest = page.locator("#rebalances tbody tr").first
    expect(newest.locator(".transition")).to_have_text("CompletingRebalance → Stable")
    joined = page.locator("#rebalances tbody tr", has_text="Empty → PreparingRebalance").last
    expect(joined.locator(".reason")).to_contain_text("joined")
    page.goto(broker.console_url + "broker")
    expect(page.locator("#http-services a").last).to_have_attribute("href", broker.rest_proxy_url + "v3/clusters")
    connection = page.locator("#connections tr", has_text="worker-7").first
    expect(connection.locator(".software")).to_contain_text("kafka-python")
    expect(page.locator('#requests tr[data-api="JoinGroup"] .count')).not_to_have_text("0")
    expect(page.locator('#settings tr[data-setting="console.port"] .source')).to_have_text("STATIC_BROKER_CONFIG")
    expect(page.locator('#settings tr[data-setting="num.partitions"] .value')).to_have_text("1")
    c.close()
    page.goto(broker.console_url + "groups/workers")
    expect(page.locator("#state")).to_have_text("Empty")


def test_compaction_shows_as_holes_and_tombstones_on_the_partition_page(broker, page):
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    admin.create_topics([NewTopic("customers", 1, 1, topic_configs={
        "cleanup.policy": "compact", "segment.bytes": "400", "min.cleanable.dirty.ratio": "0.01"})])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers)
    for i in range(12):
        producer.send("customers", key=b"c%d" % (i % 3), value=b"v%d" % i).get(10)
    producer.send("customers", key=b"c1", value=None).get(10)  # a tombstone
    for i in range(6):
        producer.send("customers", key=b"d%d" % i, value=b"w").get(10)
    producer.close()
    page.goto(broker.console_url + "topics/customers/partitions/0")
    expect(page.locator('.cell[data-offset="12"].tombstone')).to_be_visible()
    expect(page.locator(".cell.hole")).to_have_count(0)
    broker.advance_clock(20_000)  # past log.cleaner.backoff.ms: the cleaner runs
    expect(page.locator('.cell.hole[data-offset="0"]')).to_be_visible(timeout=3000)
    expect(page.locator('.cell[data-offset="11"]:not(.hole)')).to_be_visible()
    # A consumer from the log start gets the surviving records, the emptied segments skipped.
    c = KafkaConsumer("customers", bootstrap_servers=broker.bootstrap_servers, auto_offset_reset="earliest",
                      consumer_timeout_ms=2000)
    seen = [m.offset for m in c]
    c.close()
    holes = {int(o) for o in page.locator(".cell.hole").evaluate_all("cells => cells.map(c => c.dataset.offset)")}
    assert seen and not holes & set(seen)
    assert set(seen) | holes == set(range(19))


def test_a_share_groups_page_shows_its_share_partitions_and_held_records(broker, page):
    """A share group (confluent-kafka ShareConsumer) on its console page: members, and per
    partition the start offset, records by state and the records a member holds, with their
    delivery counts; /metrics carries the same numbers."""
    import time
    import urllib.request

    from confluent_kafka import AcknowledgeType, ShareConsumer

    from testkit.groups import create_topic, share_from_earliest

    create_topic(broker.bootstrap_servers, "tasks", 1)
    produce(broker, "tasks", [b"a", b"b", b"c"])
    share_from_earliest(broker.bootstrap_servers, "crew")
    share = ShareConsumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "crew", "client.id": "crew-1",
                           "share.acknowledgement.mode": "explicit"})
    share.subscribe(["tasks"])
    got, end = [], time.monotonic() + 20
    while not got and time.monotonic() < end:
        got = share.poll(0.5) or []
    assert [m.value() for m in got] == [b"a", b"b", b"c"]
    share.acknowledge(got[0])
    share.acknowledge(got[1], AcknowledgeType.REJECT)
    share.commit_sync(10)  # offset 2 stays held by the member
    page.goto(broker.console_url + "groups/crew")
    expect(page.locator("#protocol-type")).to_have_text("share")
    expect(page.locator("#members .client-id")).to_have_text("crew-1")
    row = page.locator('#share-partitions tr[data-topic="tasks"]')
    expect(row.locator(".start-offset")).to_have_text("2")
    expect(row.locator(".acquired")).to_have_text("1")
    expect(row.locator(".held")).to_contain_text("delivery 1")
    expect(row.locator(".held")).to_contain_text("locked until")
    expect(row.locator(".in-flight")).to_have_text("1 / 2000")  # group.share.partition.max.record.locks
    expect(row.locator(".deliveries")).to_have_text("1 × 1")
    with urllib.request.urlopen(broker.console_url + "metrics", timeout=10) as response:
        metrics = response.read().decode()
    assert 'trafka_share_partition_start_offset{group="crew",partition="0",topic="tasks"} 2.0' in metrics
    assert 'trafka_share_partition_records{group="crew",partition="0",state="acquired",topic="tasks"} 1.0' in metrics
    share.acknowledge(got[2])
    share.commit_sync(10)
    share.close()
