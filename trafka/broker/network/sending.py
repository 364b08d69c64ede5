"""Sending a response frame: small buffers joined into one send, record bytes by os.sendfile.

A response is a list of buffers (wire.framing.encode_response: one bytes object, or runs of
bytes around the storage FileSlices a Fetch handler puts in its records). A FileSlice's bytes
go from the segment file to the socket with os.sendfile on a plain TCP socket, never through
Python; on any other stream (TLS) they are read with pread and sent like the rest. Everything else is joined into as few sends as possible, so a
small response costs one send.

The segment descriptors of a response are duplicated before its first byte is sent, so a
segment deleted by retention or compaction while the response waits for the socket still sends
its bytes (an open file outlives its unlink), and a reused descriptor number is never read.
"""

from __future__ import annotations

import os
import struct

import trio

from trafka.storage.segment import FileSlice

_HAS_SENDFILE = hasattr(os, "sendfile")
_SIZE_AND_CORRELATION = struct.Struct(">ii")


class EncodedBody:
    """A response body encoded once and answered many times (a cached Metadata answer).

    A handler may return one instead of a dict; dispatch frames it with the request's
    correlation id without encoding anything."""

    __slots__ = ("body", "flexible_header")

    def __init__(self, api, version: int, body: dict):
        from trafka.wire import framing

        self.flexible_header = api.response_header_version(version) >= 1
        parts = framing.encode_response(api, version, 0, body)
        data = b"".join(bytes(p) for p in parts)
        self.body = data[9 if self.flexible_header else 8 :]

    def frame(self, correlation_id: int) -> list:
        header = _SIZE_AND_CORRELATION.pack(len(self.body) + 4 + self.flexible_header, correlation_id)
        return [header + b"\x00" + self.body if self.flexible_header else header + self.body]


async def send_response(stream, parts) -> None:
    raw = stream.socket if _HAS_SENDFILE and isinstance(stream, trio.SocketStream) else None
    # Take hold of every file range before the first await: a duplicated descriptor keeps the
    # segment's bytes readable even if retention deletes the segment while we wait for the
    # socket (as an open file outlives its unlink). Without sendfile, read them now instead.
    held: list = []
    try:
        for part in parts:
            if isinstance(part, FileSlice):
                held.append(_Held(os.dup(part.fileno()), part) if raw is not None else part.read())
            else:
                held.append(part)
        pending: list = []
        for part in held:
            if isinstance(part, _Held):
                if pending:
                    await stream.send_all(b"".join(pending) if len(pending) > 1 else pending[0])
                    pending = []
                await _sendfile(raw, part)
            else:
                pending.append(part)
        if pending:
            await stream.send_all(b"".join(pending) if len(pending) > 1 else pending[0])
    finally:
        for part in held:
            if isinstance(part, _Held):
                os.close(part.fd)


class _Held:
    __slots__ = ("fd", "piece")

    def __init__(self, fd: int, piece: FileSlice):
        self.fd, self.piece = fd, piece


async def _sendfile(sock, held: _Held) -> None:
    offset, left = held.piece.position, held.piece.size
    out = sock.fileno()
    while left > 0:
        try:
            sent = os.sendfile(out, held.fd, offset, left)
        except BlockingIOError:
            sent = None
        if sent is None:
            await trio.lowlevel.wait_writable(sock)
            continue
        if sent == 0:
            raise OSError(f"segment {held.piece.segment.log_path} ended at {offset}, {left} bytes short")
        offset += sent
        left -= sent
        if left:
            await trio.lowlevel.wait_writable(sock)
    await trio.lowlevel.checkpoint_if_cancelled()
