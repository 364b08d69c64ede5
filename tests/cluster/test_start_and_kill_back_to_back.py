"""A broker of a simulated cluster started and killed back to back (the nemesis draws it): the
start schedules the broker's serving task, and a kill before that task runs must stop it too.
It used to cancel the scope of the broker's previous run, so the new listener opened anyway,
answered Metadata for a broker marked stopped, and every later start failed with "cannot
listen ... Address already in use; it stays stopped"."""

from __future__ import annotations

import errno

import pytest
import trio
from trio.testing import wait_all_tasks_blocked

from trafka.broker.cluster.nodes import Cluster
from trafka.broker.config import BrokerConfig

SETTINGS = {"cluster.brokers": 3, "offsets.topic.num.partitions": 1, "transaction.state.log.num.partitions": 1,
            "share.coordinator.state.topic.num.partitions": 1}


async def listening(port: int) -> bool:
    try:
        stream = await trio.open_tcp_stream("127.0.0.1", port)
    except OSError as exc:
        assert exc.errno in (errno.ECONNREFUSED, None) or "refused" in str(exc).lower(), exc
        return False
    await stream.aclose()
    return True


@pytest.mark.parametrize("kill", [True, False], ids=["kill", "stop"])
def test_a_stop_right_after_a_start_leaves_nothing_listening(tmp_path, kill):
    cluster = Cluster(tmp_path / "c", BrokerConfig.from_sources([f"{k}={v}" for k, v in SETTINGS.items()], []))

    async def main():
        async with trio.open_nursery() as nursery:
            await nursery.start(cluster.serve, "127.0.0.1", 0, [])
            node = cluster.node(1)
            port = node.port
            cluster.stop_broker(1, kill=True)
            await wait_all_tasks_blocked()
            assert not await listening(port)
            for _ in range(5):  # back to back, no checkpoint between them
                cluster.start_broker(1)
                cluster.stop_broker(1, kill=kill)
                await wait_all_tasks_blocked()
                assert not await listening(port), "a stopped broker is listening"
            cluster.start_broker(1)  # and it starts again where it was
            with trio.fail_after(10):
                while not await listening(port):
                    await trio.sleep(0.01)
            assert 1 in cluster.controller.alive and node.port == port
            nursery.cancel_scope.cancel()

    try:
        trio.run(main)
    finally:
        cluster.close()
