"""Confluent's REST Proxy API (v2 and v3), served by the broker on `rest.proxy.port`
(docs/rest-proxy.md).

- `service.rest_proxy_service`: the listener, a broker service beside the console's.
- `client.KafkaClient`: the proxy's Kafka client; every request goes through a broker's own
  dispatch, routed to the leader or coordinator as a client routes it.
- `app.build_app`: the Starlette app (authentication, content negotiation, errors).
- `v3*`, `v2*`: the endpoints; `consumers`: v2 consumer instances; `formats` (and `protobuf`):
  embedded formats; `produce`: records to partition leaders; `streaming`: v3's streamed produce;
  `answers`: JSON answers and v3's resource shapes.
"""
