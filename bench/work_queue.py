"""A share group as a work queue (issue #35): one partition, several confluent-kafka
ShareConsumers in explicit acknowledgement mode, each ACCEPTing every record it gets; records
per second and how evenly the members shared them, beside a consumer group (one member: a
consumer group cannot split one partition) reading the same records in the same run.

The members join first; then the records are produced (in batches of at most 100, as an
application handing out jobs one at a time does) and the members work through them as they
come. A broker that does not advertise ShareFetch answers with an error row, as a reference
broker failing a workload does."""

from __future__ import annotations

import threading
import time
import uuid

from bench.workloads import DEADLINE_SECONDS, STALL_SECONDS, _create_topic, produce_all

SHARE_FETCH = 78


def _supports_share_groups(bootstrap: str) -> bool:
    from trafka.testing.rawwire import RawClient

    with RawClient(bootstrap) as raw:
        versions = raw.request(18, 3, {"client_software_name": "bench", "client_software_version": "1"}).api_keys
    return any(v.api_key == SHARE_FETCH for v in versions)


def _earliest(bootstrap: str, group: str) -> None:
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[
        ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)])
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until its futures are done
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(30)


def _share_member(bootstrap: str, group: str, name: str, total: list[int], counts: dict, done: threading.Event,
                  errors: list) -> None:
    from confluent_kafka import AcknowledgeType, ShareConsumer

    consumer = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group, "client.id": name,
                              "share.acknowledgement.mode": "explicit", "max.poll.records": 500})
    consumer.subscribe([group])
    try:
        while not done.is_set():
            polled = consumer.poll(0.2) or []
            for message in polled:
                if message.error() is not None:
                    errors.append(str(message.error()))
                    continue
                consumer.acknowledge(message, AcknowledgeType.ACCEPT)
            counts[name] += len(polled)
            total[0] += len(polled)  # one int add under the GIL per poll; read by the main thread
    finally:
        consumer.close()


def _wait_for_members(bootstrap: str, group: str, members: int) -> None:
    from trafka.testing.rawwire import RawClient

    deadline = time.monotonic() + 30
    with RawClient(bootstrap) as raw:
        while time.monotonic() < deadline:
            [described] = raw.request(77, 1, {"group_ids": [group], "include_authorized_operations": False}).groups
            if described.error_code == 0 and sum(1 for m in described.members if m.assignment.topic_partitions) == members:
                return
            time.sleep(0.1)
    raise TimeoutError(f"the share group never had {members} members")


def work_queue(broker, count: int, members: int) -> dict:
    if not _supports_share_groups(broker.bootstrap):
        raise RuntimeError("no share groups (ShareFetch is not advertised)")
    from confluent_kafka import Consumer, Producer

    topic = _create_topic(broker.bootstrap, 1)
    _earliest(broker.bootstrap, topic)  # the group is named after the topic
    total, counts, errors = [0], {f"member-{i}": 0 for i in range(members)}, []
    done = threading.Event()
    threads = [threading.Thread(target=_share_member, args=(broker.bootstrap, topic, name, total, counts, done, errors),
                                daemon=True) for name in counts]
    for thread in threads:
        thread.start()
    _wait_for_members(broker.bootstrap, topic, members)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5, "batch.num.messages": 100})
    cpu0, started = broker.cpu_seconds(), time.perf_counter()
    produce_all(producer, topic, b"x" * 100, count, 1)
    progressed, seen = time.perf_counter(), 0
    while total[0] < count and time.perf_counter() - started < DEADLINE_SECONDS:
        time.sleep(0.05)
        if total[0] != seen:
            progressed, seen = time.perf_counter(), total[0]
        elif time.perf_counter() - progressed > STALL_SECONDS:
            break
    share_s, share_cpu = time.perf_counter() - started, broker.cpu_seconds() - cpu0
    received = total[0]
    done.set()
    for thread in threads:
        thread.join(30)
    if errors or received < count:
        raise TimeoutError(f"share group received {received} of {count}; errors: {errors[:3]}")

    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": f"{topic}-group", "enable.auto.commit": True,
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    read, started = 0, time.perf_counter()
    cpu0, first = broker.cpu_seconds(), None
    while read < count and time.perf_counter() - started < DEADLINE_SECONDS:
        got = sum(1 for m in consumer.consume(10000, 0.5) if m.error() is None)
        if got and first is None:
            first = time.perf_counter()
        read += got
    group_s, group_cpu = time.perf_counter() - (first or started), broker.cpu_seconds() - cpu0
    consumer.close()
    if read < count:
        raise TimeoutError(f"consumer group read {read} of {count}")
    mean = count / members
    return {
        "share_msgs_per_s": count / share_s,  # from the first record produced to the last one received
        "consumer_group_msgs_per_s": count / group_s,
        "share_per_group": (count / share_s) / (count / group_s),
        "fewest_per_member_vs_mean": min(counts.values()) / mean,
        "most_per_member_vs_mean": max(counts.values()) / mean,
        "share_broker_cpu_s": share_cpu,
        "group_broker_cpu_s": group_cpu,
    }


def _idle_share_partitions(bootstrap: str, partitions: int) -> None:
    """`partitions` share-partitions that exist and hold nothing: a group's first ShareFetch of
    an empty topic's partitions makes each (at the log end, no record acquired, no lock)."""
    from trafka.testing.rawwire import RawClient

    topic = _create_topic(bootstrap, partitions)
    with RawClient(bootstrap, timeout=60) as raw:
        topic_id = raw.request(3, 12, {"topics": [{"name": topic, "topic_id": uuid.UUID(int=0)}], "allow_auto_topic_creation": False,
                                       "include_topic_authorized_operations": False}).topics[0].topic_id
        answer = raw.request(SHARE_FETCH, 1, {
            "group_id": f"{topic}-idle", "member_id": "idle-member", "share_session_epoch": 0, "max_wait_ms": 0,
            "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 1, "batch_size": 1, "forgotten_topics_data": [],
            "topics": [{"topic_id": topic_id, "partitions": [{"partition_index": p, "acknowledgement_batches": []}
                                                            for p in range(partitions)]}]})
        if answer.error_code:
            raise RuntimeError(f"making {partitions} idle share-partitions: error {answer.error_code}")


def work_queue_beside_idle(broker, count: int, members: int, idle: int) -> dict:
    """Issue #44: the work queue alone, then again beside `idle` share-partitions that hold
    nothing (another group's), on the same broker. The lock timer's cost follows the locks that
    run out, not the share-partitions that exist, so the busy queue's rate should not move."""
    alone = work_queue(broker, count, members)
    _idle_share_partitions(broker.bootstrap, idle)
    beside = work_queue(broker, count, members)
    return {
        "share_msgs_per_s": beside["share_msgs_per_s"],
        "alone_share_msgs_per_s": alone["share_msgs_per_s"],
        "idle_share_partitions": idle,
        "rate_beside_idle_vs_alone": beside["share_msgs_per_s"] / alone["share_msgs_per_s"],
        "broker_cpu_s_beside_idle_vs_alone": beside["share_broker_cpu_s"] / alone["share_broker_cpu_s"],
    }
