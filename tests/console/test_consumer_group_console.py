"""KIP-848 consumer groups in the console's JSON API and /metrics: members with their epochs and
assignments, committed offsets and lag, and an offset reset once the group is empty."""

import json
import urllib.request

from testkit.groups import create_topic, produce
from trafka.testing.rawwire import RawClient


def api(broker, path, body=None):
    request = urllib.request.Request(broker.console_url + path, method="GET" if body is None else "POST",
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        text = response.read().decode()
    return json.loads(text) if response.headers.get_content_type() == "application/json" else text


def heartbeat(raw: RawClient, member_id: str, epoch: int, topics=None):
    return raw.request(68, 1, {
        "group_id": "modern", "member_id": member_id, "member_epoch": epoch, "instance_id": None, "rack_id": None,
        "rebalance_timeout_ms": 60000 if epoch == 0 else -1, "subscribed_topic_names": topics,
        "subscribed_topic_regex": None, "server_assignor": None, "topic_partitions": [] if epoch == 0 else None,
    })


def test_consumer_groups_in_the_api_and_metrics(broker):
    create_topic(broker.bootstrap_servers, "orders", 2)
    produce(broker.bootstrap_servers, "orders", [f"v{i}" for i in range(10)], partitions=2)
    with RawClient(broker.bootstrap_servers) as raw:
        joined = heartbeat(raw, "member-1", 0, topics=["orders"])
        assert joined.error_code == 0
        committed = raw.request(8, 9, {"group_id": "modern", "generation_id_or_member_epoch": joined.member_epoch,
                                       "member_id": "member-1", "group_instance_id": None, "topics": [
                                           {"name": "orders", "partitions": [{"partition_index": 0, "committed_offset": 2,
                                                                              "committed_metadata": ""}]}]})
        assert committed.topics[0].partitions[0].error_code == 0

        group = api(broker, "api/v1/groups/modern")
        assert (group["group_type"], group["state"], group["protocol_type"], group["protocol"], group["generation"]) == (
            "consumer", "Stable", "consumer", "uniform", 1)
        [member] = group["members"]
        assert (member["member_id"], member["member_epoch"], member["subscription"]) == ("member-1", 1, ["orders"])
        assert member["assignment"] == [{"topic": "orders", "partitions": [0, 1]}]
        assert [(o["partition"], o["committed_offset"], o["lag"], o["member_id"]) for o in group["offsets"]] == [
            (0, 2, 3, "member-1"), (1, None, None, "member-1")]
        assert "modern" in [g["group_id"] for g in api(broker, "api/v1/groups")]
        assert 'trafka_group_lag{group="modern",partition="0",topic="orders"} 3.0' in api(broker, "metrics")

        assert heartbeat(raw, "member-1", -1).error_code == 0
    reset = api(broker, "api/v1/groups/modern/reset-offsets", {"to": "earliest", "topic": "orders"})
    assert [(o["partition"], o["committed_offset"]) for o in reset["offsets"]] == [(0, 0)]
    assert api(broker, "api/v1/groups/modern")["state"] == "Empty"
