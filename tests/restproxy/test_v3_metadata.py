"""API v3's cluster, brokers, topics, partitions, replicas and configs: Confluent's shapes
(kind, metadata.self, resource_name, related links), status codes and error codes."""

from __future__ import annotations


def test_cluster_and_brokers(proxy, broker):
    listed = proxy.get("/v3/clusters")
    assert listed.status_code == 200 and listed.headers["content-type"] == "application/json"
    body = listed.json()
    assert body["kind"] == "KafkaClusterList" and body["metadata"] == {"self": f"{proxy.url}/v3/clusters", "next": None}
    (cluster,) = body["data"]
    cid = cluster["cluster_id"]
    base = f"{proxy.url}/v3/clusters/{cid}"
    assert cluster["kind"] == "KafkaCluster"
    assert cluster["metadata"] == {"self": base, "resource_name": f"crn:///kafka={cid}"}
    assert cluster["controller"] == {"related": f"{base}/brokers/0"}
    for link in ("acls", "brokers", "topics", "consumer_groups", "broker_configs"):
        assert cluster[link]["related"].startswith(base + "/")
    assert proxy.get(f"/v3/clusters/{cid}").json() == cluster

    brokers = proxy.get(f"/v3/clusters/{cid}/brokers").json()
    assert brokers["kind"] == "KafkaBrokerList"
    (b,) = brokers["data"]
    assert b["kind"] == "KafkaBroker" and b["broker_id"] == 0 and b["port"] == broker.port and b["rack"] is None
    assert b["metadata"]["resource_name"] == f"crn:///kafka={cid}/broker=0"
    assert proxy.get(f"/v3/clusters/{cid}/brokers/0").json() == b

    missing = proxy.get(f"/v3/clusters/{cid}/brokers/7")
    assert missing.status_code == 404 and missing.json()["error_code"] == 404
    unknown = proxy.get("/v3/clusters/not-this-one/topics")
    assert unknown.status_code == 404 and unknown.json() == {"error_code": 404,
                                                             "message": "Cluster not-this-one cannot be found."}


def test_broker_configs(proxy):
    configs = proxy.get(f"{proxy.cluster}/brokers/0/configs").json()
    assert configs["kind"] == "KafkaBrokerConfigList"
    by_name = {c["name"]: c for c in configs["data"]}
    retention = by_name["log.retention.ms"] if "log.retention.ms" in by_name else by_name["log.retention.hours"]
    assert retention["kind"] == "KafkaBrokerConfig" and retention["broker_id"] == 0
    one = proxy.get(f"{proxy.cluster}/brokers/0/configs/{retention['name']}").json()
    assert one == retention

    base = f"{proxy.cluster}/brokers/0/configs"
    assert proxy.put(f"{base}/log.cleaner.backoff.ms", json={"value": "20000"}).status_code == 204
    changed = proxy.get(f"{base}/log.cleaner.backoff.ms").json()
    assert (changed["value"], changed["source"]) == ("20000", "DYNAMIC_BROKER_CONFIG")
    assert proxy.post(f"{base}:alter", json={"data": [{"name": "log.cleaner.backoff.ms", "operation": "DELETE"}]}).status_code == 204
    assert proxy.get(f"{base}/log.cleaner.backoff.ms").json()["source"] != "DYNAMIC_BROKER_CONFIG"
    refused = proxy.put(f"{base}/broker.id", json={"value": "5"})
    assert refused.status_code == 400 and refused.json()["error_code"] == 40002


