"""What the simulated-cluster tests (tests/cluster/) share: a replicated topic, records
produced with each acknowledgement recorded, reading a topic back, waiting."""

from __future__ import annotations

import time


def create_on_three(cluster, name: str, **configs) -> tuple[int, list[int]]:
    """A one-partition topic on three replicas (confluent-kafka's AdminClient): (its leader, its
    followers), as the controller placed it."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    for future in admin.create_topics([NewTopic(name, 1, 3, config=configs)]).values():
        future.result(10)
    state = cluster.partition_state(name, 0)
    return state["leader"], [r for r in state["replicas"] if r != state["leader"]]


def produce_acknowledged(cluster, name: str, values, *, timestamp: int = 0, **config) -> dict[bytes, int]:
    """`values` produced by one confluent-kafka producer (acks=all, linger.ms=5, unless `config`
    says otherwise; `timestamp`: every record's, else the producer's clock): each value's offset
    as its delivery report acknowledged it. Asserts that every one was acknowledged."""
    from confluent_kafka import Producer

    acknowledged: dict[bytes, int] = {}
    failed = []

    def delivered(error, message):
        if error is None:
            acknowledged[message.value()] = message.offset()
        else:
            failed.append(error)

    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all", "linger.ms": 5, **config})
    for value in values:
        producer.produce(name, value, timestamp=timestamp, on_delivery=delivered)
        producer.poll(0)
    assert producer.flush(60) == 0 and not failed, failed
    return acknowledged


def read_from_start(bootstrap: str, topic: str, partitions: int, want: int, *, timeout: float = 20,
                    settle: float = 0.0, **config) -> list[bytes]:
    """The values of `topic`'s partitions read by assignment from offset 0 (confluent-kafka),
    until `want` arrived or `timeout` passed; then `settle` seconds more, so a caller can see
    records beyond `want` (there should be none)."""
    from confluent_kafka import Consumer, TopicPartition

    reader = Consumer({"bootstrap.servers": bootstrap, "group.id": "reader", "enable.auto.commit": False, **config})
    reader.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    values: list[bytes] = []
    try:
        deadline = time.monotonic() + timeout
        while len(values) < want and time.monotonic() < deadline:
            message = reader.poll(0.3)
            if message is not None and message.error() is None:
                values.append(message.value())
        deadline = time.monotonic() + settle
        while time.monotonic() < deadline:
            message = reader.poll(0.2)
            if message is not None and message.error() is None:
                values.append(message.value())
    finally:
        reader.close()
    return values


def wait_for(condition, *, timeout: float = 20, what: str = "the condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


async def call(broker, api_key: int, version: int, body: dict) -> dict:
    """One request through `broker`'s handler, as a connection dispatches it: how the in-process
    cluster tests send what a client would, without a socket."""
    from trafka.broker.network.connection import RequestContext
    from trafka.broker.requests.routes import ROUTES, load_handlers
    from trafka.wire import framing
    from trafka.wire.messages import APIS

    frame = framing.encode_request(APIS[api_key], version, 1, "cluster-test", body)[4:]
    header = framing.peek_header(frame)
    request = framing.decode_request(frame, header, APIS[api_key])
    return await (ROUTES or load_handlers())[api_key].handle(RequestContext(broker, header, "test"), request)


def replicate(cluster) -> None:
    """Every running broker's replica fetcher, but the paused ones', pass after pass until none
    copies anything."""
    fetchers = [node for node in cluster.running_nodes() if node.node_id not in cluster.replication.paused]
    while any([cluster.replication.fetch_once(node) for node in fetchers]):
        pass
