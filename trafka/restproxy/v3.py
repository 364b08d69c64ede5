"""REST Proxy API v3: the cluster, its brokers, topics, partitions, replicas, and broker and
topic configs, in Confluent's shapes (`KafkaCluster`, `KafkaTopicList`, ...). Each answer is
made of Kafka requests (Metadata, DescribeCluster, DescribeConfigs, CreateTopics, ...) sent
with the caller's principal, so ACLs decide what a caller sees and changes.

Served: GET /v3/clusters(/{c}); brokers (/brokers, /brokers/{b}, their configs and
partition-replicas); the cluster-wide broker configs (/broker-configs: the brokers' dynamic
defaults); topics (list, create 201, describe, PATCH partitions_count, delete 204); configs of
each (list, get, PUT and DELETE 204, POST configs:alter); partitions, their replicas, and the
reassignments in progress (read only, as Confluent's).
"""

from __future__ import annotations

from starlette.routing import Route

from trafka.restproxy import answers, errors
from trafka.restproxy.client import (CREATE_PARTITIONS, CREATE_TOPICS, DELETE_TOPICS, DESCRIBE_CLUSTER,
                                     DESCRIBE_CONFIGS, INCREMENTAL_ALTER_CONFIGS, LIST_PARTITION_REASSIGNMENTS)
from trafka.wire.errors import ErrorCode

TOPIC, BROKER = 2, 4  # DescribeConfigs resource types
CONFIG_SOURCES = {0: "UNKNOWN", 1: "DYNAMIC_TOPIC_CONFIG", 2: "DYNAMIC_BROKER_CONFIG", 3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
                  4: "STATIC_BROKER_CONFIG", 5: "DEFAULT_CONFIG", 6: "DYNAMIC_BROKER_LOGGER_CONFIG",
                  7: "CLIENT_METRICS_CONFIG", 8: "GROUP_CONFIG"}
ALTER_OPERATIONS = {"SET": 0, "DELETE": 1, "APPEND": 2, "SUBTRACT": 3}
OPERATIONS = ["UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "CLUSTER_ACTION",
              "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS", "TWO_PHASE_COMMIT"]


# --- shared reads (v2 uses them too) ---------------------------------------------------------

def cluster_id(request) -> str:
    """The path's cluster id, which must be this cluster's (404 otherwise)."""
    wanted = request.path_params["cluster_id"]
    if wanted != request.app.state.broker.cluster_id:
        raise errors.RestError(404, 404, f"Cluster {wanted} cannot be found.")
    return wanted


async def described_cluster(kafka):
    answer = await kafka.send(DESCRIBE_CLUSTER, {"include_cluster_authorized_operations": False, "endpoint_type": 1})
    errors.check(answer.error_code, answer.error_message)
    return answer


async def topics_metadata(kafka, names: list[str] | None = None) -> list:
    """Metadata's topics (every topic the caller may describe when `names` is None)."""
    answer = await kafka.metadata(names)
    return sorted(answer.topics, key=lambda t: t.name)


async def topic_metadata(kafka, name: str):
    """One topic's metadata; the REST error for an unknown (or undescribable) topic."""
    found = (await topics_metadata(kafka, [name]))[0]
    errors.check(found.error_code, f"Not authorized to access topics: [{name}]"
                 if found.error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED else None)
    return found


def partition_of(topic, partition_id: int):
    for p in topic.partitions:
        if p.partition_index == partition_id:
            return p
    raise errors.from_kafka(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)


async def describe_configs(kafka, resource_type: int, name: str, keys: list[str] | None = None) -> list:
    answer = await kafka.send(DESCRIBE_CONFIGS, {
        "resources": [{"resource_type": resource_type, "resource_name": name, "configuration_keys": keys}],
        "include_synonyms": True, "include_documentation": False})
    result = answer.results[0]
    errors.check(result.error_code, result.error_message)
    return sorted(result.configs, key=lambda c: c.name)


async def alter_configs(kafka, resource_type: int, name: str, changes: list[tuple[str, int, str | None]],
                        validate_only: bool = False) -> None:
    answer = await kafka.send(INCREMENTAL_ALTER_CONFIGS, {
        "resources": [{"resource_type": resource_type, "resource_name": name,
                       "configs": [{"name": n, "config_operation": op, "value": v} for n, op, v in changes]}],
        "validate_only": validate_only})
    result = answer.responses[0]
    errors.check(result.error_code, result.error_message)