def test_topic_lifecycle(proxy):
    created = proxy.create_topic("orders", 3, configs=[{"name": "retention.ms", "value": "3600000"}])
    cid = proxy.cluster.rsplit("/", 1)[1]
    url = f"{proxy.url}{proxy.cluster}/topics/orders"
    assert created["kind"] == "KafkaTopic" and created["topic_name"] == "orders"
    assert created["metadata"] == {"self": url, "resource_name": f"crn:///kafka={cid}/topic=orders"}
    assert created["partitions_count"] == 3 and created["replication_factor"] == 1 and created["is_internal"] is False
    assert created["partitions"] == {"related": f"{url}/partitions"}
    assert created["configs"] == {"related": f"{url}/configs"}

    again = proxy.post(f"{proxy.cluster}/topics", json={"topic_name": "orders", "partitions_count": 1})
    assert again.status_code == 400 and again.json() == {"error_code": 40002, "message": "Topic 'orders' already exists."}

    listed = proxy.get(f"{proxy.cluster}/topics").json()
    assert listed["kind"] == "KafkaTopicList"
    assert "orders" in [t["topic_name"] for t in listed["data"]]
    assert proxy.get(f"{proxy.cluster}/topics/orders").json() == created

    partitions = proxy.get(f"{proxy.cluster}/topics/orders/partitions").json()
    assert partitions["kind"] == "KafkaPartitionList" and [p["partition_id"] for p in partitions["data"]] == [0, 1, 2]
    p1 = proxy.get(f"{proxy.cluster}/topics/orders/partitions/1").json()
    assert p1["kind"] == "KafkaPartition"
    assert p1["metadata"]["resource_name"] == f"crn:///kafka={cid}/topic=orders/partition=1"
    assert p1["leader"] == {"related": f"{url}/partitions/1/replicas/0"}
    replicas = proxy.get(f"{proxy.cluster}/topics/orders/partitions/1/replicas").json()
    assert replicas["kind"] == "KafkaReplicaList"
    (replica,) = replicas["data"]
    assert (replica["broker_id"], replica["is_leader"], replica["is_in_sync"]) == (0, True, True)
    assert proxy.get(f"{proxy.cluster}/topics/orders/partitions/1/replicas/0").json() == replica
    on_broker = proxy.get(f"{proxy.cluster}/brokers/0/partition-replicas").json()
    assert {(r["topic_name"], r["partition_id"]) for r in on_broker["data"]} >= {("orders", 0), ("orders", 1), ("orders", 2)}

    missing = proxy.get(f"{proxy.cluster}/topics/orders/partitions/9")
    assert missing.status_code == 404 and missing.json()["error_code"] == 40403

    grown = proxy.request("PATCH", f"{proxy.cluster}/topics/orders", json={"partitions_count": 4})
    assert grown.status_code == 200 and grown.json()["partitions_count"] == 4

    assert proxy.delete(f"{proxy.cluster}/topics/orders").status_code == 204
    gone = proxy.get(f"{proxy.cluster}/topics/orders")
    assert gone.status_code == 404
    assert gone.json() == {"error_code": 40403, "message": "This server does not host this topic-partition."}
    assert proxy.delete(f"{proxy.cluster}/topics/orders").status_code == 404


def test_create_topic_refusals(proxy):
    for body in ({}, {"topic_name": ""}, {"topic_name": "bad name!"}, {"topic_name": "x", "partitions_count": 0},
                 {"topic_name": "y", "partitions_count": "many"}, {"topic_name": "z", "replication_factor": 3}):
        answer = proxy.post(f"{proxy.cluster}/topics", json=body)
        assert answer.status_code == 400, (body, answer.text)
        assert answer.json()["error_code"] in (400, 40002)
    broken = proxy.post(f"{proxy.cluster}/topics", data="{not json", headers={"Content-Type": "application/json"})
    assert broken.status_code == 400
    assert [t["topic_name"] for t in proxy.get(f"{proxy.cluster}/topics").json()["data"]
            if not t["is_internal"]] == []


