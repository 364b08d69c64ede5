"""One module per API; each registers its handler with `trafka.broker.requests.routes.handles`."""
