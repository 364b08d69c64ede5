"""Running and observing the broker: the storage timers (retention, cleaner, flush), the request
and byte counters, client telemetry (KIP-714)."""
