"""One client connection: read frames, answer them in order, close on bad input.

Kafka serves one request at a time per connection (the socket is muted until the response
is sent), which is also what keeps responses in request order; we do the same.
Every way a client can send bad bytes ends here, in one place: the connection is closed
with a log line naming the client, and no other connection notices. A handler that fails is
answered with an error code instead (trafka.broker.requests.errors), and the connection stays open.
"""

from __future__ import annotations

import logging
import struct
import time

import trio

from trafka.broker.requests.error_responses import error_response
from trafka.broker.requests.errors import answer_failed_request
from trafka.broker.testcontrol.faults import ConnectionDropped
from trafka.broker.requests.routes import ROUTES
from trafka.broker.security.tls import looks_like_tls
from trafka.broker.network.sending import EncodedBody, send_response
from trafka.wire import framing
from trafka.wire.errors import ErrorCode
from trafka.wire.messages import APIS

log = logging.getLogger("trafka.broker")

_SIZE = struct.Struct(">i")
_RECEIVE_SIZE = 1 << 16
_RECEIVE_MAX = 1 << 20
# Requests answered without waiting (Produce, Metadata): a response may be held back while one
# of these is answered, to be sent together; never behind one that may wait (a long-poll Fetch).
_ANSWERED_AT_ONCE = frozenset({0, 3})
_HOLD_PARTS = 64
# After a refused login the broker waits this long for the client to close first, so the client
# reads SASL_AUTHENTICATION_FAILED before the broker's FIN: kafka-python drops data that arrives
# in the same read as the end of the stream and reports only "socket disconnected".
_FAILED_LOGIN_LINGER_SECONDS = 1.0


class BadRequest(Exception):
    """The client sent something we will not answer; its connection is closed."""


class LimitExceeded(BadRequest):
    """A frame over a size limit: logged through the limit log (once per address per interval)."""

    def __init__(self, limit: str, message: str):
        super().__init__(message)
        self.limit = limit


class RequestContext:
    __slots__ = ("broker", "header", "peer", "session")

    def __init__(self, broker, header: framing.RequestHeader, peer: str, session=None):
        self.broker = broker
        self.header = header
        self.peer = peer
        self.session = session  # trafka.broker.security.layer.Session: listener and principal

    @property
    def listener(self):
        return self.session.listener

    @property
    def principal(self) -> str | None:
        return self.session.principal

    @property
    def version(self) -> int:
        return self.header.api_version

    @property
    def client_id(self) -> str | None:
        return self.header.client_id


class RequestMemory:
    """Kafka's queued.max.request.bytes: large request frames reserve their size before they are
    read, across all connections; past the limit a connection stops reading (TCP pushes back on
    its client) until memory is released. One frame always proceeds, so none waits forever for
    an empty pool. Frames under 64 KiB are not counted: their cost is bounded per connection."""

    def __init__(self, limit: int):
        self.limit = limit
        self.used = 0
        self._freed = trio.Event()

    async def acquire(self, size: int) -> None:
        while self.used and self.used + size > self.limit:
            await self._freed.wait()
        self.used += size

    def release(self, size: int) -> None:
        self.used -= size
        freed, self._freed = self._freed, trio.Event()
        freed.set()


def request_memory(broker) -> RequestMemory | None:
    memory = getattr(broker, "_request_memory", None)
    if memory is None:
        limit = broker.config["queued.max.request.bytes"]
        if limit < 0:
            return None
        memory = broker._request_memory = RequestMemory(limit)
    return memory


