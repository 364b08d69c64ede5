"""A disk that refuses writes: full, then read-only. The producer hears KAFKA_STORAGE_ERROR for
the batch that did not fit, the connection stays open, the torn bytes are cut back at once,
reads go on, appends succeed again once space is back, and a restart finds every acknowledged
record at its offset.

The data dir is a small tmpfs mounted by the test, so it needs root (and a kernel that lets this
container mount); elsewhere the tests skip with the reason.
"""

from __future__ import annotations

import os
import subprocess

import pytest
from testkit.storage import small_tmpfs

from trafka.testing.rawwire import RawClient
from tests.broker.test_produce_fetch_wire import FETCH_V, create, fetch_body, partition_of, produce_body
from trafka.testing.broker import TrafkaBroker
from trafka.wire import records
from trafka.wire.errors import ErrorCode

DISK_BYTES = 3 << 20
VALUE = 60_000


def _mount(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["mount", *args], capture_output=True, text=True)


@pytest.fixture
def small_disk(tmp_path):
    with small_tmpfs(tmp_path / "disk", str(DISK_BYTES)) as mountpoint:
        yield mountpoint


@pytest.fixture
def broker(small_disk):
    # The data dir is the mount itself, so the broker's log file stays outside it.
    broker = TrafkaBroker(data_dir=small_disk, config={"offsets.topic.num.partitions": 1})
    broker.start()
    try:
        yield broker
    finally:
        broker.kill()


def _batch(i: int) -> bytes:
    return records.encode_batch([records.Record(b"k%d" % i, bytes([65 + i % 26]) * VALUE, (), 1_700_000_000_000 + i)])


def _produce(client, topic: str, i: int):
    answer = client.request(0, 8, produce_body(topic, _batch(i)))
    return answer.responses[0].partition_responses[0]


def _all_records(client, topic: str, offset: int = 0) -> list[tuple[int, bytes]]:
    """(offset, key) of every record from `offset` to the high watermark, one Fetch after
    another (each answer is cut at its limit, its last batch short)."""
    found: list[tuple[int, bytes]] = []
    while True:
        part = partition_of(client.request(1, FETCH_V, fetch_body(topic, offset)))
        assert part.error_code == 0
        data, before = part.records or b"", len(found)
        for pos, _ in records.fetched_batches(data):
            found.extend((r.offset, r.key) for r in records.decode_records(data, pos) if r.offset >= offset)
        if len(found) == before or found[-1][0] + 1 >= part.high_watermark:
            return found
        offset = found[-1][0] + 1


def _segment_sizes(disk, topic: str) -> int:
    return sum(p.stat().st_size for p in (disk / f"{topic}-0").glob("*.log"))


def _fill(client, topic: str, start: int) -> tuple[list[tuple[int, int]], object]:
    """Produce until the disk refuses; returns the acknowledged (offset, i) and the refusal."""
    acked = []
    for i in range(start, start + 200):
        answer = _produce(client, topic, i)
        if answer.error_code != 0:
            return acked, answer
        acked.append((answer.base_offset, i))
    raise AssertionError("the disk never filled")


def test_a_full_disk_refuses_one_batch_and_loses_nothing_acknowledged(broker, small_disk):
    with RawClient(broker.bootstrap_servers, "disk-full") as client:
        assert create(client, "ballast").error_code == 0
        assert create(client, "data").error_code == 0
        for i in range(10):  # ~600 KB to free later by deleting the topic
            assert _produce(client, "ballast", i).error_code == 0
        acked, refused = _fill(client, "data", 0)
        assert refused.error_code == ErrorCode.KAFKA_STORAGE_ERROR
        assert acked, "some batches fitted before the disk filled"
        # The same connection goes on: reads work, and the log is exactly the acknowledged batches.
        assert [o for o, _ in _all_records(client, "data")] == [o for o, _ in acked]
        assert _segment_sizes(small_disk, "data") == sum(len(_batch(i)) for _, i in acked)  # torn bytes cut back
        assert _produce(client, "data", 999).error_code == ErrorCode.KAFKA_STORAGE_ERROR  # still full
        # Free space by deleting a topic: appends succeed again, right after the last acknowledged offset.
        deleted = client.request(20, 4, {"topic_names": ["ballast"], "timeout_ms": 5000})
        assert deleted.responses[0].error_code == 0
        after = _produce(client, "data", 1000)
        assert after.error_code == 0 and after.base_offset == acked[-1][0] + 1
        acked.append((after.base_offset, 1000))
    broker.restart()
    with RawClient(broker.bootstrap_servers, "disk-full-after") as client:
        got = _all_records(client, "data")
        assert got == [(o, b"k%d" % i) for o, i in acked]
    assert "Traceback" not in broker.log_text()


