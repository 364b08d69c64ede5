"""TrafkaContainer: the testcontainers surface of KafkaContainer, checked without Docker, and
run for real where a Docker daemon exists."""

from __future__ import annotations

import inspect
import os
import stat
import subprocess

import pytest
from kafka import KafkaConsumer, KafkaProducer

from trafka.testing import TrafkaContainer
from trafka.testing import container as tc_module


def test_same_surface_as_kafka_container():
    from testcontainers.community.kafka import KafkaContainer
    from testcontainers.core.container import DockerContainer

    assert issubclass(TrafkaContainer, DockerContainer)
    for name in ("get_bootstrap_server", "start", "stop", "__enter__", "__exit__", "with_env", "get_exposed_port"):
        assert callable(getattr(TrafkaContainer, name)), name
    assert list(inspect.signature(TrafkaContainer.get_bootstrap_server).parameters) == \
        list(inspect.signature(KafkaContainer.get_bootstrap_server).parameters)
    # start(timeout=...) like KafkaContainer.start
    assert "timeout" in inspect.signature(TrafkaContainer.start).parameters
    assert "timeout" in inspect.signature(KafkaContainer.start).parameters


def test_configures_image_port_and_command_without_docker(monkeypatch):
    class NoDocker:
        def __init__(self, **kwargs):
            pass

    monkeypatch.setattr("testcontainers.core.container.DockerClient", NoDocker)
    monkeypatch.delenv("TRAFKA_IMAGE", raising=False)
    container = TrafkaContainer().with_config("num.partitions", 3)
    assert container.image.endswith("trafka:latest")
    assert list(container.ports) in (["9092"], [9092])
    assert container.env["TRAFKA_PORT"] == "9092"
    assert container.config == {"num.partitions": 3}
    monkeypatch.setenv("TRAFKA_IMAGE", "registry.example/trafka:1.2")
    assert TrafkaContainer().image.endswith("registry.example/trafka:1.2")


def test_start_command_reads_the_advertised_address_written_after_start(tmp_path):
    """The container's command, run by sh with a stand-in `trafka`, gets the right arguments."""
    fake = tmp_path / "bin" / "trafka"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    env_file = tmp_path / "tc.env"
    env_file.write_text(tc_module.start_env("10.1.2.3", 49153, {"num.partitions": 3, "log.retention.ms": "it's"}))
    script = tc_module.WAIT_THEN_SERVE.replace(tc_module.START_ENV_FILE, str(env_file))
    out = subprocess.run(["sh", "-c", script], env={"PATH": f"{fake.parent}:{os.environ['PATH']}", "TRAFKA_PORT": "9092"},
                         capture_output=True, text=True, timeout=10, check=True).stdout.splitlines()
    assert out == ["serve", "--host", "0.0.0.0", "--port", "9092", "--data-dir", "/var/lib/trafka",
                   "--config", "advertised.host=10.1.2.3", "--config", "advertised.port=49153",
                   "--config", "num.partitions=3", "--config", "log.retention.ms=it's"]


@pytest.mark.container
@pytest.mark.timeout(900)
def test_trafka_container_runs_under_testcontainers(docker_image_for_testcontainers):
    with TrafkaContainer(docker_image_for_testcontainers) as kafka:
        bootstrap = kafka.get_bootstrap_server()
        producer = KafkaProducer(bootstrap_servers=bootstrap)
        producer.send("tc", b"hello").get(timeout=15)
        producer.close()
        consumer = KafkaConsumer("tc", bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                                 consumer_timeout_ms=10000)
        assert [r.value for r in consumer] == [b"hello"]
        consumer.close()