class FrameReader:
    """Splits a byte stream into frames, checking each declared size before reading it."""

    def __init__(self, stream: trio.abc.ReceiveStream, max_frame: int, limit_name: str = "socket.request.max.bytes",
                 memory: "RequestMemory | None" = None):
        self.stream = stream
        self.max_frame = max_frame
        self.limit_name = limit_name  # the setting max_frame comes from, named when a frame is refused
        self.buffer = bytearray()
        self.memory: RequestMemory | None = memory
        self.reserved = 0

    def release(self) -> None:
        if self.reserved:
            self.memory.release(self.reserved)
            self.reserved = 0

    async def _fill(self, need: int) -> bool:
        while len(self.buffer) < need:
            # At most 1 MiB per receive: a frame declared huge is buffered as its bytes arrive,
            # never allocated up front at its declared size.
            data = await self.stream.receive_some(min(max(_RECEIVE_SIZE, need - len(self.buffer)), _RECEIVE_MAX))
            if not data:
                if self.buffer:
                    raise BadRequest(f"connection closed inside a frame ({len(self.buffer)} bytes pending)")
                return False
            self.buffer += data
        return True

    def buffered_api_key(self) -> int | None:
        """The API key of the next request when it is already wholly buffered, else None."""
        buffer = self.buffer
        if len(buffer) < 6:
            return None
        (size,) = _SIZE.unpack_from(buffer, 0)
        if len(buffer) < 4 + size or size < 2:
            return None
        return int.from_bytes(buffer[4:6], "big", signed=True)

    async def next_frame(self) -> bytes | None:
        """The next whole frame. A frame of 64 KiB or more first reserves its size in the
        broker-wide request memory (queued.max.request.bytes); the caller releases it with
        release() once the request is answered."""
        if not await self._fill(4):
            return None
        (size,) = _SIZE.unpack_from(self.buffer, 0)
        if size < 0 or size > self.max_frame:
            if looks_like_tls(self.buffer[:3]):
                raise BadRequest("the client started a TLS handshake on a listener without TLS (use the SSL or "
                                 "SASL_SSL listener, or security.protocol PLAINTEXT/SASL_PLAINTEXT)")
            if size < 0:
                raise BadRequest(f"declared frame size {size} is negative")
            raise LimitExceeded(self.limit_name, f"declared frame size {size} is over {self.limit_name} "
                                                 f"({self.max_frame})")
        if size >= _RECEIVE_SIZE and self.memory is not None and len(self.buffer) < 4 + size:
            await self.memory.acquire(size)
            self.reserved = size
        await self._fill(4 + size)
        with memoryview(self.buffer) as view:
            frame = bytes(view[4 : 4 + size])  # one copy; a bytearray slice would add another
        del self.buffer[: 4 + size]
        return frame


async def dispatch(broker, frame: bytes, peer: str, session=None) -> list | None:
    """Answer one request frame with the response's buffers; None when there is no response."""
    try:
        header = framing.peek_header(frame)
    except framing.MalformedRequest as exc:
        raise BadRequest(str(exc)) from None
    route = ROUTES.get(header.api_key)
    if route is None:
        raise BadRequest(f"unknown API key {header.api_key} (client {header.client_id!r})")
    refusal = session.refusal(header.api_key) if session is not None else None
    if refusal:
        raise BadRequest(f"{refusal} (client {header.client_id!r})")
    api = route.api
    if not route.serves(header.api_version):
        if route.answer_too_new is not None and header.api_version > route.max_version:
            version, body = route.answer_too_new()
            return framing.encode_response(api, version, header.correlation_id, body)
        raise BadRequest(f"{api.name} v{header.api_version} is not served (client {header.client_id!r})")
    try:
        body = framing.decode_request(frame, header, api)
    except framing.MalformedRequest as exc:
        raise BadRequest(f"{exc} (client {header.client_id!r})") from None
    unexpected = session.unexpected_request(header.api_key) if session is not None else None
    if unexpected:  # as Kafka's SaslServerAuthenticator: the request's error answer, then the connection closes
        log.warning("answered ILLEGAL_SASL_STATE and closing connection from %s: %s (client %r)", peer, unexpected,
                    header.client_id)
        session.fail()
        answer = error_response(api, header.api_version, body, ErrorCode.ILLEGAL_SASL_STATE)
        return framing.encode_response(api, header.api_version, header.correlation_id, answer)
    ctx = RequestContext(broker, header, peer, session)
    started = time.perf_counter()
    try:
        if broker.faults:  # injected faults (trafka.broker.testcontrol.faults) are checked here and nowhere else
            result = await broker.faults.intercept(route, ctx, body)
        else:
            result = await route.handle(ctx, body)
    except (BadRequest, ConnectionDropped):
        raise
    except Exception as exc:  # answered with an error code; the connection stays open
        result = answer_failed_request(api, header, body, exc, peer)
        if result is None:
            raise
    broker.stats.observe(api.name, header, body, result, peer, time.perf_counter() - started)
    if result is None:
        return None
    if type(result) is EncodedBody:
        return result.frame(header.correlation_id)
    return framing.encode_response(api, header.api_version, header.correlation_id, result)


