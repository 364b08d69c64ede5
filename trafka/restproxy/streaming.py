"""Confluent's streaming produce: a request body of JSON values one after another, read as it
arrives, and an answer of one JSON line per value, sent as soon as each batch of values is
answered, so a client may keep one request open and read answers while it writes records.

Reading never waits for the client to read: answers queue in memory (a client that sends a
whole body before it reads, as most HTTP libraries do, would otherwise deadlock against a full
socket buffer). A value larger than MAX_BODY, or a malformed one, is answered with an error and
ends the stream, as Confluent's does.
"""

from __future__ import annotations

import codecs
import json
import math
import re

import trio
from starlette.requests import ClientDisconnect

from trafka.restproxy import errors
from trafka.restproxy.answers import MAX_BODY

_SPACE = re.compile(r"\s*")
_LITERAL = 5  # "false": an error this close to the end may be a value cut by the chunk's end
_SMALL = 1 << 20  # a pending value under this is decoded again at each chunk, a larger one as it doubles


class JsonValues:
    """JSON values one after another, fed in chunks of bytes; each feed gives the values it
    completed, then a RestError when the input is malformed (after which `failed` is set)."""

    def __init__(self):
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        self._decoder = json.JSONDecoder()
        self._text = ""
        self._next_try = 0  # the pending text's length at which decoding it is worth trying again
        self.failed = False
        self.seen = 0

    def feed(self, data: bytes, final: bool = False) -> list:
        try:
            self._text += self._utf8.decode(data, final)
        except UnicodeDecodeError as exc:
            return self._fail(f"Error processing JSON: {exc}")
        text, pos, out = self._text, 0, []
        if not final and len(text) < self._next_try:
            return out
        while True:
            pos = _SPACE.match(text, pos).end()
            if pos >= len(text):
                break
            try:
                value, pos = self._decoder.raw_decode(text, pos)
            except json.JSONDecodeError as exc:
                cut = exc.pos >= len(text) - _LITERAL or exc.msg.startswith("Unterminated string")
                if final or not cut:
                    return out + self._fail(f"Error processing JSON: {exc}")
                pending = len(text) - pos
                if pending > MAX_BODY:
                    return out + self._fail(f"A record larger than {MAX_BODY} bytes")
                self._next_try = pending + (1 if pending < _SMALL else pending)
                break
            out.append(value)
            self.seen += 1
        self._text = text[pos:]
        if pos:
            self._next_try = 0
        return out

    def _fail(self, message: str) -> list:
        self.failed = True
        self._text = ""
        return [errors.bad_request(message)]


async def serve(request, send, answer) -> None:
    """Read `request`'s body as JSON values as it arrives; `await answer(values)` gives one dict
    per value (a RestError in the list stands for itself); each batch of answers is sent as JSON
    lines of one 200 answer. No value at all is a 400 before anything is sent."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > MAX_BODY:
        raise errors.RestError(413, 413, f"Request body larger than {MAX_BODY} bytes")
    try:
        answered_any = await _serve(request, send, answer)
    except BaseExceptionGroup as group:  # trio's nursery wraps what its body raised: one is one
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise
    if not answered_any:
        raise errors.RestError(400, 400, "Request body is empty")


async def _serve(request, send, answer) -> bool:
    values = JsonValues()
    lines_out, lines_in = trio.open_memory_channel(math.inf)
    async with trio.open_nursery() as nursery:
        started = False

        async def respond(batch: list) -> None:
            nonlocal started
            if not batch:
                return
            found = [v for v in batch if not isinstance(v, errors.RestError)]
            answered = iter(await answer(found) if found else [])
            lines = [json.dumps(v.body() if isinstance(v, errors.RestError) else next(answered)) for v in batch]
            if not started:
                started = True
                nursery.start_soon(_send_lines, send, lines_in)
            await lines_out.send(("\n".join(lines) + "\n").encode())

        async with lines_out:
            try:
                async for chunk in request.stream():
                    await respond(values.feed(chunk))
                    if values.failed:
                        break
                if not values.failed:
                    await respond(values.feed(b"", final=True))
            except ClientDisconnect:
                nursery.cancel_scope.cancel()
                return True
    return started


async def _send_lines(send, lines_in) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    async with lines_in:
        async for chunk in lines_in:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
    await send({"type": "http.response.body", "body": b"", "more_body": False})
