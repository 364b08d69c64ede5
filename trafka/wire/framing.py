"""Frames, request headers and response headers.

A frame is a 4-byte big-endian size, then the header, then the body. The request header's
client id is always an int16-length nullable string; header v2 (flexible versions) adds a
tagged-field section after it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import construct as c

from trafka.wire.api import Api
from trafka.wire.codegen import EncodingError
from trafka.wire.types import uvarint_at

SIZE = struct.Struct(">i")
_HEADER_FIXED = struct.Struct(">hhi")  # api_key, api_version, correlation_id
_CORRELATION = struct.Struct(">i")
_SIZE_AND_CORRELATION = struct.Struct(">ii")


class MalformedRequest(Exception):
    """The bytes do not decode as the request they claim to be."""


@dataclass(frozen=True)
class RequestHeader:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None


def peek_header(frame: bytes) -> RequestHeader:
    """Read the fields every request header version shares (enough to answer with an error)."""
    if len(frame) < _HEADER_FIXED.size + 2:
        raise MalformedRequest(f"frame of {len(frame)} bytes is too short for a request header")
    api_key, api_version, correlation_id = _HEADER_FIXED.unpack_from(frame, 0)
    (n,) = struct.unpack_from(">h", frame, _HEADER_FIXED.size)
    start = _HEADER_FIXED.size + 2
    if n < 0:
        client_id = None
    else:
        if start + n > len(frame):
            raise MalformedRequest("client id runs past the end of the frame")
        try:
            client_id = bytes(frame[start : start + n]).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise MalformedRequest(f"client id is not UTF-8: {exc}") from None
    return RequestHeader(api_key, api_version, correlation_id, client_id)


def _header_length(frame: bytes, header: RequestHeader) -> int:
    return _HEADER_FIXED.size + 2 + (len(header.client_id.encode("utf-8")) if header.client_id else 0)


def decode_request(frame: bytes, header: RequestHeader, api: Api) -> c.Container:
    """Decode the body of a request whose header was peeked and whose version is served."""
    pos = _header_length(frame, header)
    try:
        if api.request_header_version(header.api_version) >= 2:
            pos = _skip_tagged_fields(frame, pos)
        body, _ = api.request.decoder(header.api_version)(frame, pos)
    except (c.ConstructError, UnicodeDecodeError, ValueError, OverflowError) as exc:
        raise MalformedRequest(f"{api.name} v{header.api_version}: {exc}") from None
    # Bytes after the body are ignored, as Kafka does: librdkafka 2.16 sends an all-topics
    # Metadata v12 request with three stray bytes after its null topic array.
    return body


def _skip_tagged_fields(buf, pos: int) -> int:
    count, pos = uvarint_at(buf, pos)
    for _ in range(count):
        _, pos = uvarint_at(buf, pos)
        size, pos = uvarint_at(buf, pos)
        pos += size
    if pos > len(buf):
        raise c.StreamError("stream ended inside the header's tagged fields")
    return pos


class FrameWriter:
    """A write-only stream that gathers a frame as a list of buffers, for the construct objects'
    build_stream (the reference encoders; bench/codec.py). Responses are encoded by the generated
    encoders (encode_response).

    Small writes are packed into one bytearray; a large write (record data) is kept by
    reference as its own part, so record bytes are never copied into the frame.
    """

    LARGE = 16 * 1024

    def __init__(self):
        self.parts: list = []
        self._current = bytearray()
        self._size = 0

    def write(self, data) -> int:
        n = len(data)
        if n >= self.LARGE:
            if self._current:
                self.parts.append(self._current)
                self._current = bytearray()
            self.parts.append(data)
        else:
            self._current += data
        self._size += n
        return n

    def tell(self) -> int:
        return self._size

    def finish(self) -> list:
        if self._current:
            self.parts.append(self._current)
            self._current = bytearray()
        return self.parts


def encode_response(api: Api, version: int, correlation_id: int, body: dict) -> list:
    """A whole response frame (size, response header, body) as a list of buffers to send: one
    buffer, or (record data given as storage FileSlices) runs of bytes between the slices."""
    parts: list = [b""]
    api.response.encoder(version)(body, parts.append)
    flexible_header = api.response_header_version(version) >= 1
    size = sum(map(len, parts)) + 4 + flexible_header
    parts[0] = _SIZE_AND_CORRELATION.pack(size, correlation_id) + (b"\x00" if flexible_header else b"")
    try:
        return [b"".join(parts)]
    except TypeError:  # a FileSlice among the parts: keep it by reference for sendfile
        return _runs(parts)


def _runs(parts: list) -> list:
    out, run = [], []
    for part in parts:
        if isinstance(part, (bytes, bytearray, memoryview)):
            run.append(part)
        elif not (hasattr(part, "fileno") and hasattr(part, "read")):  # a storage FileSlice
            raise EncodingError(f"a response part is a {type(part).__name__}, not bytes or a file range")
        else:
            if run:
                out.append(b"".join(run))
                run = []
            out.append(part)
    if run:
        out.append(b"".join(run))
    return out


def encode_request(api: Api, version: int, correlation_id: int, client_id: str | None, body: dict) -> bytes:
    """A whole request frame; used by tests and tools that talk to a broker."""
    cid = b"\xff\xff" if client_id is None else struct.pack(">h", len(client_id.encode())) + client_id.encode()
    header = _HEADER_FIXED.pack(api.key, version, correlation_id) + cid
    if api.request_header_version(version) >= 2:
        header += b"\x00"
    payload = api.request.build(body, version)
    return SIZE.pack(len(header) + len(payload)) + header + payload


def decode_response(api: Api, version: int, frame: bytes) -> tuple[int, c.Container]:
    """Decode a response frame (without its size prefix) with the generated decoder; used by the
    console's actions, `trafka healthcheck`, tests and tools."""
    (correlation_id,) = _CORRELATION.unpack_from(frame, 0)
    pos = 4
    if api.response_header_version(version) >= 1:
        pos = _skip_tagged_fields(frame, pos)
    body, _ = api.response.decoder(version)(frame, pos)
    return correlation_id, body