async def serve_connection(broker, stream: trio.SocketStream, listener) -> None:
    if broker.faults.is_down():  # an injected "down": refuse by closing at once
        await trio.aclose_forcefully(stream)
        return
    try:
        address, port = stream.socket.getpeername()[:2]
        peer = f"{address}:{port}"
    except OSError:
        address = peer = "?"
    quotas = broker.connection_quotas
    connection = await quotas.admit(address)  # max.connections(.per.ip), max.connection.creation.rate
    if connection is None:
        await trio.aclose_forcefully(stream)
        return
    connection.peer = peer
    broker.stats.opened(peer)
    try:
        with connection.cancel_scope, broker.faults.connection():  # cancelled: idle, or no SASL in time
            await _serve(broker, stream, peer, listener, connection)
    finally:
        quotas.release(connection)
        broker.share_coordinator.disconnected(peer)  # its share sessions end, their records released
        broker.stats.closed(peer)
        await trio.aclose_forcefully(stream)  # already closed unless cancelled before _serve closed it


def _frame_limit(broker, session) -> tuple[int, str]:
    """Kafka's bound on the next frame: sasl.server.max.receive.size until a SASL login completes."""
    if session.principal is None:
        return broker.config["sasl.server.max.receive.size"], "sasl.server.max.receive.size"
    return broker.config["socket.request.max.bytes"], "socket.request.max.bytes"


async def _serve(broker, stream: trio.SocketStream, peer: str, listener, connection) -> None:
    opened = await broker.security.open_connection(stream, listener, peer)  # TLS handshake, SASL state
    if opened is None:
        return
    stream, session = opened
    connection.session = session
    reader = FrameReader(stream, *_frame_limit(broker, session), memory=request_memory(broker))
    pending: list = []  # responses held while pipelined requests are answered
    try:
        while True:
            reader.max_frame, reader.limit_name = _frame_limit(broker, session)
            connection.active(in_request=False)
            frame = await reader.next_frame()
            connection.active(in_request=True)
            if frame is None:
                if pending:
                    await send_response(stream, pending)
                return
            if session.raw_tokens:  # after a v0 SaslHandshake: a bare SASL token, answered bare
                await send_response(stream, [_raw_token_reply(session, frame)])
                continue
            try:
                response = await dispatch(broker, frame, peer, session)
            except BadRequest:
                if pending:  # the answers to the good requests before it still go out
                    await send_response(stream, pending)
                raise
            finally:
                del frame
                reader.release()
            if response:
                pending += response
            # A client that pipelines small requests gets their answers in one send: hold
            # this response only while the next request is already here and answers at once.
            if pending and (reader.buffered_api_key() not in _ANSWERED_AT_ONCE or len(pending) >= _HOLD_PARTS):
                await send_response(stream, pending)
                pending = []
            if session.state == "failed":  # a refused login is answered, then the connection closes
                if pending:
                    await send_response(stream, pending)
                await _wait_for_client_close(stream)
                return
    except LimitExceeded as exc:
        broker.connection_quotas.limit_log.warn(exc.limit, connection.address, f"closing connection from {peer}: {exc}")
    except BadRequest as exc:
        log.warning("closing connection from %s: %s", peer, exc)
    except ConnectionDropped as exc:
        log.info("closing connection from %s: %s", peer, exc)
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass
    except Exception:
        log.exception("closing connection from %s after an internal error", peer)
    finally:
        reader.release()  # a connection closed inside a reserved frame
        await trio.aclose_forcefully(stream)


async def _wait_for_client_close(stream) -> None:
    """Let the client close first (bounded); a client that sends anything more instead is not
    going to, and is closed at once."""
    with trio.move_on_after(_FAILED_LOGIN_LINGER_SECONDS):
        try:
            await stream.receive_some(_RECEIVE_SIZE)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass


def _raw_token_reply(session, token: bytes) -> bytes:
    error, message, reply, _ = session.authenticate(token)
    if error:
        raise BadRequest(f"SASL authentication failed: {message}")
    return _SIZE.pack(len(reply)) + reply


__all__ = ["APIS", "BadRequest", "LimitExceeded", "RequestContext", "dispatch", "serve_connection"]
