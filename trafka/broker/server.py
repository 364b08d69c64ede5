"""The broker: its state, its listener and its background tasks, under one trio nursery."""

from __future__ import annotations

import logging
import shutil
import uuid
from functools import partial
from pathlib import Path

import trio

from trafka.broker.config import BrokerConfig
from trafka.broker.network.connection import serve_connection
from trafka.broker.network.connection_quotas import ConnectionQuotas
from trafka.broker.metadata.dynamic_configs import DynamicBrokerConfigs
from trafka.broker.coordinators.group import GroupCoordinator
from trafka.broker.testcontrol.faults import FaultTable
from trafka.broker.handlers.metadata import MetadataCache
from trafka.broker.operations.log_tasks import StorageThreads, every, storage_tasks
from trafka.broker.requests.routes import load_handlers
from trafka.broker.operations.stats import BrokerStats
from trafka.broker.security.listeners import Listener, configured_listeners, place_in_cluster
from trafka.broker.coordinators.share.coordinator import ShareCoordinator
from trafka.broker.coordinators.transaction import TransactionCoordinator
from trafka.storage.files import atomic_write
from trafka.broker.metadata.topics import journal_topics, topics_of
from trafka.storage.manager import LOCK_FILE, LogManager
from trafka.wire.text import guard_loggers

log = logging.getLogger("trafka.broker")