# --- shapes ----------------------------------------------------------------------------------

class Urls:
    """Where the v3 resources of one cluster live, and their resource names."""

    def __init__(self, request, cluster: str):
        self.cluster_id = cluster
        # ?include_authorized_operations=true: a topic lists what the caller may do with it
        self.operations = request.query_params.get("include_authorized_operations", "").lower() == "true"
        self.base = f"{answers.base_url(request)}/v3/clusters/{cluster}"
        self.crn = f"crn:///kafka={cluster}"

    def broker(self, broker_id) -> str:
        return f"{self.base}/brokers/{broker_id}"

    def topic(self, name: str) -> str:
        return f"{self.base}/topics/{name}"

    def partition(self, topic: str, p) -> str:
        return f"{self.topic(topic)}/partitions/{p}"


def cluster_json(urls: Urls, controller_id: int) -> dict:
    base = urls.base
    return answers.resource(
        "KafkaCluster", base, urls.crn, cluster_id=urls.cluster_id,
        controller=answers.related(urls.broker(controller_id)) if controller_id >= 0 else None,
        acls=answers.related(f"{base}/acls"), brokers=answers.related(f"{base}/brokers"),
        broker_configs=answers.related(f"{base}/broker-configs"),
        consumer_groups=answers.related(f"{base}/consumer-groups"), topics=answers.related(f"{base}/topics"),
        partition_reassignments=answers.related(f"{base}/topics/-/partitions/-/reassignment"))


def broker_json(urls: Urls, b) -> dict:
    url = urls.broker(b.broker_id)
    return answers.resource(
        "KafkaBroker", url, f"{urls.crn}/broker={b.broker_id}", cluster_id=urls.cluster_id, broker_id=b.broker_id,
        host=b.host, port=b.port, rack=b.rack, configs=answers.related(f"{url}/configs"),
        partition_replicas=answers.related(f"{url}/partition-replicas"))


def topic_json(urls: Urls, t) -> dict:
    url = urls.topic(t.name)
    return answers.resource(
        "KafkaTopic", url, f"{urls.crn}/topic={t.name}", cluster_id=urls.cluster_id, topic_name=t.name,
        is_internal=t.is_internal, replication_factor=len(t.partitions[0].replica_nodes) if t.partitions else 0,
        partitions_count=len(t.partitions), partitions=answers.related(f"{url}/partitions"),
        configs=answers.related(f"{url}/configs"),
        partition_reassignments=answers.related(f"{url}/partitions/-/reassignment"),
        authorized_operations=_operations(getattr(t, "topic_authorized_operations", 0)) if urls.operations else [])


def _operations(bits: int) -> list[str]:
    """Metadata's authorized-operations bit field as operation names (bit n: operation code n)."""
    return [name for code, name in enumerate(OPERATIONS) if code > 2 and bits > 0 and bits >> code & 1]


def partition_json(urls: Urls, topic: str, p) -> dict:
    url = urls.partition(topic, p.partition_index)
    return answers.resource(
        "KafkaPartition", url, f"{urls.crn}/topic={topic}/partition={p.partition_index}", cluster_id=urls.cluster_id,
        topic_name=topic, partition_id=p.partition_index,
        leader=answers.related(f"{url}/replicas/{p.leader_id}") if p.leader_id >= 0 else None,
        replicas=answers.related(f"{url}/replicas"), reassignment=answers.related(f"{url}/reassignment"))


def replica_json(urls: Urls, topic: str, p, broker_id: int) -> dict:
    url = f"{urls.partition(topic, p.partition_index)}/replicas/{broker_id}"
    return answers.resource(
        "KafkaReplica", url, f"{urls.crn}/topic={topic}/partition={p.partition_index}/replica={broker_id}",
        cluster_id=urls.cluster_id, topic_name=topic, partition_id=p.partition_index, broker_id=broker_id,
        is_leader=p.leader_id == broker_id, is_in_sync=broker_id in p.isr_nodes,
        broker=answers.related(urls.broker(broker_id)))


