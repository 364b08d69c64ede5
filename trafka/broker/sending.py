"""Sending a response frame: small buffers joined into one send, record bytes by os.sendfile.

A response is a list of buffers (see wire.framing.FrameWriter). Handlers may put a storage
FileSlice in it for record data: on a plain TCP socket its bytes go from the segment file to the
socket with os.sendfile, never through Python; on any other stream (TLS) they are read with
pread and sent like the rest. Everything else is joined into as few sends as possible, so a
small response costs one send.

A slice whose segment was closed (deleted by retention or compaction) while the frame was
half sent cannot be finished: that raises LogClosed and the connection is closed, as the frame
can no longer be completed. The descriptor is checked right before each sendfile call (no
await in between), so a reused descriptor number is never read.
"""

from __future__ import annotations

import os

import trio

from trafka.storage.segment import FileSlice

_HAS_SENDFILE = hasattr(os, "sendfile")


async def send_response(stream, parts) -> None:
    raw = stream.socket if _HAS_SENDFILE and isinstance(stream, trio.SocketStream) else None
    pending: list = []
    for part in parts:
        if isinstance(part, FileSlice):
            if raw is None:
                pending.append(part.read())
                continue
            if pending:
                await stream.send_all(b"".join(pending) if len(pending) > 1 else pending[0])
                pending = []
            await _sendfile(raw, part)
        else:
            pending.append(part)
    if pending:
        await stream.send_all(b"".join(pending) if len(pending) > 1 else pending[0])


async def _sendfile(sock, piece: FileSlice) -> None:
    offset, left = piece.position, piece.size
    out = sock.fileno()
    while left > 0:
        try:
            sent = os.sendfile(out, piece.fileno(), offset, left)
        except BlockingIOError:
            sent = None
        if sent is None:
            await trio.lowlevel.wait_writable(sock)
            continue
        if sent == 0:
            raise OSError(f"segment {piece.segment.log_path} ended at {offset}, {left} bytes short")
        offset += sent
        left -= sent
        if left:
            await trio.lowlevel.wait_writable(sock)
    await trio.lowlevel.checkpoint_if_cancelled()
