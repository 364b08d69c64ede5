"""The console listener: hypercorn's trio worker serving the console app in the broker's nursery.

We bind the socket ourselves (so a taken port is one clear error, and port 0 reports the port it
got) and hand it to hypercorn, which does all the HTTP, once the first connection arrives.
"""

from __future__ import annotations

import logging
import socket

import trio

log = logging.getLogger("trafka.console")


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port; OSError when it cannot be had."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


async def serve_app(app, sock: socket.socket, logger: str, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
    """Serve an ASGI app with hypercorn's trio worker on an already bound socket until cancelled."""
    # Imported here: with every HTTP port at -1 a broker never loads the HTTP stack.
    from hypercorn.config import Config, Sockets
    from hypercorn.trio.run import worker_serve
    from hypercorn.utils import wrap_app

    config = Config()
    config.accesslog = None
    config.errorlog = logging.getLogger(logger)
    config.errorlog.setLevel(logging.WARNING)  # hypercorn's "Running on ..." is ours to print
    config.graceful_timeout = 1.0
    config.keep_alive_timeout = 30
    await worker_serve(wrap_app(app, config.wsgi_max_body_size, "asgi"), config, sockets=Sockets([], [sock], []),
                       task_status=task_status)


async def first_connection(sock: socket.socket) -> None:
    """Wait until a connection is waiting in the listening socket's backlog. The HTTP stack
    (hypercorn, Starlette, Jinja, the registry's schema libraries: ~13 MB) is imported only
    then, so a broker whose console nobody opens never carries it."""
    await trio.lowlevel.wait_readable(sock)


def listen(broker, setting: str, what: str) -> tuple[socket.socket, str] | None:
    """The bound socket and URL for the HTTP port `setting` names, or None when it is off (-1)
    or its default port is taken. A taken port stops the start with one line (ListenError) when
    the setting was given; when it is only the default, the broker starts without it and says so
    in one log line, so a second broker on the same machine still starts."""
    from trafka.broker.server import ListenError

    port = broker.config[setting]
    if port < 0:
        return None
    try:
        sock = bind(broker.host, port)
    except OSError as exc:
        reason = f"cannot listen on {broker.host}:{port} for {what} ({setting}): {exc.strerror or exc}"
        if setting in broker.config.values:
            raise ListenError(reason) from None
        log.warning("%s; starting without %s (set %s=0 for any free port)", reason, what, setting)
        return None
    host, bound = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return sock, f"http://{shown}:{bound}/"


async def http_service(broker, setting: str, what: str, url_attr: str, serve, *,
                       task_status=trio.TASK_STATUS_IGNORED) -> None:
    """One HTTP port of the broker as a broker service (see `trafka.broker.server.serve`):
    listen on the port `setting` names (rules: `listen`), report its URL as `broker.<url_attr>`,
    then `await serve(sock, nursery)` until cancelled; the socket is closed and the URL cleared
    after. The socket listens before the broker reports itself started (connections wait in its
    backlog), so the HTTP stack can be imported when the first connection arrives."""
    bound = listen(broker, setting, what)
    if bound is None:
        task_status.started(None)
        return
    sock, url = bound
    setattr(broker, url_attr, url)
    task_status.started(url)
    try:
        async with trio.open_nursery() as nursery:
            await serve(sock, nursery)
    finally:
        sock.close()  # never served (no connection came): the port is free for the next start
        setattr(broker, url_attr, None)


async def console_service(broker, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
    """The broker service for console.port: the console, the JSON API and /metrics."""
    async def serve(sock, nursery) -> None:
        from trafka.console.history import run_sampler

        nursery.start_soon(run_sampler, broker)  # request rates from the start, for the first page
        await first_connection(sock)
        from trafka.console.app import build_app

        await serve_app(build_app(broker), sock, "trafka.console.http")

    await http_service(broker, "console.port", "the console", "console_url", serve, task_status=task_status)


async def schema_registry_service(broker, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
    """The broker service for schema.registry.port: Confluent's Schema Registry REST API
    (trafka/console/schema_api.py)."""
    async def serve(sock, nursery) -> None:
        await first_connection(sock)
        from trafka.console.schema_api import build_app

        await serve_app(build_app(broker), sock, "trafka.schemas.http")

    await http_service(broker, "schema.registry.port", "the schema registry", "schema_registry_url", serve,
                       task_status=task_status)
