"""REST proxy tests: a broker (a child process, as users run it) with its REST proxy on a free
port, and a small HTTP helper over `requests`."""

from __future__ import annotations

import json

import pytest
import requests

from trafka.testing import TrafkaBroker


class Proxy:
    """The broker's REST proxy: `get`, `post`... on paths, and v3's cluster path."""

    def __init__(self, url: str, auth=None):
        self.url = url.rstrip("/")
        self.session = requests.Session()
        self.session.auth = auth
        self._cluster = None

    def request(self, method: str, path: str, **kwargs) -> requests.Response:
        return self.session.request(method, self.url + path, timeout=60, **kwargs)

    def get(self, path, **kwargs):
        return self.request("GET", path, **kwargs)

    def post(self, path, **kwargs):
        return self.request("POST", path, **kwargs)

    def put(self, path, **kwargs):
        return self.request("PUT", path, **kwargs)

    def delete(self, path, **kwargs):
        return self.request("DELETE", path, **kwargs)

    @property
    def cluster(self) -> str:
        """/v3/clusters/<id>"""
        if self._cluster is None:
            answer = self.get("/v3/clusters")
            assert answer.status_code == 200, answer.text
            self._cluster = "/v3/clusters/" + answer.json()["data"][0]["cluster_id"]
        return self._cluster

    def create_topic(self, name: str, partitions: int = 1, **more) -> dict:
        answer = self.post(f"{self.cluster}/topics", json={"topic_name": name, "partitions_count": partitions, **more})
        assert answer.status_code == 201, answer.text
        return answer.json()

    def produce(self, topic: str, records: list[dict]) -> list[dict]:
        """v3 produce, streamed: one JSON object per record in one body; the answers."""
        body = "".join(json.dumps(r) for r in records)
        answer = self.post(f"{self.cluster}/topics/{topic}/records", data=body,
                           headers={"Content-Type": "application/json"})
        assert answer.status_code == 200, answer.text
        return answers_of(answer)

    def v2_produce(self, path: str, fmt: str, body: dict) -> requests.Response:
        return self.post(path, json=body, headers={"Content-Type": f"application/vnd.kafka.{fmt}.v2+json",
                                                   "Accept": "application/vnd.kafka.v2+json"})

    def end_offsets(self, topic: str, partitions: int) -> list[int]:
        return [self.get(f"/topics/{topic}/partitions/{p}/offsets").json()["end_offset"] for p in range(partitions)]


def read_back(bootstrap: str, topic: str, expected: int) -> list:
    """The topic's records as kafka-python reads them from the start, once `expected` are in
    (or 5 s pass without a new one, when fewer are there)."""
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", consumer_timeout_ms=5000)
    records = []
    try:
        for record in consumer:
            records.append(record)
            if len(records) >= expected:
                break
    finally:
        consumer.close()
    return records


def answers_of(response: requests.Response) -> list[dict]:
    """The JSON objects of a streamed answer, one after another."""
    decoder, text, at, out = json.JSONDecoder(), response.text, 0, []
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            return out
        value, at = decoder.raw_decode(text, at)
        out.append(value)


@pytest.fixture
def broker(tmp_path):
    """Topics are made by the tests (a produce to an unknown one is refused, not a new topic)."""
    with TrafkaBroker(data_dir=tmp_path / "data", config={"num.partitions": 1, "auto.create.topics.enable": False}) as running:
        yield running


@pytest.fixture
def proxy(broker) -> Proxy:
    assert broker.rest_proxy_url, "the broker runs without its REST proxy"
    return Proxy(broker.rest_proxy_url)
