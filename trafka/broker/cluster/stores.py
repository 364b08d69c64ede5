"""What every broker of a cluster shares, owned by the cluster (Kafka keeps it in the metadata
log, which each broker replays): the broker clock, the producer-id blocks, the feature levels,
client quotas, group configs, client-metrics subscriptions, SCRAM credentials (the security
layer) and ACLs (the authorizer). Made once, before the first node, from the cluster's metadata
log; every node reads them from `Cluster.stores`."""

from __future__ import annotations

from pathlib import Path

from trafka.broker.config import BrokerConfig
from trafka.broker.metadata.features import FeatureLevels
from trafka.broker.metadata.group_configs import GroupConfigs
from trafka.broker.metadata.image import ClusterMetadata
from trafka.broker.metadata.producer_ids import ProducerIdManager
from trafka.broker.metadata.quotas import ClientQuotas
from trafka.broker.operations.telemetry import ClientMetricsManager
from trafka.broker.security.authorizer import make_authorizer
from trafka.broker.security.layer import SecurityLayer
from trafka.storage.clock import BrokerClock


class ClusterStores:
    def __init__(self, metadata: ClusterMetadata, config: BrokerConfig, first_dir: Path, clock=None):
        """`config`: the first node's settings; `first_dir`: its data dir, where the broker clock
        keeps its offset (a cluster of one: the data dir itself)."""
        node_id = config["node.id"]
        # Broker time: the wall clock plus a forward-only offset that tests move (advance_clock).
        self.clock = clock or BrokerClock(state_dir=first_dir)
        self.producer_ids = ProducerIdManager(metadata, node_id)
        self.features = FeatureLevels(metadata, node_id)  # ApiVersions, UpdateFeatures
        self.quotas = ClientQuotas(metadata)  # Describe/AlterClientQuotas; not enforced
        self.group_configs = GroupConfigs(metadata, config)  # read by the group and share coordinators
        self.client_metrics = ClientMetricsManager(metadata, config)  # KIP-714 subscriptions
        self.security = SecurityLayer(config, first_dir, self.clock, metadata)  # SCRAM credentials load here
        self.authorizer = make_authorizer(config, metadata)  # None without authorizer.class.name; ACLs load here
