"""Compatibility tests that drive real Kafka clients (Java, librdkafka/kcat, aiokafka, ...) against trafka.

`python -m testkit.setup_deps` fetches what these tests need; see docs/testing-clients.md.
"""
