"""Run a real trafka broker in tests: a context manager and pytest fixtures.

    from trafka.testing import TrafkaBroker

    with TrafkaBroker() as broker:
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers)

The broker is a child process on a free port of 127.0.0.1 with a temporary data directory,
so a test can also stop, restart or SIGKILL it. Nothing is mocked.
"""

from trafka.testing.broker import TrafkaBroker

__all__ = ["TrafkaBroker"]
