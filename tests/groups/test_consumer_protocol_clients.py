"""The KIP-848 consumer group protocol with real clients: Java kafka-clients 4.3.0 (and 3.9.1 for
the basic case) and confluent-kafka 2.16.1, all with group.protocol=consumer, against a real
broker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import uuid

import pytest
from confluent_kafka import Consumer

from testkit.groups import create_topic
from testkit.java import JavaKafka, running_jvm
from trafka.testing import TrafkaBroker
from trafka.testing.waiting import wait_until

HEARTBEAT_INTERVAL_MS = 300
SESSION_TIMEOUT_MS = 45000
WAIT_S = 60
CLIENTS = ["java", "confluent"]


@pytest.fixture(scope="module")
def java39():
    """kafka-clients 3.9.1 speaks ConsumerGroupHeartbeat v0: the broker makes its member id."""
    yield from running_jvm("3.9.1")


@pytest.fixture
def broker(tmp_path):
    config = {"offsets.topic.num.partitions": 3, "group.consumer.heartbeat.interval.ms": HEARTBEAT_INTERVAL_MS}
    with TrafkaBroker(data_dir=tmp_path / "data", config=config, in_process=True) as running:
        yield running


@pytest.fixture
def members(request, broker):
    """make(client, group, topics=None, pattern=None, instance_id=None) -> a subscribed member."""
    made = []

    def make(client: str, group: str, topics=None, pattern=None, instance_id=None):
        if client in ("java", "java39"):
            member = JavaMember(request.getfixturevalue(client), broker, group, instance_id)
        else:
            member = ConfluentMember(broker, group, instance_id)
        member.subscribe(topics, pattern)
        made.append(member)
        return member

    yield make
    for member in made:
        member.close()


class JavaMember:
    def __init__(self, kafka: JavaKafka, broker, group: str, instance_id: str | None):
        props = {"bootstrap.servers": broker.bootstrap_servers, "group.id": group, "group.protocol": "consumer",
                 "enable.auto.commit": "false", "auto.offset.reset": "earliest"}
        if instance_id:
            props["group.instance.id"] = instance_id
        self.kafka = kafka
        self.consumer = kafka.make_consumer(props)

    def subscribe(self, topics, pattern) -> None:
        if pattern is None:
            self.consumer.subscribe(topics)
        else:  # a broker-side regex (KIP-848's SubscribedTopicRegex)
            jpattern = self.kafka.jvm.org.apache.kafka.clients.consumer.SubscriptionPattern(pattern)
            self.kafka.call(self.consumer.j.subscribe, jpattern)

    def poll(self) -> None:
        self.consumer.poll(50)

    def assignment(self) -> set[tuple[str, int]]:
        return set(self.consumer.assignment())

    def close(self) -> None:
        self.consumer.close()


class ConfluentMember:
    def __init__(self, broker, group: str, instance_id: str | None):
        config = {"bootstrap.servers": broker.bootstrap_servers, "group.id": group, "group.protocol": "consumer",
                  "enable.auto.commit": False, "auto.offset.reset": "earliest"}
        if instance_id:
            config["group.instance.id"] = instance_id
        self.consumer = Consumer(config)
        self.closed = False

    def subscribe(self, topics, pattern) -> None:
        # librdkafka sends a subscription starting with ^ to the broker as a regex.
        self.consumer.subscribe(topics if pattern is None else [pattern])

    def poll(self) -> None:
        self.consumer.poll(0.05)

    def assignment(self) -> set[tuple[str, int]]:
        return {(tp.topic, tp.partition) for tp in self.consumer.assignment()}

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.consumer.close()


def settle(members, expected: list[set[tuple[str, int]]] | None = None, *, sizes: list[int] | None = None,
           what: str = "assignment") -> None:
    """Poll every member until their assignments are `expected` (or have `sizes`)."""
    def done():
        for member in members:
            member.poll()
        got = [member.assignment() for member in members]
        if expected is not None:
            return got == expected
        return [len(g) for g in got] == sizes and len(set().union(*got)) == sum(sizes)

    wait_until(done, WAIT_S, what)


def partitions(topic: str, count: int) -> set[tuple[str, int]]:
    return {(topic, p) for p in range(count)}


@pytest.mark.parametrize("client", [*CLIENTS, "java39"])
def test_two_members_share_then_one_takes_all(broker, members, client):
    group, topic = f"g-{uuid.uuid4().hex[:6]}", "four"
    create_topic(broker.bootstrap_servers, topic, 4)
    first = members(client, group, [topic])
    settle([first], [partitions(topic, 4)], what="the first member owns all four")
    second = members(client, group, [topic])
    settle([first, second], sizes=[2, 2], what="two members with two partitions each")
    second.close()
    settle([first], [partitions(topic, 4)], what="the remaining member takes all four")


def test_mixed_java_and_confluent_group(broker, members):
    group, topic = "mixed", "four"
    create_topic(broker.bootstrap_servers, topic, 4)
    java_member = members("java", group, [topic])
    confluent_member = members("confluent", group, [topic])
    settle([java_member, confluent_member], sizes=[2, 2], what="Java and confluent members share four partitions")
    java_member.close()
    settle([confluent_member], [partitions(topic, 4)], what="the confluent member takes all four")


@pytest.mark.parametrize("client", CLIENTS)
def test_regex_subscription_picks_up_a_topic_created_later(broker, members, client):
    create_topic(broker.bootstrap_servers, "orders-eu", 2)
    create_topic(broker.bootstrap_servers, "payments", 2)
    member = members(client, "by-regex", pattern="^orders-.*" if client == "confluent" else "orders-.*")
    settle([member], [partitions("orders-eu", 2)], what="the regex matches orders-eu only")
    create_topic(broker.bootstrap_servers, "orders-us", 3)
    settle([member], [partitions("orders-eu", 2) | partitions("orders-us", 3)], what="orders-us is picked up")


def test_a_regex_is_resolved_after_the_heartbeat_that_subscribes(broker):
    """librdkafka's 0045_resubscribe_with_regex under KIP-848: subscribed to a regex and a literal
    topic, the first assignment holds only the literal topic's partitions, because the broker
    resolves a new regular expression asynchronously (Kafka's GroupMetadataManager); the regex's
    topics come in a later rebalance."""
    for name, count in (("regex_topic_a", 3), ("regex_topic_b", 5), ("literal", 2)):
        create_topic(broker.bootstrap_servers, name, count)
    added = []  # what each rebalance adds (incremental, as KIP-848 assigns)
    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "rx-" + uuid.uuid4().hex[:6],
                         "group.protocol": "consumer", "enable.auto.commit": False})

    def on_assign(_consumer, partitions_added):
        if partitions_added:
            added.append({(tp.topic, tp.partition) for tp in partitions_added})

    try:
        consumer.subscribe(["^regex_topic_.*", "literal"], on_assign=on_assign)
        everything = partitions("literal", 2) | partitions("regex_topic_a", 3) | partitions("regex_topic_b", 5)

        def all_assigned():
            consumer.poll(0.05)
            return {(tp.topic, tp.partition) for tp in consumer.assignment()} == everything

        wait_until(all_assigned, WAIT_S, "the regex's topics are assigned after the literal one")
    finally:
        consumer.close()
    assert added[0] == partitions("literal", 2), added
    assert set().union(*added[1:]) == everything - partitions("literal", 2), added


CRASHING_MEMBER = textwrap.dedent("""
    import sys
    from confluent_kafka import Consumer
    consumer = Consumer({"bootstrap.servers": sys.argv[1], "group.id": sys.argv[2], "group.protocol": "consumer"})
    consumer.subscribe([sys.argv[3]])
    while True:
        consumer.poll(0.1)
        if consumer.assignment():
            print("assigned", flush=True)
            break
    while True:
        consumer.poll(0.1)
""")


def session_deadlines(broker, group: str) -> dict[str, int]:
    coordinator = broker._thread_broker.broker.group_coordinator
    return {m.member_id: m.session_deadline for m in list(coordinator.consumer_groups[group].members.values())}


def describe_group(broker, group: str) -> str:
    """The group's members as the coordinator holds them, for a failed assertion."""
    coordinator = broker._thread_broker.broker.group_coordinator
    found = coordinator.consumer_groups.get(group)
    if found is None:
        return f"no group {group!r}"
    now = broker_now(broker)
    return "; ".join(f"{m.member_id}: epoch {m.member_epoch}, {m.state.name}, session ends in {m.session_deadline - now} ms, "
                     f"rebalance deadline {m.rebalance_deadline}" for m in list(found.members.values()))


def broker_now(broker) -> int:
    """Broker time as the coordinator's deadlines read it (the clock's timer)."""
    return broker._thread_broker.broker.clock.timer_ms()


@pytest.mark.parametrize("client", CLIENTS)
def test_session_of_a_crashed_member_expires_on_the_broker_clock(broker, members, client):
    """A member killed without leaving keeps its partitions until its session (45 s of broker
    time) runs out; the clock is moved, not waited for.

    Broker time is the wall clock plus the moved offset, so each check that the crashed member
    is still there comes right after a move that leaves 10 s of its session, and the moves are
    computed from its own deadline rather than from when the test thinks it died (a slow
    machine spends seconds between the kill and the move)."""
    group, topic = f"crash-{client}", "four"
    create_topic(broker.bootstrap_servers, topic, 4)
    live = members(client, group, [topic])
    settle([live], [partitions(topic, 4)], what="the live member owns all four")
    (live_id,) = session_deadlines(broker, group)
    child = subprocess.Popen([sys.executable, "-c", CRASHING_MEMBER, broker.bootstrap_servers, group, topic],
                             stdout=subprocess.PIPE, text=True, env=os.environ.copy())
    try:
        # The live member must keep polling to revoke (else its rebalance timeout fences it).
        settle([live], sizes=[2], what="the live member gave two partitions to the other process")
        assert child.stdout.readline().strip() == "assigned"
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        deadlines = session_deadlines(broker, group)
        assert len(deadlines) == 2 and live_id in deadlines, describe_group(broker, group)
        (crashed_id,) = set(deadlines) - {live_id}
        crashed_deadline = deadlines[crashed_id]  # its last heartbeat plus its session

        broker.advance_clock(max(crashed_deadline - 10_000 - broker_now(broker), 0))
        assert set(session_deadlines(broker, group)) == {live_id, crashed_id}, describe_group(broker, group)
        moved_at = broker_now(broker)
        # The live member heartbeats every 300 ms; wait until it has done so after the move, so
        # the next move leaves its session running.
        wait_until(lambda: session_deadlines(broker, group).get(live_id, 0) > moved_at + SESSION_TIMEOUT_MS - 1000,
                   WAIT_S, lambda: f"a heartbeat of the live member after the clock moved: {describe_group(broker, group)}")
        broker.advance_clock(max(crashed_deadline + 1000 - broker_now(broker), 0))
        assert set(session_deadlines(broker, group)) == {live_id}, describe_group(broker, group)
        settle([live], [partitions(topic, 4)], what="the live member takes the crashed member's partitions")
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


@pytest.mark.parametrize("client", CLIENTS)
def test_static_member_rejoin_keeps_its_partitions(broker, members, client):
    group, topic = f"static-{client}", "four"
    create_topic(broker.bootstrap_servers, topic, 4)
    a = members(client, group, [topic], instance_id="instance-a")
    b = members(client, group, [topic], instance_id="instance-b")
    settle([a, b], sizes=[2, 2], what="two static members with two partitions each")
    a_owned, b_owned = a.assignment(), b.assignment()
    b.close()  # a static member leaves with epoch -2: its partitions wait for it
    for _ in range(20):
        a.poll()
    assert a.assignment() == a_owned
    b_again = members(client, group, [topic], instance_id="instance-b")
    settle([a, b_again], [a_owned, b_owned], what="the rejoined static member gets its partitions back")