@pytest.fixture
def ext4_disk(tmp_path):
    """An ext4 file system on a loop device, mounted errors=remount-ro, as data dirs often are;
    its sysfs trigger_fs_error makes the kernel turn it read-only under the running broker."""
    if os.geteuid() != 0:
        pytest.skip("mounting a loop device needs root")
    image, mountpoint = tmp_path / "ext4.img", tmp_path / "ext4"
    mountpoint.mkdir()
    with open(image, "wb") as f:
        f.truncate(32 << 20)
    made = subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"mkfs.ext4 failed: {made.stderr.strip()}")
    result = _mount("-o", "loop,errors=remount-ro", str(image), str(mountpoint))
    if result.returncode != 0:
        pytest.skip(f"cannot mount a loop device here: {result.stderr.strip()}")
    state = {"image": image, "mountpoint": mountpoint}
    try:
        yield state
    finally:
        subprocess.run(["umount", "-l", str(mountpoint)], capture_output=True)


def _turn_read_only(mountpoint) -> None:
    source = subprocess.run(["findmnt", "-n", "-o", "SOURCE", str(mountpoint)], capture_output=True, text=True)
    trigger = f"/sys/fs/ext4/{os.path.basename(source.stdout.strip())}/trigger_fs_error"
    if not os.path.exists(trigger):
        pytest.skip(f"no {trigger} in this kernel")
    with open(trigger, "w") as f:
        f.write("1")


def test_a_data_dir_that_turns_read_only_refuses_appends_and_keeps_what_was_acknowledged(ext4_disk):
    mountpoint = ext4_disk["mountpoint"]
    broker = TrafkaBroker(data_dir=mountpoint, config={"offsets.topic.num.partitions": 1})
    broker.start()
    try:
        with RawClient(broker.bootstrap_servers, "disk-ro") as client:
            assert create(client, "ro").error_code == 0
            acked = []
            for i in range(5):
                answer = _produce(client, "ro", i)
                assert answer.error_code == 0
                acked.append((answer.base_offset, i))
            # What the kernel's writeback would have done by now (the broker does not fsync
            # each append, as Kafka does not): ext4 drops unwritten pages when it turns read-only.
            os.sync()
            _turn_read_only(mountpoint)
            for i in range(5, 8):
                assert _produce(client, "ro", i).error_code == ErrorCode.KAFKA_STORAGE_ERROR
            assert [o for o, _ in _all_records(client, "ro")] == [o for o, _ in acked]
        broker.stop()  # a shutdown that cannot write its checkpoints
        # The operator repairs the file system and mounts it writable again.
        assert subprocess.run(["umount", str(mountpoint)], capture_output=True).returncode == 0
        subprocess.run(["e2fsck", "-f", "-y", str(ext4_disk["image"])], capture_output=True)
        assert _mount("-o", "loop,errors=remount-ro", str(ext4_disk["image"]), str(mountpoint)).returncode == 0
        broker.start()
        with RawClient(broker.bootstrap_servers, "disk-ro-after") as client:
            assert _all_records(client, "ro") == [(o, b"k%d" % i) for o, i in acked]
            answer = _produce(client, "ro", 8)
            assert answer.error_code == 0 and answer.base_offset == acked[-1][0] + 1
        assert "Traceback" not in broker.log_text()
    finally:
        broker.kill()


