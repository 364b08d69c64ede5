"""GET /metrics: Prometheus text format, written by prometheus_client from the broker's state.

One registry per broker (several in-process brokers may share a test process). The collector
reads the request counters (trafka.broker.operations.stats), the logs and the group coordinator when
Prometheus scrapes, so nothing is kept twice.

    trafka_requests_total{api}                       requests answered, per API
    trafka_request_duration_seconds{api}             histogram of handling time, per API
    trafka_topic_bytes_in_total{topic}               record bytes produced
    trafka_topic_bytes_out_total{topic}              record bytes fetched
    trafka_partition_size_bytes{topic,partition}     and _log_start_offset, _high_watermark,
                                                     _log_end_offset, _segments
    trafka_group_committed_offset{group,topic,partition}, trafka_group_lag{...}
    trafka_group_members{group}, trafka_connections
    trafka_share_partition_start_offset{group,topic,partition}   a share group's start offset
    trafka_share_partition_records{group,topic,partition,state}  its in-flight records by state
    trafka_client_metric{client_instance_id,client_id,name,attributes}  what clients pushed (KIP-714),
                                                     for the names telemetry.export.metrics lists
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from starlette.responses import Response
from starlette.routing import Route

from trafka.broker.operations.stats import LATENCY_BUCKETS
from trafka.console import views


class BrokerCollector:
    def __init__(self, broker):
        self.broker = broker

    def collect(self):
        broker = self.broker
        stats = broker.stats
        requests = CounterMetricFamily("trafka_requests", "Kafka requests answered, per API", labels=["api"])
        latency = HistogramMetricFamily("trafka_request_duration_seconds", "Time to handle a request, per API", labels=["api"])
        for name, s in sorted(stats.apis.items()):
            requests.add_metric([name], s.count)
            cumulative, buckets = 0, []
            for bound, count in zip((*LATENCY_BUCKETS, float("inf")), s.buckets):
                cumulative += count
                buckets.append(("+Inf" if bound == float("inf") else repr(bound), cumulative))
            latency.add_metric([name], buckets, s.seconds)
        yield requests
        yield latency
        bytes_in = CounterMetricFamily("trafka_topic_bytes_in", "Record bytes produced to a topic", labels=["topic"])
        for topic, n in sorted(stats.bytes_in.items()):
            bytes_in.add_metric([topic], n)
        yield bytes_in
        bytes_out = CounterMetricFamily("trafka_topic_bytes_out", "Record bytes fetched from a topic", labels=["topic"])
        for topic, n in sorted(stats.bytes_out.items()):
            bytes_out.add_metric([topic], n)
        yield bytes_out
        labels = ["topic", "partition"]
        size = GaugeMetricFamily("trafka_partition_size_bytes", "Bytes in a partition's segments", labels=labels)
        start = GaugeMetricFamily("trafka_partition_log_start_offset", "A partition's log start offset", labels=labels)
        hw = GaugeMetricFamily("trafka_partition_high_watermark", "A partition's high watermark", labels=labels)
        end = GaugeMetricFamily("trafka_partition_log_end_offset", "A partition's log end offset", labels=labels)
        segments = GaugeMetricFamily("trafka_partition_segments", "Segments of a partition", labels=labels)
        for topic, index, log in sorted(views.partition_logs(broker), key=lambda t: (t[0], t[1])):
            key = [topic, str(index)]
            size.add_metric(key, log.size_in_bytes)
            start.add_metric(key, log.log_start_offset)
            hw.add_metric(key, log.high_watermark)
            end.add_metric(key, log.log_end_offset)
            segments.add_metric(key, len(log.segments))
        yield from (size, start, hw, end, segments)
        yield from _replication(broker)
        glabels = ["group", "topic", "partition"]
        committed = GaugeMetricFamily("trafka_group_committed_offset", "A group's committed offset", labels=glabels)
        lag = GaugeMetricFamily("trafka_group_lag", "High watermark minus the committed offset", labels=glabels)
        members = GaugeMetricFamily("trafka_group_members", "Members of a group", labels=["group"])
        for group_id in sorted(views.all_groups(broker)):
            view = views.group(broker, group_id)
            members.add_metric([group_id], len(view["members"]))
            for o in view["offsets"]:
                if o["committed_offset"] is None:
                    continue
                key = [group_id, o["topic"], str(o["partition"])]
                committed.add_metric(key, o["committed_offset"])
                if o["lag"] is not None:
                    lag.add_metric(key, o["lag"])
        yield from (committed, lag, members)
        slabels = ["group", "topic", "partition"]
        share_start = GaugeMetricFamily("trafka_share_partition_start_offset",
                                        "A share group's start offset in a partition (everything before is done with)", labels=slabels)
        share_records = GaugeMetricFamily("trafka_share_partition_records", "A share group's in-flight records by state",
                                          labels=[*slabels, "state"])
        coordinator = broker.group_coordinator
        for group_id in sorted(coordinator.share_groups):
            for row in broker.share_coordinator.describe(group_id, coordinator.topic_name):
                key = [group_id, row["topic"], str(row["partition"])]
                share_start.add_metric(key, row["start_offset"])
                for state, count in row["records"].items():
                    share_records.add_metric([*key, state], count)
        yield from (share_start, share_records)
        exported = [p for p in broker.config["telemetry.export.metrics"] if p]
        if exported:
            client = GaugeMetricFamily("trafka_client_metric", "A metric a client pushed (KIP-714), as chosen by "
                                       "telemetry.export.metrics", labels=["client_instance_id", "client_id", "name", "attributes"])
            for t in broker.client_metrics.clients.values():
                for m in t.latest:
                    if any(m["name"].startswith(prefix) for prefix in exported):
                        attributes = ",".join(f"{k}={v}" for k, v in sorted(m["attributes"].items()))
                        client.add_metric([str(t.instance_id), t.client_id, m["name"], attributes], float(m["value"]))
            yield client
        yield GaugeMetricFamily("trafka_connections", "Open Kafka client connections", value=len(stats.connections))


def routes(broker) -> list:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(BrokerCollector(broker))

    async def metrics(request):
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    return [Route("/metrics", metrics)]


def _replication(broker):
    """Kafka's UnderReplicatedPartitions (per broker, of the partitions it leads) and
    OfflinePartitionsCount, and each broker's liveness."""
    under = GaugeMetricFamily("trafka_under_replicated_partitions",
                              "Partitions a broker leads whose ISR is smaller than their replicas (Kafka's UnderReplicatedPartitions)",
                              labels=["broker"])
    offline = GaugeMetricFamily("trafka_offline_partitions_count",
                                "Partitions without a leader (Kafka's OfflinePartitionsCount)")
    up = GaugeMetricFamily("trafka_broker_up", "1 while the broker serves, 0 while it is stopped", labels=["broker", "rack"])
    offline_count = 0
    controller = broker.cluster.controller
    for metadata in views.serving(broker).logs.topics.values():
        offline_count += sum(controller.leader(metadata.topic_id, p) < 0 for p in range(metadata.partitions))
    for row in views.broker_rows(broker):
        under.add_metric([str(row["node_id"])], row["under_replicated"])
        up.add_metric([str(row["node_id"]), row["rack"] or ""], 1 if row["alive"] else 0)
    offline.add_metric([], offline_count)
    yield from (under, offline, up)
