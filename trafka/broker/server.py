"""The broker: its state, its listener and its background tasks, under one trio nursery."""

from __future__ import annotations

import logging
import os
import uuid
from functools import partial
from pathlib import Path

import trio

from trafka.broker.config import BrokerConfig
from trafka.broker.connection import serve_connection
from trafka.broker.coordinator import GroupCoordinator
from trafka.broker.handlers.metadata import MetadataCache
from trafka.broker.log_tasks import every, storage_tasks
from trafka.broker.producer_ids import ProducerIdManager
from trafka.broker.registry import load_handlers
from trafka.storage.clock import SystemClock
from trafka.storage.manager import LogManager

log = logging.getLogger("trafka.broker")


class Broker:
    """Everything a handler reaches through `ctx.broker`."""

    def __init__(self, data_dir: Path, config: BrokerConfig, clock=None):
        self.data_dir = Path(data_dir)
        self.config = config
        self.clock = clock or SystemClock()
        # Opening the logs locks the data dir and recovers every partition.
        self.logs = LogManager(self.data_dir, broker_config=config.raw, clock=self.clock)
        self.node_id = config["node.id"]
        self.cluster_id = _cluster_id(self.data_dir)
        self.host = "127.0.0.1"
        self.port = 0
        self.producer_ids = ProducerIdManager(self.data_dir / "producer_ids")
        # Creates __consumer_offsets if missing and replays it: groups and offsets are back.
        self.group_coordinator = GroupCoordinator(self.logs, config, self.clock)
        self._data_arrived = trio.Event()
        self.metadata_cache = MetadataCache()
        load_handlers()

    @property
    def advertised_host(self) -> str:
        return self.config["advertised.host"] or self.host

    @property
    def advertised_port(self) -> int:
        return self.config["advertised.port"] or self.port

    def notify_data_arrived(self) -> None:
        """Wake every long-polling Fetch; each re-checks its own partitions."""
        event, self._data_arrived = self._data_arrived, trio.Event()
        event.set()

    async def wait_for_data(self) -> None:
        await self._data_arrived.wait()

    def background_tasks(self) -> list:
        """Coroutines that run for the broker's lifetime (retention, flushing, group timers)."""
        def expire_offsets():
            self.group_coordinator.expire_offsets(self.clock.time_ms())

        return [
            self.group_coordinator.run,
            partial(every, self.config["offsets.retention.check.interval.ms"], expire_offsets),
            *storage_tasks(self),
        ]

    def close(self) -> None:
        self.logs.close()


def _cluster_id(data_dir: Path) -> str:
    """A cluster id made once per data dir, like Kafka's meta.properties."""
    path = data_dir / "meta.properties"
    if path.exists():
        for line in path.read_text().splitlines():
            if line.startswith("cluster.id="):
                return line.split("=", 1)[1].strip()
    cluster_id = uuid.uuid4().hex[:22]
    tmp = path.with_suffix(".tmp")
    tmp.write_text(f"version=1\ncluster.id={cluster_id}\n")
    os.replace(tmp, path)
    return cluster_id


class ListenError(OSError):
    """The listener could not be opened (most often: another broker already has the port)."""


async def serve(broker: Broker, host: str, port: int, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
    """Listen and serve until cancelled; reports the bound port through `task_status`."""
    try:
        listeners = await trio.open_tcp_listeners(port, host=host)
    except OSError as exc:
        raise ListenError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    broker.host = host
    broker.port = listeners[0].socket.getsockname()[1]
    async with trio.open_nursery() as nursery:
        for task in broker.background_tasks():
            nursery.start_soon(task)

        async def handler(stream):
            await serve_connection(broker, stream)

        await nursery.start(trio.serve_listeners, handler, listeners)
        task_status.started(broker.port)