class Broker:
    """Everything a handler reaches through `ctx.broker`."""

    def __init__(self, data_dir: Path, config: BrokerConfig, *, cluster):
        """`cluster`: the cluster (trafka/broker/cluster/nodes.py) this broker is a node of, the
        only one or one of a simulated cluster's (made by `open_broker`). Its nodes share one
        clock, cluster id, producer-id block, credentials, ACLs, quotas, features, group configs
        and client-metrics subscriptions (what Kafka keeps in its metadata log): the cluster's
        stores (cluster/stores.py)."""
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.config = config
        self.cluster = cluster
        stores = cluster.stores
        self.clock = stores.clock
        self._clock_moved = trio.Event()
        self.timers: list = []  # log_tasks.Timer, one per `every` loop; advance_clock runs the due ones
        self.storage_threads = StorageThreads()  # its storage work in worker threads (log_tasks.py)
        self.node_id = config["node.id"]
        # Cluster metadata (Kafka's metadata log, trafka/broker/metadata/image.py): the cluster's
        # one log, which every store below writes to and is rebuilt from.
        self.metadata = cluster.metadata
        # Dynamic broker configs (AlterConfigs on BROKER resources), over the static settings.
        self.dynamic_configs = DynamicBrokerConfigs(self.metadata, config, self.node_id)
        self.cluster_id = _cluster_id(cluster.data_dir)
        self.host = "127.0.0.1"
        self.port = 0
        self.console_url: str | None = None  # set by the console service when it listens
        self.schema_registry_url: str | None = None  # set by the schema registry service when it listens
        self.rest_proxy_url: str | None = None  # set by the REST proxy service when it listens
        self.producer_ids, self.features = stores.producer_ids, stores.features
        self.quotas, self.group_configs = stores.quotas, stores.group_configs
        self.faults = FaultTable()
        self._data_arrived = trio.Event()
        self.serving: trio.CancelScope | None = None  # a simulated cluster's node: cancelled to stop it
        self._open_logs()
        if hasattr(self.clock, "on_advance"):  # a unit test's ManualClock has no listeners
            self.clock.on_advance(self._wake_timers)
            self.clock.on_advance(lambda: self.group_coordinator.reschedule())
            self.clock.on_advance(lambda: self.share_coordinator.reschedule())
        self.stats = BrokerStats()  # requests, bytes and connections, for the console
        self.client_metrics, self.security, self.authorizer = stores.client_metrics, stores.security, stores.authorizer
        self.listeners: list[Listener] = []  # bound by serve()
        self.connection_quotas = ConnectionQuotas(config)  # max.connections*, idle and SASL time limits
        self.dynamic_configs.on_change = self._dynamic_configs_changed
        load_handlers()
        guard_loggers()  # no client's control bytes in a log line, whichever logger writes it

    def _open_logs(self) -> None:
        """The logs and the coordinators over them: at construction, and again when a stopped
        broker of a simulated cluster starts (`reopen`). Opening the logs locks the data dir
        and recovers every partition; each coordinator replays its internal topic."""
        config, cluster = self.config, self.cluster
        # Its topics are the metadata log's; each topic change is written there before it is made.
        self.logs = LogManager(self.data_dir, broker_config=config.raw, clock=self.clock,
                               topics=topics_of(cluster.metadata), journal=partial(journal_topics, cluster))
        cluster.joined(self)  # its topics as the cluster has them, and kept so
        self.logs.set_topic_defaults(config.effective_raw())
        self._schema_registry = None  # created with `_schemas` at the registry's first request
        # Each creates its internal topic if missing; the cluster loads the shards of the
        # partitions this broker leads (replaying them: groups, offsets, transactions, whose
        # interrupted commits and aborts finish, share-partitions are back).
        self.group_coordinator = GroupCoordinator(self.logs, config, self.clock, self.group_configs)
        self.txn_coordinator = TransactionCoordinator(
            self.logs, config, self.clock, self.producer_ids, self.group_coordinator, self.features, cluster)
        self.share_coordinator = ShareCoordinator(self.logs, config, self.clock, self.group_configs, cluster)
        self.group_coordinator.on_share_member_expired = self.share_coordinator.release_member
        self.group_coordinator.on_share_group_deleted = self.share_coordinator.delete_group
        self.metadata_cache = MetadataCache()
        # Injected storage faults reach the coordinators' internal topics here; in a simulated
        # cluster their writes reach the in-sync followers before the coordinator answers.
        for topic in self.internal_topics():
            self._guard_internal_topic(topic)
        coordinators = (self.group_coordinator, self.txn_coordinator, self.share_coordinator)
        cluster.elect_coordinators(self, [c.runtime for c in coordinators])
        for coordinator in coordinators:
            coordinator.log_loaded()

    def _guard_internal_topic(self, topic) -> None:
        topic.append_guard = self.faults.check_append

    def internal_topics(self) -> list:
        return [self.group_coordinator.offsets_topic, self.txn_coordinator.state_topic,
                self.share_coordinator.state_topic]

    def coordinator_runtimes(self) -> dict:
        """Internal topic name -> the coordinator runtime that holds its shards (the schema
        registry's once it was used on this broker)."""
        coordinators = (self.group_coordinator, self.txn_coordinator, self.share_coordinator, self._schema_registry)
        return {c.runtime.topic.name: c.runtime for c in coordinators if c is not None}

    def reopen(self) -> None:
        """A stopped broker of a simulated cluster starts: its logs open again (recovering what
        a kill left) and its coordinators load the shards it leads."""
        self._open_logs()

    def txn_coordinator_for(self, transactional_id: str):
        """The transaction coordinator of `transactional_id`: the one on the leader of its
        `__transaction_state` partition (None if none)."""
        topic = self.txn_coordinator.state_topic
        leader = self.cluster.leader_node(topic.name, topic.partition_for(transactional_id))
        return None if leader is None else leader.txn_coordinator

    def schema_registry(self):
        """The schema registry's state over `_schemas` (trafka/broker/schemas): the one on the
        leader of `_schemas` (Cluster.schema_registry). Made (and the topic created) when it is
        first used."""
        return self.cluster.schema_registry()

    def local_schema_registry(self):
        """This broker's schema registry, which holds the state while it leads `_schemas`."""
        if self._schema_registry is None:
            from trafka.broker.schemas.registry import SchemaRegistry

            self._schema_registry = SchemaRegistry(self.logs, self.clock)
            self._guard_internal_topic(self._schema_registry.topic)
            self.cluster.elect_coordinators(self, [self._schema_registry.runtime])
            self._schema_registry.log_loaded()
        return self._schema_registry

    def schema_registry_if_used(self):
        """The schema registry when `_schemas` exists (reading it must not create it) and it
        can be reached, else None."""
        from trafka.broker.schemas.registry import SCHEMAS_TOPIC, RegistryError

        if SCHEMAS_TOPIC not in self.logs.topics:
            return None
        try:
            return self.schema_registry()
        except RegistryError:
            return None

    def _dynamic_configs_changed(self) -> None:
        """A dynamic broker config changed: what reads the settings once reads them again."""
        self.logs.set_topic_defaults(self.config.effective_raw())
        self.connection_quotas.reconfigure(self.config)

    @property
    def advertised_host(self) -> str:
        """The first listener's advertised host (each client gets its own listener's in Metadata)."""
        return self.listeners[0].advertised[0] if self.listeners else self.host

    @property
    def advertised_port(self) -> int:
        return self.listeners[0].advertised[1] if self.listeners else self.port

    def notify_data_arrived(self) -> None:
        """Wake every long-polling Fetch (and acks=all Produce); each re-checks its own
        partitions. The replica fetchers look too."""
        event, self._data_arrived = self._data_arrived, trio.Event()
        event.set()
        self.cluster.replication.data_arrived()

    async def wait_for_data(self) -> None:
        await self._data_arrived.wait()

    def advance_clock(self, ms: int) -> int:
        """Move broker time forward and run every background check the move made due (retention,
        the cleaner, flushes, offset and transaction expiry, group deadlines) before returning,
        so the next request sees their effect. Call it on the broker's trio thread. Returns
        the clock's new offset."""
        offset = self.clock.advance(ms)  # also wakes the timer loops to recompute their sleeps
        now, deadlines = self.clock.time_ms(), self.clock.timer_ms()
        # A simulated cluster's nodes share the clock: every running node's checks run.
        for node in self.cluster.running_nodes():
            for timer in list(node.timers):
                try:
                    timer.run_if_due(now)
                except Exception:
                    log.exception("background check %r failed after the clock moved", timer.action)
            node.group_coordinator.expire(deadlines)
            node.share_coordinator.expire_due(deadlines)
        return offset

    def _wake_timers(self) -> None:
        event, self._clock_moved = self._clock_moved, trio.Event()
        event.set()

    async def wait_clock_moved(self) -> None:
        """Returns when advance_clock moves broker time (timer loops re-check their deadlines)."""
        await self._clock_moved.wait()

    def _abort_timed_out_transactions(self) -> None:
        if self.txn_coordinator.abort_timed_out(self.clock.timer_ms()):
            self.notify_data_arrived()  # the ABORT markers move last stable offsets

    def background_tasks(self) -> list:
        """Coroutines that run for the broker's lifetime (retention, flushing, group timers)."""
        def expire_offsets():
            self.group_coordinator.expire_offsets(self.clock.timer_ms())

        return [
            self.group_coordinator.run,
            self.share_coordinator.run,
            self.connection_quotas.run,
            partial(every, self, self.config["offsets.retention.check.interval.ms"], expire_offsets),
            partial(every, self, self.config["transaction.abort.timed.out.transaction.cleanup.interval.ms"],
                    self._abort_timed_out_transactions),
            partial(every, self, self.config["transaction.remove.expired.transaction.cleanup.interval.ms"],
                    self.txn_coordinator.run_expiration_check),
            *storage_tasks(self),
            *self.cluster.checks.node_tasks(self),
        ]

    def snapshot(self, target: Path) -> Path:
        """Copy a consistent image of the data dir to `target` (which must not exist).

        Synchronous on purpose: called on the broker's trio thread it holds the event loop, so
        no request changes a log mid-copy (the broker is paused for the copy's duration). Every
        log is flushed first; the copy has no clean-shutdown markers, so a broker opening it
        recovers each active segment, as after a crash with nothing lost.
        """
        target = Path(target)
        if target.exists():
            raise FileExistsError(f"snapshot target {target} already exists")
        for _, _, partition_log in self.logs.opened_logs():
            partition_log.flush()
        shutil.copytree(self.data_dir, target, ignore=shutil.ignore_patterns(LOCK_FILE))
        log.info("snapshot of %s written to %s", self.data_dir, target)
        return target



