"""The REST proxy's listener (`rest.proxy.port`): one broker service, as the console's and the
schema registry's (trafka/console/server.py has the rules for ports and the lazy HTTP stack).
Its nursery also holds the v2 consumer instances' background work (heartbeats, idle expiry)."""

from __future__ import annotations

import trio

from trafka.console.server import first_connection, http_service, serve_app


async def rest_proxy_service(broker, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
    """The broker service for rest.proxy.port: Confluent's REST Proxy API (v2 and v3)."""
    async def serve(sock, nursery) -> None:
        await first_connection(sock)
        from trafka.restproxy.app import build_app
        from trafka.restproxy.consumers import ConsumerInstances

        consumers = ConsumerInstances(broker, nursery)
        nursery.start_soon(consumers.expire_idle)
        await serve_app(build_app(broker, consumers), sock, "trafka.restproxy.http")

    await http_service(broker, "rest.proxy.port", "the REST proxy", "rest_proxy_url", serve, task_status=task_status)