class ConfigOwner:
    """Whose configs a path names: a topic, a broker, or the cluster (the brokers' dynamic
    defaults, Kafka's BROKER resource ""), with their kind, links and identifying fields."""

    def __init__(self, params: dict, urls: Urls):
        if "topic" in params:
            self.kind, self.resource_type, self.resource_name = "Topic", TOPIC, params["topic"]
            self.url, self.crn = f"{urls.topic(params['topic'])}/configs", f"{urls.crn}/topic={params['topic']}/config="
            self.fields = {"topic_name": params["topic"]}
        elif "broker_id" in params:
            broker_id = answers.integer(params["broker_id"], "broker_id")
            self.kind, self.resource_type, self.resource_name = "Broker", BROKER, str(broker_id)
            self.url, self.crn = f"{urls.broker(broker_id)}/configs", f"{urls.crn}/broker={broker_id}/config="
            self.fields = {"broker_id": broker_id}
        else:
            self.kind, self.resource_type, self.resource_name = "Cluster", BROKER, ""
            self.url, self.crn = f"{urls.base}/broker-configs", f"{urls.crn}/broker-config="
            self.fields = {"config_type": "BROKER"}


def config_json(urls: Urls, owner: ConfigOwner, c) -> dict:
    """A KafkaTopicConfig, KafkaBrokerConfig or KafkaClusterConfig."""
    source = CONFIG_SOURCES.get(c.config_source, "UNKNOWN")
    return answers.resource(
        f"Kafka{owner.kind}Config", f"{owner.url}/{c.name}", f"{owner.crn}{c.name}", cluster_id=urls.cluster_id,
        **owner.fields, name=c.name, value=None if c.is_sensitive else c.value, is_default=source == "DEFAULT_CONFIG",
        is_read_only=c.read_only, is_sensitive=c.is_sensitive, source=source,
        synonyms=[{"name": s.name, "value": s.value, "source": CONFIG_SOURCES.get(s.source, "UNKNOWN")}
                  for s in c.synonyms])


# --- endpoints -------------------------------------------------------------------------------

async def list_clusters(request):
    kafka = answers.client(request)
    found = await described_cluster(kafka)
    urls = Urls(request, found.cluster_id)
    return answers.v3(answers.collection("KafkaClusterList", f"{answers.base_url(request)}/v3/clusters",
                                         [cluster_json(urls, found.controller_id)]))


async def get_cluster(request):
    urls = Urls(request, cluster_id(request))
    found = await described_cluster(answers.client(request))
    return answers.v3(cluster_json(urls, found.controller_id))


async def list_brokers(request):
    urls = Urls(request, cluster_id(request))
    found = await described_cluster(answers.client(request))
    return answers.v3(answers.collection("KafkaBrokerList", f"{urls.base}/brokers",
                                         [broker_json(urls, b) for b in sorted(found.brokers, key=lambda b: b.broker_id)]))


async def _broker(request, urls: Urls):
    broker_id = answers.integer(request.path_params["broker_id"], "broker_id")
    for b in (await described_cluster(answers.client(request))).brokers:
        if b.broker_id == broker_id:
            return b
    raise errors.RestError(404, 404, f"Broker {broker_id} cannot be found.")


async def get_broker(request):
    urls = Urls(request, cluster_id(request))
    return answers.v3(broker_json(urls, await _broker(request, urls)))


async def broker_replicas(request):
    urls = Urls(request, cluster_id(request))
    b = await _broker(request, urls)
    data = [replica_json(urls, t.name, p, b.broker_id) for t in await topics_metadata(answers.client(request))
            for p in t.partitions if b.broker_id in p.replica_nodes]
    return answers.v3(answers.collection("KafkaReplicaList", f"{urls.broker(b.broker_id)}/partition-replicas", data))


async def list_topics(request):
    urls = Urls(request, cluster_id(request))
    topics = [t for t in await topics_metadata(answers.client(request)) if t.error_code == ErrorCode.NONE]
    return answers.v3(answers.collection("KafkaTopicList", f"{urls.base}/topics", [topic_json(urls, t) for t in topics]))


async def get_topic(request):
    urls = Urls(request, cluster_id(request))
    return answers.v3(topic_json(urls, await topic_metadata(answers.client(request), request.path_params["topic"])))


