"""Run a real trafka broker in tests: a context manager, a testcontainers class, pytest fixtures.

    from trafka.testing import TrafkaBroker

    with TrafkaBroker() as broker:
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers)

The broker is a child process on a free port of 127.0.0.1 with a temporary data directory,
so a test can also stop, restart or SIGKILL it. Nothing is mocked.

`TrafkaContainer` is the same broker in its container image, with the surface of
testcontainers' `KafkaContainer` (needs the testcontainers package and a Docker daemon).
The pytest plugin (entry point `trafka`) gives `trafka_broker`, `trafka_session_broker` and
`trafka_topic`. See docs/testing.md.
"""

from trafka.testing.broker import TrafkaBroker

__all__ = ["TrafkaBroker", "TrafkaContainer"]


def __getattr__(name: str):
    # Imported on first use, so TrafkaBroker works without testcontainers installed.
    if name == "TrafkaContainer":
        from trafka.testing.container import TrafkaContainer

        return TrafkaContainer
    raise AttributeError(f"module 'trafka.testing' has no attribute {name!r}")
