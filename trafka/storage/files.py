"""Small files replaced atomically: the one way trafka writes checkpoints, snapshots, index
rewrites and metadata files; fsyncs of a file or a directory; directories removed by renaming
them aside first (`remove_dir`).

`atomic_write` writes a temporary file beside the target, fsyncs it, renames it over the target
and fsyncs the directory, so after a crash the file is either the old one or the new one, whole,
and the rename itself survives a power cut. Temporary names end in `.tmp` and are unique per
thread, so two writers of one file (the loop and a worker thread) never share one; a partition's
leftover `.tmp` files are removed when it opens.
"""

from __future__ import annotations

import os
import shutil
import threading
import uuid
from pathlib import Path


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_all(fd: int, data) -> None:
    """os.write until done: the bytes go straight to the OS, no user-space buffer to lose."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_temporary(path: Path, data: bytes | str, *, fsync: bool = True) -> Path:
    """Write `data` to a temporary file beside `path` (fsynced unless told not to; see
    topic_store.write_metadata_files, which fsyncs many together) and return its path."""
    path = Path(path)
    tmp = path.with_name(f"{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    payload = data.encode() if isinstance(data, str) else data
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            write_all(fd, payload)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def replace_with(tmp: Path, path: Path) -> None:
    """Rename a written temporary file over `path` and make the rename durable."""
    os.replace(tmp, path)
    fsync_dir(Path(path).parent)


def atomic_write(path: Path, data: bytes | str) -> None:
    """Replace the file at `path` with `data`: temporary file, fsync, rename, fsync of the
    directory."""
    tmp = write_temporary(path, data)
    try:
        replace_with(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


# A directory renamed aside to be removed (remove_dir); a start finds and removes leftovers.
DELETE_DIR_SUFFIX = "-delete"


def remove_dir(directory: Path, *, remove: bool = True) -> Path | None:
    """Rename, then remove: a crash mid-rmtree leaves a '-delete' dir the next start removes.
    With remove=False the renamed directory is returned for the caller to remove (the broker
    does it in a worker thread: rmtree of a big partition takes a while)."""
    if not directory.exists():
        return None
    suffix = f".{uuid.uuid4().hex}{DELETE_DIR_SUFFIX}"
    # Cut the name like Kafka's logDeleteDirName so a 249-character topic still fits 255 bytes.
    doomed = directory.with_name(directory.name[: 255 - len(suffix)] + suffix)
    os.replace(directory, doomed)
    if not remove:
        return doomed
    remove_dirs([doomed])
    return None


def remove_dirs(doomed: list[Path]) -> None:
    """Remove directories renamed aside by remove_dir (thread-safe)."""
    for directory in doomed:
        shutil.rmtree(directory, ignore_errors=True)
