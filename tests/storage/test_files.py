"""The one atomic-write helper: whole old file or whole new file, no temporary left behind."""

import threading

import pytest

from trafka.storage.files import atomic_write


def test_replaces_the_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "recovery-point-offset-checkpoint"
    atomic_write(path, "5\n")
    atomic_write(path, b"6\n")
    assert path.read_text() == "6\n"
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_a_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "checkpoint"
    atomic_write(path, "old\n")

    def refuse(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("trafka.storage.files.os.fsync", refuse)
    with pytest.raises(OSError):
        atomic_write(path, "new\n")
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_writers_in_two_threads_never_share_a_temporary(tmp_path):
    path = tmp_path / "checkpoint"
    errors = []

    def write(value):
        try:
            for _ in range(50):
                atomic_write(path, f"{value}\n" * 1000)
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(v,)) for v in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert path.read_text() in ("1\n" * 1000, "2\n" * 1000)
