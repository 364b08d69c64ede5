"""The REST proxy's listener (`rest.proxy.port`): one broker service, as the console's and the
schema registry's (trafka/console/server.py has the rules for ports and the lazy HTTP stack).
Its nursery also holds the v2 consumer instances' background work (heartbeats, idle expiry)."""

from __future__ import annotations

import trio

from trafka.console.server import first_connection, listen, serve_app


async def rest_proxy_service(broker, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
    """The broker service for rest.proxy.port: Confluent's REST Proxy API (v2 and v3)."""
    bound = listen(broker, "rest.proxy.port", "the REST proxy")
    if bound is None:
        task_status.started(None)
        return
    sock, broker.rest_proxy_url = bound
    task_status.started(broker.rest_proxy_url)
    try:
        await first_connection(sock)
        from trafka.restproxy.app import build_app
        from trafka.restproxy.consumers import ConsumerInstances

        async with trio.open_nursery() as nursery:
            consumers = ConsumerInstances(broker, nursery)
            nursery.start_soon(consumers.expire_idle)
            await serve_app(build_app(broker, consumers), sock, "trafka.restproxy.http")
    finally:
        sock.close()
        broker.rest_proxy_url = None

