"""The console: trafka's HTTP side (pages, JSON API under /api/v1/, /metrics).

It sits on top of the broker (imports go wire <- storage <- broker <- console) and runs as an
ASGI app (Starlette) served by hypercorn's trio worker inside the broker's own process and
nursery. It reads broker state through the same objects the handlers use (`broker.logs`,
`broker.group_coordinator`, ...), never through the Kafka wire; actions go through the same
dispatch code as a Kafka request.

- `trafka.console.server.console_service` / `schema_registry_service`: the listeners
  (console.port, schema.registry.port), one `serve_app` for both.
- `trafka.console.app.build_app`: the Starlette app; see its docstring for adding routes.
"""
