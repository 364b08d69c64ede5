"""The cluster: the brokers of one process, their controller and their replication (docs/cluster.md).

A broker on its own is a cluster of one: one node under its `node.id`, its data in the data dir
itself, leading every partition through the same code a simulated cluster runs. With
`cluster.brokers` N > 1 it is a simulated cluster: nodes 0..N-1, each a whole `Broker` with its
own listeners and data dir (`<data dir>/broker-<i>/`); one `Controller` says where each partition
lives, and `Replication` copies replicated partitions from their leaders. It is a test harness
for clients that must survive brokers that stop and leaders that move, never a way to scale:
every node shares the process, its cores and its disk.

Topic metadata is what Kafka's brokers learn from the metadata log: every node holds every
topic, under the same topic id, and opens only the partitions it hosts (the others stay
placeholders, trafka/storage/manager.py). Each batch the metadata log takes is applied by every
running node to itself (`_publish`, cluster/publisher.py), whichever node's request wrote it;
a node that starts opens its logs with the topics of the image, what it missed included.

A node stops (`stop_broker`) by closing its listeners and connections, unloading its
coordinators' shards and closing its logs (cleanly, or as a killed process leaves them); the
controller moves the leadership of its partitions, and the new leaders load the coordinator
shards of the internal partitions they now lead. It starts again (`start_broker`) by opening
its logs (recovering them), truncating each followed partition to where it agrees with the
leader, and serving on the ports it had.
"""

from __future__ import annotations

import logging
from functools import partial
from pathlib import Path

import trio

from trafka.broker.config import BrokerConfig, ConfigError
from trafka.broker.cluster.checks import ClusterChecks
from trafka.broker.cluster.controller import NO_LEADER, Controller, LeaderChange, describe_ids
from trafka.broker.metadata.image import ClusterMetadata
from trafka.broker.cluster.replication import INTERNAL_REPLICATION, Replication
from trafka.broker.cluster.stores import ClusterStores
from trafka.broker.cluster.publisher import BrokerPublisher, MetadataDelta, topics_delta
from trafka.broker.server import Broker, ListenError, serve_node

# A node starting again whose port is taken tries this often, this far apart, before it moves.
RELISTEN_ATTEMPTS, RELISTEN_BACKOFF_S = 5, 0.2

log = logging.getLogger("trafka.broker")



def open_broker(data_dir: Path, config: BrokerConfig, clock=None) -> Broker:
    """The broker `trafka serve` runs: the first node of its cluster (the only one, or with
    `cluster.brokers` > 1 node 0 of a simulated cluster). Its cluster serves and closes every
    node (`serve`, `broker.cluster.close`)."""
    return Cluster(Path(data_dir), config, clock).nodes[0]


def node_dir(data_dir: Path, node_id: int) -> Path:
    """A simulated cluster's node's data dir (a cluster of one keeps its data in the data dir)."""
    return Path(data_dir) / f"broker-{node_id}"


def node_config(config: BrokerConfig, node_id: int, rack: str | None) -> BrokerConfig:
    """A simulated cluster's node `node_id`'s settings: the process's, with its own node id and rack."""
    values = {**config.raw, "node.id": str(node_id)}
    values.pop("broker.id", None)
    if rack:
        values["broker.rack"] = rack
    return BrokerConfig(values)


def racks_of(config: BrokerConfig, brokers: int) -> list[str | None]:
    """`cluster.broker.racks` (a,b,c: broker i in the i-th), else every broker's `broker.rack`."""
    text = config["cluster.broker.racks"]
    if not text:
        rack = config["broker.rack"] or None
        return [rack] * brokers
    racks = [r.strip() or None for r in text.split(",")]
    if len(racks) != brokers:
        raise ConfigError(f"cluster.broker.racks names {len(racks)} racks for {brokers} brokers (cluster.brokers)")
    return racks


