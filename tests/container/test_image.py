"""The container image: built from the Dockerfile, its CMD run (in a chroot), used by kafka-python."""

from __future__ import annotations

import pytest
from kafka import KafkaAdminClient, KafkaProducer

from testkit.drivers import KafkaPython
from trafka.testing.waiting import wait_until

pytestmark = [pytest.mark.container, pytest.mark.timeout(1500)]


def test_image_metadata(trafka_image):
    config = trafka_image["config"]
    assert config["User"] not in ("", "root", "0")
    assert list(config["Volumes"]) == ["/var/lib/trafka"]
    assert "9092/tcp" in config["ExposedPorts"]
    assert "trafka serve" in " ".join(config["Cmd"])
    assert "trafka healthcheck" in " ".join(trafka_image["config"]["Healthcheck"]["Test"])


def test_image_serves_kafka_python_and_keeps_data_in_its_volume(run_image):
    container = run_image()
    bootstrap = f"127.0.0.1:{container.env['TRAFKA_PORT']}"
    assert container.healthcheck().returncode == 0

    producer = KafkaProducer(bootstrap_servers=bootstrap)
    sent = [producer.send("in-a-box", key=f"k{i}".encode(), value=f"v{i}".encode()).get(timeout=15) for i in range(50)]
    producer.close()
    assert [m.offset for m in sent] == list(range(50))
    got = KafkaPython(bootstrap).consume("in-a-box", 50)
    assert [(r.key, r.value) for r in got] == [(f"k{i}".encode(), f"v{i}".encode()) for i in range(50)]

    # The data lives in the declared volume: a new container on the same volume still has it.
    assert container.stop() == 0
    unhealthy = container.healthcheck()
    assert unhealthy.returncode == 1, unhealthy
    container = run_image()
    assert [r.value for r in KafkaPython(bootstrap).consume("in-a-box", 50)] == [f"v{i}".encode() for i in range(50)]


def test_advertised_host_comes_from_the_environment(run_image):
    container = run_image({"TRAFKA_ADVERTISED_HOST": "localhost"})
    admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{container.env['TRAFKA_PORT']}")
    try:
        brokers = wait_until(lambda: admin.describe_cluster()["brokers"], 10, "DescribeCluster to list the broker")
    finally:
        admin.close()
    assert [(b["host"], b["port"]) for b in brokers] == [("localhost", int(container.env["TRAFKA_PORT"]))]