async def create_topic(request):
    urls = Urls(request, cluster_id(request))
    body = await answers.json_object(request)
    name = body.get("topic_name")
    if not isinstance(name, str) or not name:
        raise errors.RestError(400, 40002, "topic_name is required")
    assignments = body.get("replicas_assignments") or []
    try:
        configs = [{"name": str(c["name"]), "value": None if c.get("value") is None else str(c["value"])}
                   for c in body.get("configs") or []]
        assigned = [{"partition_index": int(a["partition_id"]), "broker_ids": [int(b) for b in a["broker_ids"]]}
                    for a in assignments]
    except (KeyError, TypeError, ValueError):
        raise errors.RestError(400, 40002, "configs need name and value; replicas_assignments need partition_id and "
                                           "broker_ids") from None
    partitions = -1 if assigned else answers.integer(body.get("partitions_count", -1), "partitions_count")
    factor = -1 if assigned else answers.integer(body.get("replication_factor", -1), "replication_factor")
    kafka = answers.client(request)
    answer = await kafka.send(CREATE_TOPICS, {
        "topics": [{"name": name, "num_partitions": partitions, "replication_factor": factor,
                    "assignments": assigned, "configs": configs}],
        "timeout_ms": 30000, "validate_only": bool(body.get("validate_only"))})
    result = answer.topics[0]
    if result.error_code == ErrorCode.TOPIC_ALREADY_EXISTS:
        raise errors.RestError(400, 40002, f"Topic '{name}' already exists.")
    errors.check(result.error_code, result.error_message)
    if body.get("validate_only"):
        shape = topic_json(urls, _Described(name, result))
    else:
        shape = topic_json(urls, await topic_metadata(kafka, name))
    return answers.v3(shape, 201)


class _Described:
    """A topic as CreateTopics describes it (validate_only: nothing exists to ask Metadata)."""

    def __init__(self, name: str, result):
        self.name, self.is_internal = name, False
        self.partitions = [_Partition(result.replication_factor) for _ in range(max(result.num_partitions, 0))]


class _Partition:
    def __init__(self, factor: int):
        self.replica_nodes = [0] * max(factor, 0)


async def update_topic(request):
    """PATCH a topic's partitions_count: CreatePartitions up to that count."""
    urls = Urls(request, cluster_id(request))
    name = request.path_params["topic"]
    count = answers.integer((await answers.json_object(request)).get("partitions_count"), "partitions_count")
    kafka = answers.client(request)
    answer = await kafka.send(CREATE_PARTITIONS, {"topics": [{"name": name, "count": count, "assignments": None}],
                                                  "timeout_ms": 30000, "validate_only": False})
    result = answer.results[0]
    errors.check(result.error_code, result.error_message)
    return answers.v3(topic_json(urls, await topic_metadata(kafka, name)))


async def delete_topic(request):
    cluster_id(request)
    name = request.path_params["topic"]
    kafka = answers.client(request)
    topic = await topic_metadata(kafka, name)
    answer = await kafka.send(DELETE_TOPICS, {"topics": [{"name": name, "topic_id": topic.topic_id}], "timeout_ms": 30000})
    result = answer.responses[0]
    errors.check(result.error_code, result.error_message)
    return answers.no_content()


async def list_partitions(request):
    urls = Urls(request, cluster_id(request))
    topic = await topic_metadata(answers.client(request), request.path_params["topic"])
    data = [partition_json(urls, topic.name, p) for p in sorted(topic.partitions, key=lambda p: p.partition_index)]
    return answers.v3(answers.collection("KafkaPartitionList", f"{urls.topic(topic.name)}/partitions", data))


async def _partition(request):
    urls = Urls(request, cluster_id(request))
    topic = await topic_metadata(answers.client(request), request.path_params["topic"])
    return urls, topic, partition_of(topic, answers.integer(request.path_params["partition"], "partition_id"))


async def get_partition(request):
    urls, topic, p = await _partition(request)
    return answers.v3(partition_json(urls, topic.name, p))


async def list_replicas(request):
    urls, topic, p = await _partition(request)
    data = [replica_json(urls, topic.name, p, b) for b in p.replica_nodes]
    return answers.v3(answers.collection("KafkaReplicaList", f"{urls.partition(topic.name, p.partition_index)}/replicas",
                                         data))