def _cluster_id(data_dir: Path) -> str:
    """A cluster id made once per data dir, like Kafka's meta.properties."""
    path = data_dir / "meta.properties"
    if path.exists():
        for line in path.read_text().splitlines():
            if line.startswith("cluster.id="):
                return line.split("=", 1)[1].strip()
    cluster_id = uuid.uuid4().hex[:22]
    atomic_write(path, f"version=1\ncluster.id={cluster_id}\n")
    return cluster_id


class ListenError(OSError):
    """The listener could not be opened (most often: another broker already has the port)."""


async def serve(broker: Broker, host: str, port: int, *, services=(), task_status=trio.TASK_STATUS_IGNORED) -> None:
    """Listen and serve until cancelled; reports the bound port through `task_status`.

    `services` are started in the same nursery once the Kafka listener is open, each as
    `await nursery.start(service, broker)` (the console's HTTP listener is one: the layers above
    the broker plug in here, so the broker never imports them).

    The cluster's first node serves every node: a simulated cluster's node i on the configured
    ports + i, or where cluster.broker.ports places it (a free port for each where the port is
    0), the services beside node 0."""
    await broker.cluster.serve(host, port, services, task_status=task_status)


async def serve_node(broker: Broker, host: str, port: int, *, services=(), port_offset: int = 0,
                     task_status=trio.TASK_STATUS_IGNORED) -> None:
    """One broker's listeners and background tasks (see serve); `port_offset` is its index in
    a simulated cluster (listeners.place_in_cluster)."""
    configured = configured_listeners(broker.config, host, port)  # ConfigError on bad listener settings
    place_in_cluster(configured, broker.config, port_offset)  # broker i of a simulated cluster
    bound_before = {listener.name: listener.port for listener in broker.listeners}
    for listener in configured:  # a stopped node of a simulated cluster comes back where it was
        listener.port = bound_before.get(listener.name) or listener.port
    broker.security.prepare(configured)
    sockets = []
    for listener in configured:
        try:
            sockets.append(await trio.open_tcp_listeners(listener.port, host=listener.host))
        except OSError as exc:
            for opened in sockets:
                for sock in opened:
                    await sock.aclose()
            raise ListenError(f"cannot listen on {listener.host}:{listener.port}: {exc.strerror or exc} "
                              f"(listener {listener.name})") from None
        listener.port = sockets[-1][0].socket.getsockname()[1]
    broker.listeners = configured
    broker.host, broker.port = configured[0].host, configured[0].port
    async with trio.open_nursery() as nursery:
        for task in broker.background_tasks():
            nursery.start_soon(task)
        for listener, opened in zip(configured, sockets):
            await nursery.start(trio.serve_listeners, partial(serve_connection, broker, listener=listener), opened)
        for service in services:
            await nursery.start(service, broker)
        task_status.started(broker.port)
