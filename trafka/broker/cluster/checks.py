"""The cluster's background checks: each node runs them while it serves (`node_tasks`), and the
cluster's first running node acts for the cluster — the ISR check (replica.lag.time.max.ms), the
leader balance (auto.leader.rebalance.enable) and the metadata snapshot, written in a worker
thread as Kafka's controller writes its snapshots off its event loop."""

from __future__ import annotations

from functools import partial

from trafka.broker.operations.log_tasks import every

# How often (broker time) the first running node checks whether a metadata snapshot is due.
METADATA_SNAPSHOT_CHECK_MS = 1_000


class ClusterChecks:
    def __init__(self, cluster):
        self.cluster = cluster
        self._snapshotting = False  # a metadata snapshot is being written (snapshot_metadata)

    def node_tasks(self, node) -> list:
        """Background tasks each node runs while it serves: its replica fetcher, and the
        cluster's checks (each `every` also runs at once when advance_clock makes it due)."""
        config = self.cluster.config
        tasks = [partial(self.cluster.replication.run, node)]
        lag = config["replica.lag.time.max.ms"]
        tasks.append(partial(every, node, max(lag // 2, 1), partial(self._check_isr, node)))
        if config["auto.leader.rebalance.enable"]:
            interval = config["leader.imbalance.check.interval.seconds"] * 1000
            tasks.append(partial(every, node, interval, partial(self._rebalance_leaders, node)))
        tasks.append(partial(every, node, METADATA_SNAPSHOT_CHECK_MS, partial(self.snapshot_metadata, node),
                             partial(self._snapshot_metadata_now, node)))
        return tasks

    def _acts(self, node) -> bool:
        """Whether `node` acts for the cluster: its first running node."""
        return node is self.cluster.running_nodes()[0]

    def _check_isr(self, node) -> None:
        if self._acts(node):
            self.cluster.replication.check_isr(node.clock.time_ms(), self.cluster.config["replica.lag.time.max.ms"])

    def _rebalance_leaders(self, node) -> None:
        if self._acts(node):
            self.cluster.rebalance_leaders()

    async def snapshot_metadata(self, node) -> None:
        """A metadata snapshot when one is due, written in a worker thread: a CreateTopics of
        5,000 partitions does not write the whole image again inside the request."""
        metadata = self.cluster.metadata
        if not self._snapshots_metadata(node) or not metadata.snapshot_due:
            return
        self._snapshotting = True
        try:
            plan = metadata.plan_snapshot()
            if await node.storage_threads.run(metadata.write_planned, plan):
                metadata.finish_snapshot(plan)
        finally:
            self._snapshotting = False

    def _snapshot_metadata_now(self, node) -> None:
        """The same on the loop (advance_clock runs it before answering)."""
        if self._snapshots_metadata(node):
            self.cluster.metadata.maybe_snapshot()

    def _snapshots_metadata(self, node) -> bool:
        """Whether `node` checks for a metadata snapshot now: it acts for the cluster, and no
        snapshot is being written."""
        return self._acts(node) and not self._snapshotting