async def get_replica(request):
    urls, topic, p = await _partition(request)
    broker_id = answers.integer(request.path_params["broker_id"], "broker_id")
    if broker_id not in p.replica_nodes:
        raise errors.RestError(404, 404, f"Replica {broker_id} of {topic.name}-{p.partition_index} cannot be found.")
    return answers.v3(replica_json(urls, topic.name, p, broker_id))


# --- reassignments ---------------------------------------------------------------------------

async def _reassignments(request, topic: str | None = None, partition: int | None = None) -> tuple[Urls, list[dict]]:
    """The partition reassignments in progress (ListPartitionReassignments), as KafkaReassignments."""
    urls = Urls(request, cluster_id(request))
    kafka = answers.client(request)
    wanted = None
    if topic is not None:
        found = await topic_metadata(kafka, topic)
        indexes = [p.partition_index for p in found.partitions] if partition is None else \
            [partition_of(found, partition).partition_index]
        wanted = [{"name": topic, "partition_indexes": indexes}]
    answer = await kafka.send(LIST_PARTITION_REASSIGNMENTS, {"timeout_ms": 30000, "topics": wanted})
    errors.check(answer.error_code, answer.error_message)
    data = []
    for t in sorted(answer.topics, key=lambda t: t.name):
        for p in sorted(t.partitions, key=lambda p: p.partition_index):
            url = urls.partition(t.name, p.partition_index)
            data.append(answers.resource(
                "KafkaReassignment", f"{url}/reassignment",
                f"{urls.crn}/topic={t.name}/partition={p.partition_index}/reassignment", cluster_id=urls.cluster_id,
                topic_name=t.name, partition_id=p.partition_index, adding_replicas=list(p.adding_replicas),
                removing_replicas=list(p.removing_replicas), replicas=answers.related(f"{url}/replicas")))
    return urls, data


async def list_all_reassignments(request):
    urls, data = await _reassignments(request)
    return answers.v3(answers.collection("KafkaReassignmentList", f"{urls.base}/topics/-/partitions/-/reassignment", data))


async def list_topic_reassignments(request):
    topic = request.path_params["topic"]
    urls, data = await _reassignments(request, topic)
    return answers.v3(answers.collection("KafkaReassignmentList", f"{urls.topic(topic)}/partitions/-/reassignment",
                                         data))


async def get_reassignment(request):
    topic, partition = request.path_params["topic"], answers.integer(request.path_params["partition"], "partition_id")
    _, data = await _reassignments(request, topic, partition)
    if not data:
        raise errors.RestError(404, 404, f"No reassignment of {topic}-{partition} is in progress.")
    return answers.v3(data[0])


# --- configs ---------------------------------------------------------------------------------

async def list_configs(request):
    urls = Urls(request, cluster_id(request))
    owner = ConfigOwner(request.path_params, urls)
    configs = await describe_configs(answers.client(request), owner.resource_type, owner.resource_name)
    if owner.kind == "Cluster":  # the cluster-wide ones: those set as dynamic defaults
        configs = [c for c in configs if c.config_source == 3]
    return answers.v3(answers.collection(f"Kafka{owner.kind}ConfigList", owner.url,
                                         [config_json(urls, owner, c) for c in configs]))


async def list_all_topic_configs(request):
    urls = Urls(request, cluster_id(request))
    kafka = answers.client(request)
    data = []
    for t in await topics_metadata(kafka):
        if t.error_code == ErrorCode.NONE:
            owner = ConfigOwner({"topic": t.name}, urls)
            data += [config_json(urls, owner, c) for c in await describe_configs(kafka, TOPIC, t.name)]
    return answers.v3(answers.collection("KafkaTopicConfigList", f"{urls.base}/topics/-/configs", data))


async def get_config(request):
    urls = Urls(request, cluster_id(request))
    owner = ConfigOwner(request.path_params, urls)
    wanted = request.path_params["name"]
    for c in await describe_configs(answers.client(request), owner.resource_type, owner.resource_name, [wanted]):
        if c.name == wanted and (owner.kind != "Cluster" or c.config_source == 3):
            return answers.v3(config_json(urls, owner, c))
    raise errors.RestError(404, 404, f"Config {wanted} cannot be found for {owner.kind.lower()} {owner.resource_name}.")


