"""The console listener: hypercorn's trio worker serving the console app in the broker's nursery.

We bind the socket ourselves (so a taken port is one clear error, and port 0 reports the port it
got) and hand it to hypercorn, which does all the HTTP.
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


async def serve_console(broker, sock: socket.socket, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
    """Serve the console on an already bound socket until cancelled."""
    # Imported here: with console.port=-1 a broker never loads the HTTP stack.
    from hypercorn.config import Config, Sockets
    from hypercorn.trio.run import worker_serve
    from hypercorn.utils import wrap_app

    from trafka.console.app import build_app

    config = Config()
    config.accesslog = None
    config.errorlog = logging.getLogger("trafka.console.http")
    config.errorlog.setLevel(logging.WARNING)  # hypercorn's "Running on ..." is ours to print
    config.graceful_timeout = 1.0
    config.keep_alive_timeout = 30
    app = wrap_app(build_app(broker), config.wsgi_max_body_size, "asgi")
    await worker_serve(app, config, sockets=Sockets([], [sock], []), task_status=task_status)


async def serve_schema_registry(broker, sock: socket.socket, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
    """Serve the schema registry's REST API on an already bound socket until cancelled."""
    from hypercorn.config import Config, Sockets
    from hypercorn.trio.run import worker_serve
    from hypercorn.utils import wrap_app

    from trafka.console.schema_registry import build_app

    config = Config()
    config.accesslog = None
    config.errorlog = logging.getLogger("trafka.schemas.http")
    config.errorlog.setLevel(logging.WARNING)
    config.graceful_timeout = 1.0
    config.keep_alive_timeout = 30
    app = wrap_app(build_app(broker), config.wsgi_max_body_size, "asgi")
    await worker_serve(app, config, sockets=Sockets([], [sock], []), task_status=task_status)


async def schema_registry_service(broker, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
    """The broker service for schema.registry.port, with console.port's rules: -1 off; a taken
    port stops the start when it was set, and only logs a line when it is the default (8081)."""
    from trafka.broker.server import ListenError

    port = broker.config["schema.registry.port"]
    if port < 0:
        task_status.started(None)
        return
    try:
        sock = bind(broker.host, port)
    except OSError as exc:
        reason = (f"cannot listen on {broker.host}:{port} for the schema registry (schema.registry.port): "
                  f"{exc.strerror or exc}")
        if "schema.registry.port" in broker.config.values:
            raise ListenError(reason) from None
        log.warning("%s; starting without the schema registry (set schema.registry.port=0 for any free port)", reason)
        task_status.started(None)
        return
    host, bound = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    broker.schema_registry_url = f"http://{shown}:{bound}/"
    task_status.started(broker.schema_registry_url)
    await trio.sleep(0)
    try:
        await serve_schema_registry(broker, sock)
    finally:
        broker.schema_registry_url = None


async def console_service(broker, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
    """The broker service (see `trafka.broker.server.serve`) for console.port.

    -1: off. A taken port stops the start with one line (ListenError) when console.port was set;
    when it is only the default (9644), the broker starts without a console and says so in one
    log line, so a second broker on the same machine still starts.
    """
    from trafka.broker.server import ListenError

    port = broker.config["console.port"]
    if port < 0:
        task_status.started(None)
        return
    try:
        sock = bind(broker.host, port)
    except OSError as exc:
        reason = f"cannot listen on {broker.host}:{port} for the console (console.port): {exc.strerror or exc}"
        if "console.port" in broker.config.values:
            raise ListenError(reason) from None
        log.warning("%s; starting without the console (set console.port=0 for any free port)", reason)
        task_status.started(None)
        return
    host, bound = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    broker.console_url = f"http://{shown}:{bound}/"
    # The socket listens already (connections wait in its backlog), so the broker reports
    # itself started now; the HTTP stack is imported and served right after.
    task_status.started(broker.console_url)
    await trio.sleep(0)
    from trafka.console.history import run_sampler

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run_sampler, broker)
            await nursery.start(serve_console, broker, sock)
    finally:
        broker.console_url = None
