"""The nemesis' network partitions, back-to-back restarts, internal leadership moves and topics
made during its faults, on a real simulated cluster in process: each kind does what it says
(an isolated broker is fenced after broker.session.timeout.ms and comes back in sync, a cut
follower leaves the ISR, topics and partitions are made while a broker is out), and after
healing every broker answers on its port and every partition is whole again."""

from __future__ import annotations

import time

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from trafka.testing import TrafkaBroker

CLUSTER = {"cluster.brokers": 3, "offsets.topic.num.partitions": 3, "transaction.state.log.num.partitions": 3,
           "share.coordinator.state.topic.num.partitions": 3, "broker.session.timeout.ms": 800,
           "replica.lag.time.max.ms": 1000, "default.replication.factor": 3, "min.insync.replicas": 2}
KINDS = ["isolate", "cut", "bounce", "create", "coordinator"]


def test_network_partitions_bounces_moves_and_topics_made_under_faults(tmp_path):
    with TrafkaBroker(data_dir=tmp_path / "data", config=CLUSTER, in_process=True) as cluster:
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
        admin.create_topics([NewTopic("jobs", 3, 3)])["jobs"].result(10)
        producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all", "enable.idempotence": True})
        for i in range(3000):
            producer.produce("jobs", b"j%d" % i, partition=i % 3)
        assert producer.flush(30) == 0
        report = cluster.nemesis(seed=5, duration_s=12, faults=KINDS, max_down=1)  # every kind, by its plan
        assert report["state"] == "done", report
        assert not [e for e in report["events"] if e["result"].startswith("failed")], report["events"]
        done = {e["kind"] for e in report["events"] if e["result"] == "done"}
        assert {"isolate", "fence", "rejoin", "cut", "mend", "bounce", "create"} <= done, report["events"]
        # A leadership move is skipped when the replica it picks leads already or is out of
        # sync, which depends on timing; that it ran is what holds.
        assert {e["kind"] for e in report["events"]} >= {"coordinator"}, report["events"]
        assert report["serving"] and all(report["serving"].values()), report["serving"]
        assert all(b["alive"] for b in cluster.brokers()) and cluster.faults() == []
        made = [e["target"] for e in report["events"] if e["kind"] == "create" and e["result"] == "done"]
        topics = admin.list_topics(timeout=10).topics
        for target in made:
            name = target.split(" ")[0]
            assert name in topics, (target, sorted(topics))
        # Healed: every partition of every topic has all its replicas in sync again.
        deadline = time.monotonic() + 30
        while True:
            behind = [(name, p, state["isr"], state["replicas"]) for name in topics for p in topics[name].partitions
                      if set((state := cluster.partition_state(name, p))["isr"]) != set(state["replicas"])]
            if not behind or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert not behind, behind[:5]