async def put_config(request):
    owner = ConfigOwner(request.path_params, Urls(request, cluster_id(request)))
    value = (await answers.json_object(request)).get("value")
    await alter_configs(answers.client(request), owner.resource_type, owner.resource_name,
                        [(request.path_params["name"], 0, None if value is None else str(value))])
    return answers.no_content()


async def reset_config(request):
    owner = ConfigOwner(request.path_params, Urls(request, cluster_id(request)))
    await alter_configs(answers.client(request), owner.resource_type, owner.resource_name,
                        [(request.path_params["name"], 1, None)])
    return answers.no_content()


async def alter_config_batch(request):
    owner = ConfigOwner(request.path_params, Urls(request, cluster_id(request)))
    body = await answers.json_object(request)
    try:
        changes = [(str(c["name"]), ALTER_OPERATIONS[str(c.get("operation") or "SET").upper()],
                    None if c.get("value") is None else str(c["value"])) for c in body.get("data") or []]
    except (KeyError, TypeError, AttributeError):
        raise errors.RestError(400, 40002, "each change needs a name, and an operation of SET, DELETE, APPEND or "
                                           "SUBTRACT") from None
    await alter_configs(answers.client(request), owner.resource_type, owner.resource_name, changes,
                        bool(body.get("validate_only")))
    return answers.no_content()


def routes() -> list[Route]:
    c = "/v3/clusters/{cluster_id}"
    t = c + "/topics/{topic}"
    b = c + "/brokers/{broker_id}"
    return [
        Route("/v3/clusters", list_clusters, methods=["GET"]),
        Route(c, get_cluster, methods=["GET"]),
        Route(c + "/brokers", list_brokers, methods=["GET"]),
        Route(b, get_broker, methods=["GET"]),
        Route(b + "/partition-replicas", broker_replicas, methods=["GET"]),
        Route(b + "/configs", list_configs, methods=["GET"]),
        Route(b + "/configs:alter", alter_config_batch, methods=["POST"]),
        Route(b + "/configs/{name}", get_config, methods=["GET"]),
        Route(b + "/configs/{name}", put_config, methods=["PUT"]),
        Route(b + "/configs/{name}", reset_config, methods=["DELETE"]),
        Route(c + "/broker-configs", list_configs, methods=["GET"]),
        Route(c + "/broker-configs:alter", alter_config_batch, methods=["POST"]),
        Route(c + "/broker-configs/{name}", get_config, methods=["GET"]),
        Route(c + "/broker-configs/{name}", put_config, methods=["PUT"]),
        Route(c + "/broker-configs/{name}", reset_config, methods=["DELETE"]),
        Route(c + "/topics", list_topics, methods=["GET"]),
        Route(c + "/topics", create_topic, methods=["POST"]),
        Route(c + "/topics/-/configs", list_all_topic_configs, methods=["GET"]),
        Route(t, get_topic, methods=["GET"]),
        Route(t, update_topic, methods=["PATCH"]),
        Route(t, delete_topic, methods=["DELETE"]),
        Route(t + "/configs", list_configs, methods=["GET"]),
        Route(t + "/configs:alter", alter_config_batch, methods=["POST"]),
        Route(t + "/configs/{name}", get_config, methods=["GET"]),
        Route(t + "/configs/{name}", put_config, methods=["PUT"]),
        Route(t + "/configs/{name}", reset_config, methods=["DELETE"]),
        Route(c + "/topics/-/partitions/-/reassignment", list_all_reassignments, methods=["GET"]),
        Route(t + "/partitions/-/reassignment", list_topic_reassignments, methods=["GET"]),
        Route(t + "/partitions/{partition}/reassignment", get_reassignment, methods=["GET"]),
        Route(t + "/partitions", list_partitions, methods=["GET"]),
        Route(t + "/partitions/{partition}", get_partition, methods=["GET"]),
        Route(t + "/partitions/{partition}/replicas", list_replicas, methods=["GET"]),
        Route(t + "/partitions/{partition}/replicas/{broker_id}", get_replica, methods=["GET"]),
    ]