def test_topic_configs(proxy):
    proxy.create_topic("settings")
    base = f"{proxy.cluster}/topics/settings/configs"
    listed = proxy.get(base).json()
    assert listed["kind"] == "KafkaTopicConfigList"
    retention = proxy.get(f"{base}/retention.ms").json()
    assert retention["kind"] == "KafkaTopicConfig" and retention["topic_name"] == "settings"
    assert retention["is_default"] is True and retention["source"] == "DEFAULT_CONFIG"
    assert retention["metadata"]["resource_name"].endswith("/topic=settings/config=retention.ms")

    assert proxy.put(f"{base}/retention.ms", json={"value": "60000"}).status_code == 204
    changed = proxy.get(f"{base}/retention.ms").json()
    assert (changed["value"], changed["is_default"], changed["source"]) == ("60000", False, "DYNAMIC_TOPIC_CONFIG")

    batch = {"data": [{"name": "cleanup.policy", "value": "compact"}, {"name": "retention.ms", "operation": "DELETE"}]}
    assert proxy.post(f"{base}:alter", json=batch).status_code == 204
    assert proxy.get(f"{base}/cleanup.policy").json()["value"] == "compact"
    assert proxy.get(f"{base}/retention.ms").json()["is_default"] is True

    assert proxy.delete(f"{base}/cleanup.policy").status_code == 204
    assert proxy.get(f"{base}/cleanup.policy").json()["value"] == "delete"

    wrong = proxy.put(f"{base}/retention.ms", json={"value": "soon"})
    assert wrong.status_code == 400 and wrong.json()["error_code"] == 40002
    assert proxy.get(f"{base}/no.such.config").status_code == 404
    everything = proxy.get(f"{proxy.cluster}/topics/-/configs").json()
    assert {"settings"} <= {c["topic_name"] for c in everything["data"]}


def test_unknown_paths_and_methods(proxy):
    assert proxy.get("/v3/nothing").json() == {"error_code": 404, "message": "HTTP 404 Not Found"}
    wrong = proxy.put("/v3/clusters")
    assert wrong.status_code == 405 and wrong.json()["error_code"] == 405


def test_cluster_wide_broker_configs(proxy):
    cid = proxy.cluster.rsplit("/", 1)[1]
    base = f"{proxy.cluster}/broker-configs"
    listed = proxy.get(base).json()
    assert (listed["kind"], listed["metadata"]) == ("KafkaClusterConfigList", {"self": f"{proxy.url}{base}", "next": None})
    before = {c["name"] for c in listed["data"]}
    assert "log.retention.ms" not in before
    assert proxy.put(f"{base}/log.retention.ms", json={"value": "7200000"}).status_code == 204
    config = proxy.get(f"{base}/log.retention.ms").json()
    assert config["kind"] == "KafkaClusterConfig" and config["config_type"] == "BROKER"
    assert (config["value"], config["source"]) == ("7200000", "DYNAMIC_DEFAULT_BROKER_CONFIG")
    assert config["metadata"]["resource_name"] == f"crn:///kafka={cid}/broker-config=log.retention.ms"
    assert {c["name"] for c in proxy.get(base).json()["data"]} == before | {"log.retention.ms"}
    # A broker's own view has the default as its source now, as Kafka reports it.
    assert proxy.get(f"{proxy.cluster}/brokers/0/configs/log.retention.ms").json()["source"] == \
        "DYNAMIC_DEFAULT_BROKER_CONFIG"
    assert proxy.post(f"{base}:alter", json={"data": [{"name": "log.retention.ms", "operation": "DELETE"}]}).status_code == 204
    assert {c["name"] for c in proxy.get(base).json()["data"]} == before
    assert proxy.get(f"{base}/log.retention.ms").status_code == 404


def test_v3_answers_json_only(proxy):
    """Confluent's v3 resources produce application/json: an Accept header that admits it is
    served, one that does not is refused 406 in v3's error shape."""
    for accept in ("application/json", "*/*", "application/*", "text/html, application/json;q=0.5"):
        assert proxy.get("/v3/clusters", headers={"Accept": accept}).status_code == 200, accept
    for accept in ("text/html", "application/xml", "application/vnd.kafka.v2+json", "application/json;q=0"):
        refused = proxy.get("/v3/clusters", headers={"Accept": accept})
        assert refused.status_code == 406 and refused.headers["content-type"] == "application/json", accept
        assert refused.json() == {"error_code": 406, "message": "HTTP 406 Not Acceptable"}