class Cluster:
    """The nodes of one process, their controller and their replication."""

    def __init__(self, data_dir: Path, config: BrokerConfig, clock=None):
        self.data_dir = Path(data_dir)
        self.config = config
        count = config["cluster.brokers"]
        if config["default.replication.factor"] > count:
            raise ConfigError(f"default.replication.factor {config['default.replication.factor']} is larger than "
                              f"the {count} broker{'s' if count > 1 else ''} (cluster.brokers)")
        # A broker on its own is a cluster of one under its node.id; simulated nodes are 0..N-1.
        node_ids = [config["node.id"]] if count == 1 else list(range(count))
        self.data_dir.mkdir(parents=True, exist_ok=True)
        # The cluster's metadata log (trafka/broker/metadata/image.py): the controller's state and
        # every node's stores (features, quotas, configs, ACLs, credentials, producer ids).
        self.metadata = ClusterMetadata.of_data_dir(self.data_dir, clock=clock)
        try:
            self.controller = Controller(node_ids, dict(zip(node_ids, racks_of(config, count))), self.metadata)
            first = node_ids[0]
            if count == 1:
                self.stores = ClusterStores(self.metadata, config, self.data_dir, clock)
            else:
                self.stores = ClusterStores(self.metadata, node_config(config, first, self.controller.racks[first]),
                                            node_dir(self.data_dir, first), clock)
        except BaseException:
            self.metadata.close()
            raise
        self.replication = Replication(self)
        self.nodes: list = []  # in node-id order; node(id) finds one
        self._by_id: dict[int, Broker] = {}
        self.building = True  # until every node is made
        self.stopped: set[int] = set()  # nodes whose logs are closed until start_broker
        self._publishers: dict[int, BrokerPublisher] = {}
        self._pending: list[MetadataDelta] = []  # published one after the other (a write while publishing waits)
        self._doomed: list[Path] = []  # partition directories deletions renamed aside, to remove
        self.metadata.subscribe(self._publish)
        self.checks = ClusterChecks(self)  # the background checks every node runs while it serves
        self._nursery: trio.Nursery | None = None  # where the nodes serve (serve_cluster)
        self._host = "127.0.0.1"
        self._port = 0
        try:
            # What the nodes write while they are made (on a first start the cluster-level
            # min.insync.replicas and the internal topics) is one durable batch.
            with self.metadata.one_batch():
                for node_id in node_ids:  # each joins self.nodes as soon as its logs are open
                    if count == 1:
                        Broker(self.data_dir, config, cluster=self)
                    else:
                        Broker(node_dir(self.data_dir, node_id), node_config(config, node_id, self.controller.racks[node_id]),
                               cluster=self)
        except BaseException:
            self.close()
            raise
        self.building = False
        # What the leaders could not do while their followers were being made: hold their
        # high watermarks to their ISRs.
        for node in self.nodes:
            for name, p, topic_id in self.replication.replicated_partitions(node):
                if self.controller.leader(topic_id, p) == node.node_id:
                    self.replication.partition(node, name, p, topic_id).apply_leadership()
        # Partitions offline when the process last stopped elect a leader now every node is up.
        self.controller.elect_offline(self._partitions())
        for node in self.nodes:
            self._truncate_followers(node)
            node.txn_coordinator.retry_markers()  # markers for partitions of nodes made after it

    # --- where partitions live -------------------------------------------------------------

    def leads(self, node_id: int, topic: str, partition: int) -> bool:
        """Whether `node_id` leads the partition (a coordinator loads the shards it leads)."""
        return self.leader_id(topic, partition) == node_id

    def leader_id(self, topic: str, partition: int) -> int:
        metadata = self._topic(topic)
        return NO_LEADER if metadata is None else self.controller.leader(metadata.topic_id, partition)

    def leader_node(self, topic: str, partition: int):
        """The Broker leading the partition, or None (offline, stopped, or not built yet)."""
        return self.running_node(self.leader_id(topic, partition))

    def running_node(self, node_id: int):
        """Broker `node_id` when it runs, else None (no such broker, stopped, not built yet)."""
        return None if node_id in self.stopped else self._by_id.get(node_id)

    def node(self, node_id: int):
        """Broker `node_id`, running or stopped (LookupError: no such broker)."""
        found = self._by_id.get(node_id) if isinstance(node_id, int) else None
        if found is None:
            raise LookupError(f"no broker {node_id} (this cluster has {describe_ids(self.controller.node_ids)})")
        return found

    def _topic(self, topic: str):
        """The topic's metadata as the running nodes have it (every node stopped: as the last
        ones had it, so a cluster of one still describes its offline partitions)."""
        for node in self.running_nodes() or self.nodes:
            metadata = node.logs.topics.get(topic)
            if metadata is not None:
                return metadata
        return None

    def elect_coordinators(self, node, runtimes) -> None:
        """`node`'s coordinators load the shards of the internal-topic partitions it leads
        (Kafka's onElection): when its logs open, and a coordinator made later (the schema
        registry at its first use). Leadership changes load and unload them after (its publisher's `elect`)."""
        for runtime in runtimes:
            for partition in range(runtime.topic.partitions):
                if partition not in runtime.shards and self.leads(node.node_id, runtime.topic.name, partition):
                    runtime.load(partition)

    def coordinator_runtime(self, topic: str, partition: int):
        """The coordinator runtime holding the shard of an internal-topic partition: on its
        leader (NotCoordinator when it has none)."""
        from trafka.broker.coordinators.runtime.runtime import NotCoordinator

        leader = self.leader_node(topic, partition)
        if leader is None:
            raise NotCoordinator(f"{topic}-{partition} has no leader")
        return leader.coordinator_runtimes()[topic]

    def schema_registry(self):
        """The schema registry on the leader of `_schemas` (made, with the topic, at first use):
        its state is the leader's replica, and every route reads and writes there, as
        Confluent's registry forwards writes to its leader. 50004 (unknown leader) without one."""
        from trafka.broker.schemas.registry import SCHEMAS_TOPIC, UNKNOWN_LEADER, RegistryError

        running = self.running_nodes()
        if running and SCHEMAS_TOPIC not in running[0].logs.topics:
            running[0].local_schema_registry()  # creates `_schemas`, placed and mirrored on every node
        leader = self.leader_node(SCHEMAS_TOPIC, 0)
        if leader is None:
            raise RegistryError(500, UNKNOWN_LEADER, f"Unknown leader: {SCHEMAS_TOPIC} has no live leader")
        return leader.local_schema_registry()

    def coordinator_runtimes(self, topic: str) -> list:
        """Every running broker's coordinator runtime of an internal topic."""
        return [node.coordinator_runtimes()[topic] for node in self.running_nodes()]

    def running_nodes(self) -> list:
        """The nodes whose logs are open (all but the stopped ones)."""
        return [node for node in self.nodes if node.node_id not in self.stopped]

    def live_nodes(self) -> list:
        """The nodes clients can reach (alive in the controller's view)."""
        return [node for node in self.nodes if node.node_id in self.controller.alive]

    def _partitions(self) -> list[tuple]:
        """(topic id, partition, unclean.leader.election.enable) of every partition (as the last
        running nodes had them when every node is stopped: a cluster of one starting again)."""
        nodes = self.running_nodes() or self.nodes
        if not nodes:
            return []
        logs = nodes[0].logs
        found = []
        for name, metadata in logs.topics.items():
            unclean = logs.log_config(name).unclean_leader_election
            found += [(metadata.topic_id, p, unclean) for p in range(metadata.partitions)]
        return found

    # --- topic metadata, the same on every node ----------------------------------------------

    def joined(self, broker) -> None:
        """A node's logs are open, with the topics of the metadata image: it applies each change
        written from now on (`_publish`)."""
        if broker not in self.nodes:
            self.nodes.append(broker)
            self._by_id[broker.node_id] = broker
            self._publishers[broker.node_id] = BrokerPublisher(self, broker)
        # Its replicas take their roles in what the image says now, before anything appends
        # (a Produce, a coordinator loading its shard); each change after is published.
        self._publishers[broker.node_id].load()
        broker.logs.set_append_hook(partial(self.replication.appended, broker))

    def _publish(self, records) -> None:
        """The metadata log took a batch: every running node applies what it changed, its
        replicas first on every node, then its coordinators (cluster/publisher.py). A batch
        written while one is being applied (a coordinator loading writes) is applied next."""
        delta = MetadataDelta(topics_delta(records), self.controller.take_delta(), self.metadata)
        if not delta:
            return
        self._pending.append(delta)
        if len(self._pending) > 1:
            return
        try:
            while self._pending:
                delta = self._pending[0]
                publishers = [self._publishers[node.node_id] for node in self.running_nodes()]
                for publisher in publishers:
                    self._doomed += publisher.publish(delta, self.metadata)
                for publisher in publishers:
                    publisher.elect(delta)
                self._pending.pop(0)
        finally:
            self._pending.clear()

    def take_doomed(self) -> list[Path]:
        """The partition directories the deletions published since the last call renamed aside."""
        doomed, self._doomed = self._doomed, []
        return doomed

    def place_new(self, changes) -> None:
        """The controller places the partitions topic changes just made (TopicChange: created
        or grown)."""
        for change in changes:
            if change.kind in ("created", "grown"):
                self._place(change.metadata, change.kind == "grown")

    def _place(self, metadata, grown: bool) -> None:
        """New partitions get the default replication (their topic's own when it grew; the
        internal topics' settings, capped at the cluster's size); CreateTopics and
        CreatePartitions may replace it with what the request asks."""
        if grown:
            factor = len(self.controller.replicas(metadata.topic_id, 0))
        elif metadata.name in INTERNAL_REPLICATION:
            factor = min(self.config[INTERNAL_REPLICATION[metadata.name]], self.controller.brokers)
        else:
            factor = self.config["default.replication.factor"]
        existing = self.controller.partitions_placed(metadata.topic_id)
        self.controller.place(metadata.topic_id, range(existing if grown else 0, metadata.partitions), factor)

    # --- serving ---------------------------------------------------------------------------

    async def serve(self, host: str, port: int, services, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """Serve every node, each under its own cancel scope (stop_broker cancels one), node i
        on the configured ports + i; the services (console, schema registry) beside them,
        outside any node, so they outlive a stopped node 0."""
        self._host, self._port = host, port
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            first = None
            for node in self.nodes:
                bound = await nursery.start(self._serve_node, node)
                first = bound if first is None else first
            for service in services:
                await nursery.start(service, self.nodes[0])
            task_status.started(first)

    async def _serve_node(self, node, scope: trio.CancelScope | None = None,
                          task_status=trio.TASK_STATUS_IGNORED) -> None:
        """Serve one node until it is stopped. A node starting again whose port another socket
        took meanwhile (a client's ephemeral port can land on it) tries again for a while, then
        listens on a free port when its ports were free ones (clients find it through
        Metadata), else stays stopped: one node that cannot listen never ends the process."""
        if scope is None:
            scope = node.serving = trio.CancelScope()
        with scope:
            restarting = bool(node.listeners)
            for attempt in range(RELISTEN_ATTEMPTS + 1):
                try:
                    await serve_node(node, self._host, self._port, port_offset=self.nodes.index(node), task_status=task_status)
                    return
                except ListenError as exc:
                    if not restarting:
                        raise  # the first start reports it, as a single broker does
                    if attempt < RELISTEN_ATTEMPTS:
                        log.warning("broker %d: %s; trying again", node.node_id, exc)
                        await trio.sleep(RELISTEN_BACKOFF_S)
                    elif self._port == 0:
                        log.warning("broker %d: %s; it listens on a free port instead", node.node_id, exc)
                        node.listeners = []
                        await serve_node(node, self._host, self._port, port_offset=self.nodes.index(node), task_status=task_status)
                        return
                    else:
                        log.error("broker %d: %s; it stays stopped", node.node_id, exc)
                        self.stop_broker(node.node_id)
                        return

    def rebalance_leaders(self) -> None:
        """auto.leader.rebalance.enable, as Kafka's controller: a broker whose preferred
        partitions are led elsewhere above leader.imbalance.per.broker.percentage gets them
        back, where it is a live in-sync replica (the first running node's check asks)."""
        threshold = self.config["leader.imbalance.per.broker.percentage"] / 100
        preferred: dict[int, list] = {}
        for topic_id, p, _ in self._partitions():
            state = self.controller.partition(topic_id, p)
            preferred.setdefault(state.replicas[0], []).append((topic_id, p, state))
        changes = []
        for broker_id, partitions in preferred.items():
            elsewhere = [(t, p) for t, p, state in partitions if state.leader != broker_id]
            if not partitions or len(elsewhere) / len(partitions) <= threshold:
                continue
            for topic_id, p in elsewhere:
                change = self.controller.elect_preferred(topic_id, p)
                if change is not None:
                    changes.append(change)
        if changes:
            log.info("auto leader rebalance: %d partitions back on their preferred leaders", len(changes))

    # --- stopping and starting ---------------------------------------------------------------

    def stop_broker(self, node_id: int, *, kill: bool = False) -> dict:
        """Stop broker `node_id`: its listeners and connections close, its coordinators unload,
        the storage work its worker threads are doing finishes (a flush, a load: the cancelled
        tasks would wait for it, the close cannot), its logs close (with `kill`, as a killed
        process leaves them: no flush, no clean-shutdown marker), and the leadership of its
        partitions moves to in-sync replicas."""
        node = self.node(node_id)
        if node_id in self.stopped:
            raise ValueError(f"broker {node_id} is already stopped")
        if node.serving is not None:
            node.serving.cancel()
        for runtime in node.coordinator_runtimes().values():
            for partition in list(runtime.shards):
                runtime.unload(partition)
        node.share_coordinator.leadership_lost()  # its records in flight go with it
        changes = self.controller.broker_stopped(node_id, self._partitions())  # published to every node
        self.stopped.add(node_id)
        node.storage_threads.wait_idle()
        node.logs.close(clean=not kill)
        log.warning("broker %d %s; %d partition leaders moved", node_id, "killed" if kill else "stopped", len(changes))
        return self.describe_broker(node_id)

    def start_broker(self, node_id: int) -> dict:
        """Start a stopped broker: its logs open (recovering) with the topics of the metadata
        image, the controller's election of it is published to every node (it among them),
        its followed partitions truncate to where they agree with their leaders, and it serves
        again on its ports; it rejoins each ISR once it has caught up."""
        node = self.node(node_id)
        if node_id not in self.stopped:
            raise ValueError(f"broker {node_id} is running")
        node.reopen()  # loads the coordinator shards of partitions it leads again
        self.stopped.discard(node_id)
        try:
            self.controller.broker_started(node_id, self._partitions())
        except BaseException:  # not written: it stays stopped
            self.stopped.add(node_id)
            for runtime in node.coordinator_runtimes().values():
                for partition in list(runtime.shards):
                    runtime.unload(partition)
            node.storage_threads.wait_idle()
            node.logs.close()
            raise
        self._truncate_followers(node)
        if self._nursery is not None:
            # Its serving scope is made now, not when the task runs: a stop before the task
            # runs cancels it, and the task ends before it listens.
            node.serving = trio.CancelScope()
            self._nursery.start_soon(self._serve_node, node, node.serving)
        log.warning("broker %d started", node_id)
        return self.describe_broker(node_id)

    def fence_broker(self, node_id: int) -> dict:
        """The controller fences a running broker it no longer hears from (a network partition,
        after broker.session.timeout.ms): it leaves every ISR and its partitions elect other
        leaders, while it still runs and serves its clients (KRaft's fencing)."""
        if node_id in self.stopped or node_id not in self.controller.alive:
            raise ValueError(f"broker {node_id} is not a live broker")
        self.controller.broker_stopped(node_id, self._partitions())
        log.warning("broker %d fenced", node_id)
        return self.describe_broker(node_id)

    def unfence_broker(self, node_id: int) -> dict:
        """A fenced broker reaches the controller again: alive, a follower out of sync until it
        caught up (its logs truncate to where they agree with their leaders)."""
        if node_id in self.stopped or node_id in self.controller.alive:
            raise ValueError(f"broker {node_id} is not fenced")
        self.controller.broker_started(node_id, self._partitions())
        self._truncate_followers(self.node(node_id))
        log.warning("broker %d unfenced", node_id)
        return self.describe_broker(node_id)

    def _truncate_followers(self, node) -> None:
        """A node starts: each partition it follows agrees with its leader before anything is
        served (the fetcher would do it at its first pass; this is before any client asks)."""
        for name, p, topic_id in self.replication.followed(node):
            leader = self.leader_node(name, p)
            if leader is not None and leader is not node:
                self.replication.truncate_diverged(node, name, p, topic_id, leader)
                self.replication.checked_at_epoch(node, name, p)

    # --- elections and moves -----------------------------------------------------------------

    def _topic_id(self, topic: str, partition: int):
        metadata = self._topic(topic)
        if metadata is None or not 0 <= partition < metadata.partitions:
            raise LookupError(f"no partition {topic}-{partition}")
        return metadata.topic_id

    def elect_preferred(self, topic: str, partition: int) -> LeaderChange | None:
        """ElectLeaders (preferred): None when not needed; ValueError when the preferred
        replica is not a live in-sync one."""
        topic_id = self._topic_id(topic, partition)
        state = self.controller.partition(topic_id, partition)
        if state.leader == state.replicas[0]:
            return None
        change = self.controller.elect_preferred(topic_id, partition)
        if change is None:
            raise ValueError(f"the preferred leader {state.replicas[0]} of {topic}-{partition} is not a live in-sync replica")
        return change

    def elect_unclean(self, topic: str, partition: int) -> LeaderChange | None:
        """ElectLeaders (unclean): None when the partition has a leader; ValueError when no
        replica is alive."""
        topic_id = self._topic_id(topic, partition)
        if self.controller.partition(topic_id, partition).leader != NO_LEADER:
            return None
        change = self.controller.elect_unclean(topic_id, partition)
        if change is None:
            raise ValueError(f"no replica of {topic}-{partition} is alive")
        return change

    def move_leader(self, topic: str, partition: int, leader: int) -> dict:
        """Make in-sync replica `leader` lead the partition now (kfake's MoveTopicPartition
        for leadership, librdkafka's partition_set_leader)."""
        topic_id = self._topic_id(topic, partition)
        self.controller.elect(topic_id, partition, leader)
        return self.describe_partition(topic, partition)

    def reassign(self, topic: str, partition: int, replicas: list[int] | None) -> dict:
        """Move the partition to `replicas` (None: cancel the move under way). The new replicas
        fetch from the leader; once all are in sync the partition drops the others (their
        copies are deleted) and, if its leader is not among them, the first in-sync one leads."""
        topic_id = self._topic_id(topic, partition)
        if replicas is None:
            try:
                self.controller.cancel_reassignment(topic_id, partition)
            except LookupError:
                raise LookupError(f"no reassignment of {topic}-{partition} is under way") from None
            return self.describe_partition(topic, partition)
        problem = self.controller.validate_replicas(replicas)
        if problem is not None:
            raise ValueError(problem)
        self.controller.reassign(topic_id, partition, tuple(replicas))
        self.reassignment_caught_up(topic, partition, topic_id)  # a target already in sync finishes now
        for node in self.running_nodes():
            node.notify_data_arrived()  # the new replicas' fetchers start
        return self.describe_partition(topic, partition)

    def reassignment_caught_up(self, topic: str, partition: int, topic_id) -> None:
        """A replica joined the ISR during a reassignment: finish it if the whole target is in sync."""
        if self.controller.complete_reassignment(topic_id, partition) is False:
            return
        log.info("%s-%d: reassignment to %s complete", topic, partition,
                 list(self.controller.partition(topic_id, partition).replicas))

    def describe_partition(self, topic: str, partition: int) -> dict:
        topic_id = self._topic_id(topic, partition)
        state = self.controller.partition(topic_id, partition)
        under_way = self.controller.reassignment(topic_id, partition)
        return {"topic": topic, "partition": partition, "leader": state.leader, "leader_epoch": state.leader_epoch,
                "replicas": list(state.replicas), "isr": list(state.isr),
                "reassigning_to": list(under_way[0]) if under_way else None}

    def describe_broker(self, node_id: int) -> dict:
        node = self.node(node_id)
        return {"node_id": node_id, "alive": node_id in self.controller.alive,
                "host": node.host, "port": node.port, "rack": self.controller.racks[node_id]}

    # --- life ------------------------------------------------------------------------------

    def close(self, clean: bool = True) -> None:
        for node in self.nodes:
            if node.node_id not in self.stopped:
                node.logs.close(clean)
        self.metadata.close()  # every record in it was fsynced when written
