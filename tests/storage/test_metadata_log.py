"""The cluster metadata log (trafka/storage/metadata_log.py): append and replay, snapshots and
the segments they make useless, a torn tail cut at every byte, a damaged snapshot refused."""

import os

import pytest

from trafka.wire import records as rec
from trafka.storage.metadata_log import MetadataLog, MetadataLogCorrupt, metadata_log_dir, snapshots


def _image(log: MetadataLog) -> dict:
    image = {}
    for record in log.read():
        if record.value is None:
            image.pop(record.key, None)
        else:
            image[record.key] = record.value
    return image


def test_appends_replay_in_order_and_survive_a_reopen(tmp_path):
    log = MetadataLog(tmp_path)
    assert log.empty
    assert log.append([(b"a", b"1"), (b"b", b"2")]) == 0
    assert log.append([(b"a", b"3"), (b"b", None)]) == 2
    log.close()
    again = MetadataLog(tmp_path)
    assert not again.empty
    assert [(r.offset, r.key, r.value) for r in again.read()] == [(0, b"a", b"1"), (1, b"b", b"2"), (2, b"a", b"3"),
                                                                  (3, b"b", None)]
    assert _image(again) == {b"a": b"3"}
    again.close()


def test_the_log_is_not_a_partition_directory_of_the_data_dir(tmp_path):
    from trafka.storage.topic_store import parse_partition_dir

    log = MetadataLog(tmp_path)
    log.append([(b"k", b"v")])
    log.close()
    top = metadata_log_dir(tmp_path).relative_to(tmp_path).parts[0]
    assert parse_partition_dir(top) is None


def test_a_snapshot_holds_the_image_and_the_older_segments_go(tmp_path):
    log = MetadataLog(tmp_path, max_bytes_between_snapshots=200)
    for i in range(20):
        log.append([(b"key-%d" % (i % 3), b"value-%d" % i)])
    assert log.snapshot_due
    image = _image(log)
    path = log.write_snapshot(sorted(image.items()))
    assert path.name == "00000000000000000020-0000000000.checkpoint"
    assert not log.snapshot_due
    log.append([(b"after", b"x")])
    log.close()
    directory = metadata_log_dir(tmp_path)
    assert sorted(p.name for p in directory.glob("*.log")) == ["00000000000000000020.log"]
    again = MetadataLog(tmp_path)
    records = list(again.read())
    assert [r.offset for r in records] == [-1, -1, -1, 20]
    assert _image(again) == {**image, b"after": b"x"}
    again.write_snapshot(sorted(_image(again).items()))
    assert [offset for offset, _ in snapshots(directory)] == [21]  # the older snapshot went
    again.close()


def test_the_next_snapshot_waits_for_as_many_bytes_as_the_last_one_holds(tmp_path):
    """A large image is not written again after every change past the bound: the log must grow
    by the last snapshot's size first (so each byte appended costs at most one byte of snapshot
    and a start replays at most twice the image), also across a reopen."""
    log = MetadataLog(tmp_path, max_bytes_between_snapshots=200)
    image = {b"key-%04d" % i: b"v" * 100 for i in range(50)}
    for key, value in image.items():
        log.append([(key, value)])
    assert log.snapshot_due
    snapshot = log.write_snapshot(sorted(image.items()))
    size = snapshot.stat().st_size
    assert size > 5000
    appended = 0
    while appended <= size:
        assert not log.snapshot_due, f"due after {appended} bytes, the snapshot holds {size}"
        appended += len(rec.encode_batch([rec.Record(b"key-0001", b"w" * 100, (), 0)]))
        log.append([(b"key-0001", b"w" * 100)])
    assert log.snapshot_due
    log.close()
    again = MetadataLog(tmp_path, max_bytes_between_snapshots=200)
    assert again.snapshot_due
    again.write_snapshot(sorted(_image(again).items()))
    again.append([(b"key-0002", b"x")])
    assert not again.snapshot_due
    again.close()