@pytest.fixture
def failing_device(tmp_path):
    """An ext4 file system (no journal, mounted sync) on a loop device whose backing file lives
    on a small tmpfs. Filling that tmpfs makes the kernel fail the loop device's block writes
    while ext4 itself still has free space, so the broker's write() calls fail in the device
    layer (the kernel reports ENOSPC or EIO for them, depending on the block; the broker handles
    any errno alike); removing the ballast heals the device. Device-mapper's error target, the
    usual way to get EIO, is not available in this container."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs and a loop device needs root")
    backing, mountpoint = tmp_path / "backing", tmp_path / "eio"
    backing.mkdir()
    mountpoint.mkdir()
    result = _mount("-t", "tmpfs", "-o", "size=24m", "tmpfs", str(backing))
    if result.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {result.stderr.strip()}")
    try:
        image = backing / "ext4.img"
        with open(image, "wb") as f:
            f.truncate(64 << 20)  # sparse: larger than the tmpfs under it
        made = subprocess.run(["mkfs.ext4", "-q", "-F", "-O", "^has_journal", str(image)], capture_output=True, text=True)
        if made.returncode != 0:
            pytest.skip(f"mkfs.ext4 failed: {made.stderr.strip()}")
        result = _mount("-o", "loop,sync,errors=continue", str(image), str(mountpoint))
        if result.returncode != 0:
            pytest.skip(f"cannot mount a loop device here: {result.stderr.strip()}")
        try:
            yield {"mountpoint": mountpoint, "ballast": backing / "ballast"}
        finally:
            subprocess.run(["umount", "-l", str(mountpoint)], capture_output=True)
    finally:
        subprocess.run(["umount", "-l", str(backing)], capture_output=True)


def test_io_errors_refuse_the_batch_and_heal_when_the_device_does(failing_device):
    mountpoint, ballast = failing_device["mountpoint"], failing_device["ballast"]
    broker = TrafkaBroker(data_dir=mountpoint, config={"offsets.topic.num.partitions": 1})
    broker.start()
    try:
        with RawClient(broker.bootstrap_servers, "disk-eio") as client:
            assert create(client, "eio").error_code == 0
            acked = []
            for i in range(3):
                answer = _produce(client, "eio", i)
                assert answer.error_code == 0
                acked.append((answer.base_offset, i))
            # Take every free byte of the device's backing store.
            subprocess.run(["dd", "if=/dev/zero", f"of={ballast}", "bs=1M", "count=64"], capture_output=True)
            # A few batches may still land in blocks the image already had; then the device fails.
            more, refused = _fill(client, "eio", 3)
            acked += more
            assert refused.error_code == ErrorCode.KAFKA_STORAGE_ERROR
            for i in range(500, 505):
                assert _produce(client, "eio", i).error_code == ErrorCode.KAFKA_STORAGE_ERROR
            assert [o for o, _ in _all_records(client, "eio")] == [o for o, _ in acked]
            assert _segment_sizes(mountpoint, "eio") == sum(len(_batch(i)) for _, i in acked)  # cut back
            ballast.unlink()
            answer = _produce(client, "eio", 600)
            assert answer.error_code == 0 and answer.base_offset == acked[-1][0] + 1
            acked.append((answer.base_offset, 600))
        broker.restart()
        with RawClient(broker.bootstrap_servers, "disk-eio-after") as client:
            assert _all_records(client, "eio") == [(o, b"k%d" % i) for o, i in acked]
        log_text = broker.log_text()
        assert "Traceback" not in log_text
        assert "Input/output error" in log_text or "No space left" in log_text
    finally:
        broker.kill()


def test_space_freed_by_delete_records_lets_appends_succeed_again(broker, small_disk):
    with RawClient(broker.bootstrap_servers, "disk-full-dr") as client:
        assert create(client, "data", configs={"segment.bytes": "300000"}).error_code == 0
        acked, refused = _fill(client, "data", 0)
        assert refused.error_code == ErrorCode.KAFKA_STORAGE_ERROR
        low = acked[len(acked) // 2][0]
        answer = client.request(21, 1, {"topics": [{"name": "data", "partitions": [{"partition_index": 0, "offset": low}]}],
                                        "timeout_ms": 5000})
        assert answer.topics[0].partitions[0].error_code == 0
        after = _produce(client, "data", 1000)
        assert after.error_code == 0 and after.base_offset == acked[-1][0] + 1
        acked.append((after.base_offset, 1000))
    broker.restart()
    with RawClient(broker.bootstrap_servers, "disk-full-dr-after") as client:
        assert _all_records(client, "data", low) == [(o, b"k%d" % i) for o, i in acked if o >= low]
    assert "Traceback" not in broker.log_text()


def _create_many(client, names: list[str]) -> list:
    from tests.broker.test_produce_fetch_wire import CREATE_V

    return client.request(19, CREATE_V, {"topics": [
        {"name": n, "num_partitions": 2, "replication_factor": 1, "assignments": [], "configs": []} for n in names],
        "timeout_ms": 5000, "validate_only": False}).topics


def test_a_full_disk_refuses_a_create_topics_request_whole_and_creates_nothing(broker, small_disk):
    """The request's topics are one batch of the metadata log: a disk too full for it refuses
    every topic of the request with KAFKA_STORAGE_ERROR, and none of them exists, then or after
    a restart."""
    names = [f"refused-{i:03d}-{'x' * 60}" for i in range(300)]  # a line of ~40 KB: new pages
    with RawClient(broker.bootstrap_servers, "disk-full-create") as client:
        assert create(client, "ballast").error_code == 0
        for i in range(10):
            assert _produce(client, "ballast", i).error_code == 0
        _fill(client, "ballast", 10)
        answers = _create_many(client, names)
        assert {t.error_code for t in answers} == {ErrorCode.KAFKA_STORAGE_ERROR}
        assert "cannot write topic metadata" in answers[0].error_message
        listed = client.request(3, 12, {"topics": None, "allow_auto_topic_creation": False,
                                        "include_topic_authorized_operations": False})
        assert not {t.name for t in listed.topics} & set(names)
        deleted = client.request(20, 4, {"topic_names": ["ballast"], "timeout_ms": 5000})
        assert deleted.responses[0].error_code == 0
        assert {t.error_code for t in _create_many(client, names[:5])} == {ErrorCode.NONE}
    broker.restart(kill=True)
    with RawClient(broker.bootstrap_servers, "disk-full-create-after") as client:
        listed = client.request(3, 12, {"topics": None, "allow_auto_topic_creation": False,
                                        "include_topic_authorized_operations": False})
        assert {t.name for t in listed.topics} & set(names) == set(names[:5])
    assert "Traceback" not in broker.log_text()
