"""`trafka dump-log`, `trafka describe` (read-only, beside a running broker) and the broker's
start-up refusal of unknown or invalid settings, as subprocesses."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
from kafka.structs import TopicPartition


def trafka(*args, timeout=30) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trafka", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def value(i: int) -> bytes:
    return b"value-%d-" % i + b"a" * 100  # compressible, so the client really gzips it


@pytest.fixture
def written(trafka_broker):
    """Topic 'inspect' (2 partitions): 30 gzip records with keys on partition 0, small segments
    and index entries every batch; DeleteRecords moved partition 0's log start to 5."""
    bootstrap = trafka_broker.bootstrap_servers
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic("inspect", 2, 1, topic_configs={"segment.bytes": "1000", "index.interval.bytes": "1"})])
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", compression_type="gzip")
    for i in range(30):
        producer.send("inspect", key=b"key-%d" % i, value=value(i), partition=0).get(timeout=10)
    producer.close()
    tp = TopicPartition("inspect", 0)
    admin.delete_records({tp: 5})
    admin.close()
    return trafka_broker


def test_dump_log_prints_batches_and_records(written):
    directory = written.data_dir / "inspect-0"
    first = sorted(directory.glob("*.log"))[0]
    out = trafka("dump-log", first)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == f"Dumping {first}"
    batch = re.compile(r"baseOffset: (\d+) lastOffset: (\d+) count: 1 baseSequence: (\d+) lastSequence: \d+ "
                       r"producerId: (\d+) producerEpoch: 0 .* position: (\d+) baseTimestamp: \d+ CreateTime: \d+ "
                       r"size: (\d+) magic: 2 compresscodec: gzip crc: \d+ isvalid: true")
    batches = [batch.match(line) for line in lines[2:]]
    assert batches and all(batches), lines
    assert [int(m[1]) for m in batches] == list(range(int(first.stem), int(first.stem) + len(batches)))
    assert int(batches[0][5]) == 0 and int(batches[1][5]) == int(batches[0][6])  # positions follow sizes
    assert "key:" not in out.stdout

    data = trafka("dump-log", "--print-data-log", first)
    records = [line for line in data.stdout.splitlines() if line.startswith("| offset:")]
    base = int(first.stem)
    assert records[0] == (f"| offset: {base} CreateTime: {records[0].split('CreateTime: ')[1].split()[0]} "
                          f"keySize: {len(b'key-%d' % base)} valueSize: {len(value(base))} sequence: {base} "
                          f"headerKeys: [] key: key-{base} payload: {value(base).decode()}")


def test_dump_log_reads_index_files(written):
    directory = written.data_dir / "inspect-0"
    segment = sorted(directory.glob("*.log"))[-2]  # a closed segment with its indexes complete
    index = trafka("dump-log", segment.with_suffix(".index"), segment.with_suffix(".timeindex"))
    assert index.returncode == 0, index.stderr
    offsets = [int(m[1]) for m in re.finditer(r"^offset: (\d+) position: (\d+)$", index.stdout, re.M)]
    times = re.findall(r"^timestamp: (\d+) offset: (\d+)$", index.stdout, re.M)
    assert offsets and offsets == sorted(offsets) and offsets[0] >= int(segment.stem)
    assert times and int(times[-1][1]) >= int(segment.stem)


def test_describe_reads_a_live_data_dir(written):
    out = trafka("describe", "--data-dir", written.data_dir, "--topic", "inspect")
    assert out.returncode == 0, out.stderr
    rows = [line.split() for line in out.stdout.splitlines()]
    assert rows[0] == ["TOPIC", "PARTITION", "LOG-START-OFFSET", "LOG-END-OFFSET", "LAST-STABLE-OFFSET", "SEGMENTS", "BYTES"]
    directory = written.data_dir / "inspect-0"
    segments = list(directory.glob("*.log"))
    size = sum(p.stat().st_size for p in segments)
    assert rows[1] == ["inspect", "0", "5", "30", "30", str(len(segments)), str(size)]
    assert rows[2] == ["inspect", "1", "0", "0", "0", "1", "0"]


def test_inspection_errors_go_to_stderr(tmp_path):
    missing = trafka("dump-log", tmp_path / "00000000000000000000.log")
    assert missing.returncode == 1 and "No such file" in missing.stderr
    wrong = trafka("dump-log", tmp_path)
    assert wrong.returncode == 1 and "expected a .log" in wrong.stderr
    not_data = trafka("describe", "--data-dir", tmp_path)
    assert not_data.returncode == 1 and "not a trafka data directory" in not_data.stderr


@pytest.mark.parametrize("args, message", [
    (["--config", "log.retention.hourz=1"], "unknown setting 'log.retention.hourz'"),
    (["--config", "log.retention.ms=soon"], "invalid value for log.retention.ms: expected an integer"),
    (["--config", "log.cleaner.enable=maybe"], "invalid value for log.cleaner.enable: expected true or false"),
    (["--config", "log.retention.check.interval.ms=0"], "invalid value for log.retention.check.interval.ms: must be at least 1"),
    (["--config", "log.cleanup.policy=forever"], "invalid value for log.cleanup.policy"),
    (["--config", "num.partitions"], "--config takes NAME=VALUE"),
    (["--config-file", "/nonexistent/server.properties"], "cannot read config file"),
])
def test_serve_refuses_bad_settings_at_start(tmp_path, args, message):
    out = trafka("serve", "--port", "0", "--data-dir", tmp_path / "data", *args, timeout=20)
    assert out.returncode != 0
    assert message in out.stderr
    assert "listening" not in out.stdout


def test_a_properties_file_configures_the_broker(tmp_path):
    properties = tmp_path / "server.properties"
    properties.write_text(
        "# a Kafka-style file\n"
        "num.partitions = 3\n"
        "log.retention.check.interval.ms: 250\n"
        "log.segment.bytes=\\\n    4096\n"
    )
    bad = tmp_path / "bad.properties"
    bad.write_text("num.partitions=3\nno equals sign here\n")
    out = trafka("serve", "--port", "0", "--data-dir", tmp_path / "bad-data", "--config-file", bad, timeout=20)
    assert out.returncode != 0 and f"{bad}:2: expected NAME=VALUE" in out.stderr

    process = subprocess.Popen(
        [sys.executable, "-m", "trafka", "serve", "--port", "0", "--data-dir", str(tmp_path / "data"),
         "--config-file", str(properties)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
    )
    try:
        line = process.stdout.readline()
        port = int(re.search(r"listening on 127\.0\.0\.1:(\d+)", line)[1])
        admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{port}")
        producer = KafkaProducer(bootstrap_servers=f"127.0.0.1:{port}")
        producer.send("auto-created", b"x").get(timeout=10)  # auto-created with num.partitions
        producer.close()
        assert len(admin.describe_topics(["auto-created"])[0]["partitions"]) == 3
        configs = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "auto-created")], config_filter="all")
        assert configs["topic"]["auto-created"]["segment.bytes"]["value"] == "4096"
        admin.close()
    finally:
        process.terminate()
        process.wait(15)
        process.stdout.close()


def test_settings_without_effect_start_the_broker_with_one_warning(tmp_path):
    from trafka.testing import TrafkaBroker

    with TrafkaBroker(tmp_path / "data", config={"log.preallocate": "true", "min.insync.replicas": "2", "num.partitions": "2"}) as broker:
        warnings = [line for line in broker.log_text().splitlines() if "without effect" in line]
    assert len(warnings) == 1, broker.log_text()
    assert warnings[0].endswith("log.preallocate, min.insync.replicas")
