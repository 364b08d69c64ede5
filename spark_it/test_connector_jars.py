"""Where the Spark tests find the Kafka connector: $SPARK_KAFKA_JARS as given, else the shared
folder beside the clone (../shared/spark-jars), checked against its SHA256SUMS, else nothing
(the Spark tests then skip with a reason). No broker and no Spark here."""

from __future__ import annotations

import hashlib

import pytest

from testkit import setup_deps
from testkit.setup_deps import ChecksumMismatch, spark_kafka_jars


def _shared_folder(tmp_path, jars: dict[str, bytes]):
    folder = tmp_path / "shared" / "spark-jars"
    folder.mkdir(parents=True)
    for name, data in jars.items():
        (folder / name).write_bytes(data)
    (folder / "SHA256SUMS").write_text(
        "".join(f"{hashlib.sha256(data).hexdigest()}  {name}\n" for name, data in jars.items()))
    return folder


def test_the_shared_folder_is_beside_the_clone():
    assert setup_deps.SHARED_SPARK_JARS == setup_deps.REPO.parent / "shared" / "spark-jars"


def test_the_shared_jars_are_used_when_their_checksums_hold(tmp_path, monkeypatch):
    monkeypatch.delenv("SPARK_KAFKA_JARS", raising=False)
    folder = _shared_folder(tmp_path, {"spark-sql-kafka-0-10_2.13-4.0.0.jar": b"connector", "commons-pool2.jar": b"pool"})
    (folder / "unlisted.jar").write_bytes(b"not in SHA256SUMS")
    assert spark_kafka_jars(folder) == [folder / "commons-pool2.jar", folder / "spark-sql-kafka-0-10_2.13-4.0.0.jar"]
    assert spark_kafka_jars(tmp_path / "no-such-folder") is None  # the Spark tests skip


def test_a_shared_jar_that_does_not_match_its_checksum_is_an_error(tmp_path, monkeypatch):
    monkeypatch.delenv("SPARK_KAFKA_JARS", raising=False)
    folder = _shared_folder(tmp_path, {"spark-sql-kafka-0-10_2.13-4.0.0.jar": b"connector", "commons-pool2.jar": b"pool"})
    (folder / "commons-pool2.jar").write_bytes(b"changed")
    with pytest.raises(ChecksumMismatch, match=r"commons-pool2\.jar.*SHA256SUMS"):
        spark_kafka_jars(folder)
    (folder / "commons-pool2.jar").unlink()
    with pytest.raises(ChecksumMismatch, match=r"commons-pool2\.jar.*missing"):
        spark_kafka_jars(folder)
    (folder / "SHA256SUMS").unlink()
    with pytest.raises(ChecksumMismatch, match="no SHA256SUMS"):
        spark_kafka_jars(folder)


def test_spark_kafka_jars_wins_over_the_shared_folder(tmp_path, monkeypatch):
    folder = _shared_folder(tmp_path, {"a.jar": b"a"})
    own = tmp_path / "mine"
    own.mkdir()
    (own / "b.jar").write_bytes(b"b")
    monkeypatch.setenv("SPARK_KAFKA_JARS", str(own))
    assert spark_kafka_jars(folder) == [own / "b.jar"]


@pytest.mark.skipif(not setup_deps.SHARED_SPARK_JARS.is_dir(), reason="no ../shared/spark-jars beside the clone")
def test_the_shared_folder_holds_the_connector(monkeypatch):
    monkeypatch.delenv("SPARK_KAFKA_JARS", raising=False)
    names = [jar.name for jar in spark_kafka_jars()]
    assert any(name.startswith("spark-sql-kafka-0-10_2.13-") for name in names), names
    assert any(name.startswith("kafka-clients-") for name in names), names
