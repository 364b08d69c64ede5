"""`python -m bench.rest_proxy [--records N] [--runs N]`: records/s produced over the REST
proxy, beside confluent-kafka producing the same records to the same broker in the same run.

One `trafka serve` (child process, defaults) and one topic of 4 partitions per producer. Each
run produces N records of 100 bytes with string keys:
- confluent-kafka (linger.ms=5, acks=all), timed to the last delivery report: the reference;
- v3 streamed: POST /v3/clusters/{c}/topics/{t}/records, 1,000 records (JSON objects one after
  another) per request on one keep-alive connection, timed to the last answer;
- v2 binary: POST /topics/{t}, 1,000 records per request.
The producers alternate run by run, so a busy machine slows them alike; the figure is each HTTP
way's median records/s divided by confluent-kafka's (x0.10 means a tenth as fast).
"""

from __future__ import annotations

import argparse
import base64
import json
import statistics
import time

import requests
from confluent_kafka import Producer

from trafka.testing import TrafkaBroker

PER_REQUEST = 1000
VALUE = b"x" * 100


def kafka_client(broker: TrafkaBroker, topic: str, count: int) -> float:
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 5, "acks": "all"})
    done = []
    started = time.perf_counter()
    for i in range(count):
        while True:
            try:
                producer.produce(topic, key=b"k%d" % (i % 100), value=VALUE, on_delivery=lambda e, m: done.append(e))
                break
            except BufferError:
                producer.poll(0.01)
        producer.poll(0)
    producer.flush(120)
    elapsed = time.perf_counter() - started
    assert len(done) == count and not any(done), "confluent-kafka lost records"
    return count / elapsed


def v3_streamed(session: requests.Session, url: str, topic: str, count: int) -> float:
    value = base64.b64encode(VALUE).decode()
    started = time.perf_counter()
    for first in range(0, count, PER_REQUEST):
        body = "".join(json.dumps({"key": {"type": "STRING", "data": f"k{i % 100}"},
                                   "value": {"type": "BINARY", "data": value}})
                       for i in range(first, min(first + PER_REQUEST, count)))
        answer = session.post(f"{url}/topics/{topic}/records", data=body, headers={"Content-Type": "application/json"})
        assert answer.status_code == 200 and answer.text.count('"error_code": 200') == min(PER_REQUEST, count - first), \
            answer.text[:300]
    return count / (time.perf_counter() - started)


def v2_binary(session: requests.Session, url: str, topic: str, count: int) -> float:
    value = base64.b64encode(VALUE).decode()
    started = time.perf_counter()
    for first in range(0, count, PER_REQUEST):
        records = [{"key": base64.b64encode(b"k%d" % (i % 100)).decode(), "value": value}
                   for i in range(first, min(first + PER_REQUEST, count))]
        answer = session.post(f"{url}/topics/{topic}", data=json.dumps({"records": records}),
                              headers={"Content-Type": "application/vnd.kafka.binary.v2+json"})
        assert answer.status_code == 200 and all(o["error_code"] is None for o in answer.json()["offsets"])
    return count / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with TrafkaBroker(config={"num.partitions": 4}) as broker:
        proxy = broker.rest_proxy_url.rstrip("/")
        session = requests.Session()
        cluster = session.get(f"{proxy}/v3/clusters").json()["data"][0]["cluster_id"]
        v3_url = f"{proxy}/v3/clusters/{cluster}"
        rates: dict[str, list[float]] = {"confluent-kafka": [], "v3 streamed": [], "v2 binary": []}
        for run in range(args.runs):
            for way in rates:
                topic = f"bench-{way.replace(' ', '-')}-{run}"
                session.post(f"{v3_url}/topics", json={"topic_name": topic, "partitions_count": 4}).raise_for_status()
                if way == "confluent-kafka":
                    rates[way].append(kafka_client(broker, topic, args.records))
                elif way == "v3 streamed":
                    rates[way].append(v3_streamed(session, v3_url, topic, args.records))
                else:
                    rates[way].append(v2_binary(session, proxy, topic, args.records))
    reference = statistics.median(rates["confluent-kafka"])
    print(f"{args.records} records of {len(VALUE)} bytes, {args.runs} runs, medians:")
    for way, values in rates.items():
        median = statistics.median(values)
        print(f"  {way:16} {median:10,.0f} records/s   x{median / reference:.2f} of confluent-kafka")


if __name__ == "__main__":
    main()
