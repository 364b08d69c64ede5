"""Stopping or killing a broker of a simulated cluster waits for the storage work its worker
threads are doing (a flush, a deferred load) before its logs close: a recovery point written
after the close could land while the broker starts again. A `Cluster` built in the test, a
flush held in its worker thread by an Event; no sockets, no sleeps."""

from __future__ import annotations

import threading

import pytest
import trio
from testkit.storage import batch

from trafka.broker.config import BrokerConfig
from trafka.broker.operations.log_tasks import flush_off_loop
from trafka.broker.cluster.nodes import Cluster
from trafka.storage.log_flush import FlushPlan

SETTINGS = {"cluster.brokers": 3, "offsets.topic.num.partitions": 1, "transaction.state.log.num.partitions": 1,
            "share.coordinator.state.topic.num.partitions": 1}


@pytest.fixture
def cluster(tmp_path):
    made = Cluster(tmp_path / "cluster", BrokerConfig.from_sources([f"{k}={v}" for k, v in SETTINGS.items()], []))
    yield made
    made.close()


@pytest.mark.parametrize("kill", [False, True], ids=["stop", "kill"])
def test_a_stop_waits_for_the_flush_its_worker_thread_is_running(cluster, monkeypatch, kill):
    node = cluster.nodes[1]
    metadata = node.logs.create_topic("flushed", 1, {})
    cluster.controller.assign(metadata.topic_id, {0: (1,)})
    partition_log = node.logs.log("flushed", 0)
    partition_log.append(batch(10))

    entered, go = threading.Event(), threading.Event()
    closed_under_the_flush = []
    run = FlushPlan.run

    def held(plan):
        entered.set()
        go.wait()  # until the logs close (the bug) or the stop waits for this thread (the fix)
        closed_under_the_flush.append(partition_log.closed)
        run(plan)

    monkeypatch.setattr(FlushPlan, "run", held)
    close = node.logs.close

    def closing(clean=True):
        close(clean)
        go.set()

    monkeypatch.setattr(node.logs, "close", closing)
    wait_idle = node.storage_threads.wait_idle

    def waiting():
        go.set()
        wait_idle()

    monkeypatch.setattr(node.storage_threads, "wait_idle", waiting)

    async def main():
        async def flushing(task_status=trio.TASK_STATUS_IGNORED):
            with trio.CancelScope() as scope:  # the node's serving scope, which the stop cancels
                node.serving = scope
                task_status.started()
                await flush_off_loop(node, partition_log)

        async with trio.open_nursery() as nursery:
            await nursery.start(flushing)
            await trio.to_thread.run_sync(entered.wait)
            cluster.stop_broker(1, kill=kill)

    trio.run(main)
    assert closed_under_the_flush == [False]  # the flush had finished before the logs closed
    cluster.start_broker(1)
    assert cluster.nodes[1].logs.log("flushed", 0).log_end_offset == 10
