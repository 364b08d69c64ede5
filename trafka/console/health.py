"""GET /health (and /api/v1/health): the broker is up and serving."""

from __future__ import annotations

from starlette.responses import JSONResponse
from starlette.routing import Route


def routes(broker) -> list:
    async def health(request):
        return JSONResponse({"status": "ok", "node_id": broker.node_id, "cluster_id": broker.cluster_id,
                             "kafka": f"{broker.advertised_host}:{broker.advertised_port}"})

    return [Route("/health", health), Route("/api/v1/health", health)]