def test_a_torn_last_batch_leaves_the_old_or_the_new_image_at_every_byte(tmp_path):
    log = MetadataLog(tmp_path)
    log.append([(b"a", b"old"), (b"b", b"old")])
    old = _image(log)
    log.append([(b"a", b"new"), (b"b", None), (b"c", b"new")])
    new = _image(log)
    log.close()
    segment = metadata_log_dir(tmp_path) / "00000000000000000000.log"
    whole = segment.read_bytes()
    first_batch_end = int.from_bytes(whole[8:12], "big") + 12  # batchLength + offset and length fields
    for cut in range(first_batch_end, len(whole) + 1):
        segment.write_bytes(whole[:cut])
        opened = MetadataLog(tmp_path)
        assert _image(opened) == (new if cut == len(whole) else old), cut
        opened.close()
        segment.write_bytes(whole)


def test_a_damaged_snapshot_stops_the_open_with_one_clear_error(tmp_path):
    log = MetadataLog(tmp_path)
    log.append([(b"a", b"1")])
    path = log.write_snapshot([(b"a", b"1")])
    log.close()
    data = bytearray(path.read_bytes())
    data[-3] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(MetadataLogCorrupt) as refused:
        list(MetadataLog(tmp_path).read())
    assert str(path) in str(refused.value) and "unreadable metadata records" in str(refused.value)


def test_a_missing_snapshot_under_a_truncated_log_is_refused(tmp_path):
    log = MetadataLog(tmp_path)
    log.append([(b"a", b"1")])
    path = log.write_snapshot([(b"a", b"1")])
    log.append([(b"b", b"2")])
    log.close()
    os.unlink(path)
    with pytest.raises(MetadataLogCorrupt, match="no snapshot covers"):
        MetadataLog(tmp_path)


def _planned(tmp_path, *, appends: int, keys: int):
    """A log (a snapshot due past 200 bytes) of `appends` one-record appends over `keys` keys,
    and a snapshot plan of its image: (log, the image as planned, the plan)."""
    log = MetadataLog(tmp_path, max_bytes_between_snapshots=200)
    for i in range(appends):
        log.append([(b"key-%d" % (i % keys), b"value-%d" % i)])
    image = _image(log)
    return log, image, log.plan_snapshot(sorted(image.items()))


def test_a_snapshot_written_while_the_log_grows_keeps_what_came_after_it(tmp_path):
    """The broker writes a snapshot in a worker thread while appends go on: the plan is the
    image as of its offset; what is appended between the plan and its end stays in the log,
    counts toward the next snapshot, and is read back after the snapshot's records."""
    log, image, plan = _planned(tmp_path, appends=20, keys=3)
    log.append([(b"during", b"1")])
    log.append([(b"key-0", b"changed")])
    plan.write()
    log.finish_snapshot(plan)
    assert plan.offset == 20
    assert log.bytes_since_snapshot > 0  # the two appends after the plan
    log.close()
    again = MetadataLog(tmp_path)
    assert [r.offset for r in again.read()][-2:] == [20, 21]
    assert _image(again) == {**image, b"during": b"1", b"key-0": b"changed"}
    again.close()


def test_a_crash_between_writing_a_snapshot_and_finishing_it_loses_nothing(tmp_path):
    """The broker writes a snapshot in a worker thread and finishes it on the loop: a process
    killed in between leaves the new snapshot beside every segment. The next open reads the
    snapshot, then the records after its offset (appended meanwhile), and the next snapshot
    drops what the first made useless."""
    log, image, plan = _planned(tmp_path, appends=2000, keys=300)
    log.append([(b"key-1", b"after")])
    plan.write()
    log.close()  # killed before finish_snapshot
    again = MetadataLog(tmp_path)
    assert _image(again) == {**image, b"key-1": b"after"}
    assert [offset for offset, _ in snapshots(metadata_log_dir(tmp_path))] == [2000]
    again.write_snapshot(sorted(_image(again).items()))
    assert [offset for offset, _ in snapshots(metadata_log_dir(tmp_path))] == [2001]
    again.close()
    assert _image(MetadataLog(tmp_path, lock=False)) == {**image, b"key-1": b"after"}
