"""The console and /metrics of a simulated cluster (docs/cluster.md): the brokers up and down,
each partition's leader and ISR from its leader's replica, under-replicated and offline
partitions, in a real headless Chromium."""

import re
import urllib.request

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from playwright.sync_api import expect

from trafka.testing import TrafkaBroker


@pytest.fixture
def cluster(tmp_path):
    with TrafkaBroker(data_dir=tmp_path / "data", in_process=True,
                      config={"cluster.brokers": 3, "cluster.broker.racks": "a,b,c"}) as running:
        yield running


def _metrics(cluster) -> str:
    with urllib.request.urlopen(cluster.console_url.rstrip("/") + "/metrics", timeout=10) as answer:
        return answer.read().decode()


def test_the_overview_shows_brokers_leaders_and_under_replicated_partitions(cluster, page):
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    for future in admin.create_topics([NewTopic("orders", 3, 3), NewTopic("single", 1, 1)]).values():
        future.result(10)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all"})
    for i in range(30):
        producer.produce("orders", b"o-%d" % i, partition=i % 3)
    assert producer.flush(10) == 0
    page.goto(cluster.console_url)
    expect(page.locator("#brokers tbody tr")).to_have_count(3)
    expect(page.locator('#brokers tr[data-broker="1"] .broker-state')).to_have_text("up")
    expect(page.locator('#topics tr[data-topic="orders"] .high-watermark')).to_have_text(["10", "10", "10"])
    single_leader = cluster.partition_state("single", 0)["leader"]
    victim = next(b for b in range(3) if b != single_leader)
    cluster.stop_broker(victim)
    expect(page.locator(f'#brokers tr[data-broker="{victim}"] .broker-state')).to_have_text("down")
    expect(page.locator('#topics tr[data-topic="orders"].under-replicated')).to_have_count(3)
    text = _metrics(cluster)
    assert f'trafka_broker_up{{broker="{victim}",rack="{"abc"[victim]}"}} 0.0' in text
    under = sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                if line.startswith("trafka_under_replicated_partitions{"))
    assert under >= 3  # the three orders partitions at least (internal topics too)
    assert "trafka_offline_partitions_count 0.0" in text
    # Each partition's figures come from its leader, wherever it is.
    assert 'trafka_partition_high_watermark{partition="2",topic="orders"} 10.0' in text
    cluster.stop_broker(single_leader)
    assert "trafka_offline_partitions_count 0.0" not in _metrics(cluster)
    expect(page.locator('#topics tr[data-topic="single"] .leader')).to_contain_text("offline")
    cluster.start_broker(victim)
    cluster.start_broker(single_leader)
    expect(page.locator('#brokers tr.down')).to_have_count(0)


def test_the_partition_page_names_its_leader_replicas_and_isr(cluster, page):
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    for future in admin.create_topics([NewTopic("orders", 1, 3)]).values():
        future.result(10)
    state = cluster.partition_state("orders", 0)
    page.goto(cluster.console_url + "topics/orders/partitions/0")
    replication = page.locator("#replication")
    expect(replication.locator("#leader")).to_have_text(f"broker {state['leader']}")
    expect(replication.locator("#replicas")).to_have_text(", ".join(str(r) for r in state["replicas"]))
    expect(replication.locator("#isr")).to_have_text(", ".join(str(r) for r in sorted(state["isr"])))
    follower = next(r for r in state["replicas"] if r != state["leader"])
    cluster.stop_broker(follower)
    in_sync = ", ".join(str(r) for r in sorted(state["isr"]) if r != follower)
    expect(replication.locator("#isr")).to_have_text(in_sync, timeout=30000)
    expect(replication.locator("#offline")).to_have_text(str(follower))
    cluster.start_broker(follower)


def test_one_broker_has_no_replication_line(tmp_path, page):
    with TrafkaBroker(data_dir=tmp_path / "one", in_process=True) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
        for future in admin.create_topics([NewTopic("solo", 1, 1)]).values():
            future.result(10)
        page.goto(broker.console_url + "topics/solo/partitions/0")
        expect(page.locator("#high-watermark")).to_have_text("0")
        expect(page.locator("#replication")).to_be_hidden()


def test_the_overview_shows_a_running_nemesis_and_its_faults(cluster, page):
    """A nemesis started through the API shows on the overview as it runs: its settings, each
    fault as it happens (newest first), the fault on the broker it struck in the broker table,
    and what it healed once stopped."""
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    for future in admin.create_topics([NewTopic("orders", 3, 3)]).values():
        future.result(10)
    page.goto(cluster.console_url)
    expect(page.locator("#nemesis-section")).to_be_hidden()
    cluster.nemesis(seed=5, duration_s=60, faults=["stop", "kill"], max_down=1, wait=False)
    expect(page.locator("#nemesis-summary")).to_contain_text("running · seed 5")
    expect(page.locator("#nemesis-events .nemesis-event").first).to_be_visible(timeout=15000)
    struck = next(e for e in cluster.nemesis_report()["events"] if e["result"] == "done")
    node = int(struck["target"].split()[1])
    # The broker's last fault (its outage may have ended already: then it says start).
    expect(page.locator(f'#brokers tr[data-broker="{node}"] .nemesis')).to_have_text(re.compile(r"^(stop|kill|start)$"))
    cluster.stop_nemesis()
    expect(page.locator("#nemesis-summary")).to_contain_text("stopped · seed 5")
    expect(page.locator('#brokers tr.down')).to_have_count(0)
    expect(page.locator(f'#brokers tr[data-broker="{node}"] .nemesis')).to_have_text("")
