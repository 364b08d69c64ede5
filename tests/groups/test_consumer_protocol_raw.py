"""ConsumerGroupHeartbeat (KIP-848) on the wire: a raw client against a real broker, for the
error cases and the steps of a rebalance (revoke before assign) that clients hide."""

from __future__ import annotations

import uuid

import pytest

from trafka.testing import TrafkaBroker
from trafka.testing.rawwire import RawClient
from trafka.wire.errors import ErrorCode as E

HEARTBEAT = 68
V = 1


@pytest.fixture
def broker(tmp_path):
    config = {"offsets.topic.num.partitions": 3, "group.consumer.session.timeout.ms": 30000}
    with TrafkaBroker(data_dir=tmp_path / "data", config=config, in_process=True) as running:
        yield running


@pytest.fixture
def raw(broker):
    with RawClient(broker.bootstrap_servers) as client:
        yield client


def create_topic(raw: RawClient, name: str, partitions: int) -> uuid.UUID:
    body = raw.request(19, 7, {"topics": [{"name": name, "num_partitions": partitions, "replication_factor": 1,
                                           "assignments": [], "configs": []}], "timeout_ms": 10000, "validate_only": False})
    assert body.topics[0].error_code == 0, body
    return body.topics[0].topic_id


def heartbeat(raw: RawClient, member_id: str, epoch: int, *, group="g", topics=None, regex=None, owned=None,
              instance_id=None, rebalance_timeout_ms=None, assignor=None, version=V):
    body = {"group_id": group, "member_id": member_id, "member_epoch": epoch, "instance_id": instance_id,
            "rack_id": None, "subscribed_topic_names": topics, "server_assignor": assignor,
            "rebalance_timeout_ms": (60000 if epoch == 0 else -1) if rebalance_timeout_ms is None else rebalance_timeout_ms,
            "topic_partitions": None if owned is None else [
                {"topic_id": t, "partitions": sorted(ps)} for t, ps in owned.items()]}
    if version >= 1:
        body["subscribed_topic_regex"] = regex
    return raw.request(HEARTBEAT, version, body)


def join(raw, member_id, **kwargs):
    kwargs.setdefault("owned", {})
    return heartbeat(raw, member_id, 0, **kwargs)


def assigned(response) -> dict[uuid.UUID, set[int]]:
    assert response.assignment is not None, response
    return {tp.topic_id: set(tp.partitions) for tp in response.assignment.topic_partitions}


def test_one_member_gets_every_partition(raw):
    topic_id = create_topic(raw, "t", 4)
    response = join(raw, "m1", topics=["t"])
    assert response.error_code == 0, response
    assert response.member_id == "m1"
    assert response.member_epoch == 1
    assert response.heartbeat_interval_ms == 5000
    assert assigned(response) == {topic_id: {0, 1, 2, 3}}
    again = heartbeat(raw, "m1", 1, owned={topic_id: {0, 1, 2, 3}})
    assert (again.error_code, again.member_epoch, again.assignment) == (0, 1, None)


def test_v0_generates_the_member_id_v1_requires_one(raw):
    create_topic(raw, "t", 1)
    v0 = join(raw, "", topics=["t"], version=0)
    assert v0.error_code == 0 and v0.member_id
    v1 = join(raw, "", topics=["t"])
    assert v1.error_code == E.INVALID_REQUEST
    assert "MemberId" in v1.error_message


def test_revoke_before_assign(raw):
    """The second member gets nothing until the first has revoked what moves to it."""
    topic_id = create_topic(raw, "t", 4)
    first = join(raw, "m1", topics=["t"])
    assert assigned(first) == {topic_id: {0, 1, 2, 3}}

    second = join(raw, "m2", topics=["t"])
    assert second.error_code == 0
    assert second.member_epoch == 2  # the group epoch moved on; its partitions are not free yet
    assert assigned(second) == {}

    # m1 still reports all four: it is told to keep two and stays at epoch 1 until it revokes.
    revoke = heartbeat(raw, "m1", 1, owned={topic_id: {0, 1, 2, 3}})
    assert revoke.error_code == 0 and revoke.member_epoch == 1
    kept = assigned(revoke)[topic_id]
    assert len(kept) == 2
    moving = {0, 1, 2, 3} - kept

    waiting = heartbeat(raw, "m2", 2, owned={})
    assert waiting.error_code == 0 and waiting.assignment is None  # still owned by m1

    done = heartbeat(raw, "m1", 1, owned={topic_id: kept})
    assert done.error_code == 0 and done.member_epoch == 2
    assert done.assignment is None  # its assignment did not change, only its epoch

    got = heartbeat(raw, "m2", 2, owned={})
    assert got.error_code == 0 and got.member_epoch == 2
    assert assigned(got) == {topic_id: moving}


def test_leaving_member_frees_its_partitions(raw):
    topic_id = create_topic(raw, "t", 4)
    join(raw, "m1", topics=["t"])
    join(raw, "m2", topics=["t"])
    kept = assigned(heartbeat(raw, "m1", 1, owned={topic_id: {0, 1, 2, 3}}))[topic_id]
    heartbeat(raw, "m1", 1, owned={topic_id: kept})
    heartbeat(raw, "m2", 2, owned={})
    left = heartbeat(raw, "m2", -1)
    assert (left.error_code, left.member_epoch) == (0, -1)
    after = heartbeat(raw, "m1", 2, owned={topic_id: kept})
    assert after.error_code == 0 and after.member_epoch == 3
    assert assigned(after) == {topic_id: {0, 1, 2, 3}}


def test_epoch_errors(raw):
    create_topic(raw, "t", 2)
    join(raw, "m1", topics=["t"])
    assert heartbeat(raw, "m1", 5).error_code == E.FENCED_MEMBER_EPOCH
    assert heartbeat(raw, "nobody", 1).error_code == E.UNKNOWN_MEMBER_ID
    assert heartbeat(raw, "m1", 1, group="no-such-group").error_code == E.GROUP_ID_NOT_FOUND
    assert heartbeat(raw, "nobody", -1).error_code == E.UNKNOWN_MEMBER_ID
    assert heartbeat(raw, "m1", -3).error_code == E.INVALID_REQUEST


@pytest.mark.parametrize("fields, message", [
    (dict(topics=["t"], rebalance_timeout_ms=-1), "RebalanceTimeoutMs"),
    (dict(topics=["t"], owned=None), "TopicPartitions"),
    (dict(topics=None), "SubscribedTopicNames"),
    (dict(topics=["t"], group=""), "GroupId"),
    (dict(topics=["t"], instance_id=""), "InstanceId"),
])
def test_join_without_required_fields_is_invalid(raw, fields, message):
    fields.setdefault("owned", {})
    response = heartbeat(raw, "m1", 0, **fields)
    assert response.error_code == E.INVALID_REQUEST, response
    assert message in response.error_message


def test_unsupported_assignor_and_bad_regex(raw):
    create_topic(raw, "t", 1)
    assert join(raw, "m1", topics=["t"], assignor="sticky").error_code == E.UNSUPPORTED_ASSIGNOR
    assert join(raw, "m1", topics=["t"], assignor="range").error_code == 0
    assert join(raw, "m2", regex="t[").error_code == E.INVALID_REGULAR_EXPRESSION


def test_regex_subscription_follows_created_topics(raw):
    a = create_topic(raw, "orders-a", 2)
    create_topic(raw, "payments", 2)
    first = join(raw, "m1", regex="orders-.*")
    assert assigned(first) == {}  # a new regex is resolved after the heartbeat that brings it
    resolved = heartbeat(raw, "m1", first.member_epoch, owned={})
    assert resolved.member_epoch == first.member_epoch + 1
    assert assigned(resolved) == {a: {0, 1}}
    b = create_topic(raw, "orders-b", 1)
    later = heartbeat(raw, "m1", resolved.member_epoch, owned={a: {0, 1}})
    assert later.member_epoch == resolved.member_epoch + 1
    assert assigned(later) == {a: {0, 1}, b: {0}}


def test_a_new_regex_is_resolved_asynchronously_and_a_known_one_at_once(raw):
    """Kafka's GroupMetadataManager: the heartbeat that brings a regex no member has yet gets the
    literal topics only; the group epoch moves once the regex is resolved (here: at the group's
    next heartbeat). A member joining with a regex the group has resolved gets its topics at once."""
    literal = create_topic(raw, "literal", 2)
    a = create_topic(raw, "regex_topic_a", 3)
    first = join(raw, "m1", topics=["literal"], regex="regex_topic_.*")
    assert assigned(first) == {literal: {0, 1}}
    grown = heartbeat(raw, "m1", first.member_epoch, owned={literal: {0, 1}})
    assert grown.member_epoch == first.member_epoch + 1
    assert assigned(grown) == {literal: {0, 1}, a: {0, 1, 2}}
    second = join(raw, "m2", regex="regex_topic_.*")  # the group knows this regex already
    assert second.member_epoch == grown.member_epoch + 1
    changed = join(raw, "m3", topics=["literal"], regex="other_.*")
    assert changed.error_code == 0
    described = raw.request(69, 0, {"group_ids": ["g"], "include_authorized_operations": False}).groups[0]
    targets = {m.member_id: {tp.topic_name for tp in m.target_assignment.topic_partitions} for m in described.members}
    assert set().union(*targets.values()) == {"literal", "regex_topic_a"}
    assert targets["m2"] <= {"regex_topic_a"} and targets["m2"]  # m2's regex counted at its join


def test_range_assignor(raw):
    topic_id = create_topic(raw, "t", 5)
    join(raw, "a", topics=["t"], assignor="range")
    join(raw, "b", topics=["t"], assignor="range")
    kept = assigned(heartbeat(raw, "a", 1, owned={topic_id: {0, 1, 2, 3, 4}}))[topic_id]
    assert kept == {0, 1, 2}  # range: a (first by member id) takes 0-2, b 3-4
    heartbeat(raw, "a", 1, owned={topic_id: kept})
    assert assigned(heartbeat(raw, "b", 2, owned={})) == {topic_id: {3, 4}}


def test_group_max_size(tmp_path):
    config = {"offsets.topic.num.partitions": 3, "group.consumer.max.size": 1}
    with TrafkaBroker(data_dir=tmp_path / "data", config=config, in_process=True) as broker, \
            RawClient(broker.bootstrap_servers) as raw:
        create_topic(raw, "t", 1)
        assert join(raw, "m1", topics=["t"]).error_code == 0
        assert join(raw, "m2", topics=["t"]).error_code == E.GROUP_MAX_SIZE_REACHED
        assert join(raw, "m1", topics=["t"]).error_code == 0  # a member may rejoin


def test_session_timeout_on_the_broker_clock(broker, raw):
    topic_id = create_topic(raw, "t", 2)
    join(raw, "m1", topics=["t"])
    join(raw, "m2", topics=["t"])
    kept = assigned(heartbeat(raw, "m1", 1, owned={topic_id: {0, 1}}))[topic_id]
    broker.advance_clock(20000)
    assert heartbeat(raw, "m1", 1, owned={topic_id: kept}).member_epoch == 2  # m1 keeps its session
    broker.advance_clock(20000)  # m2 has been silent for 40 s (its session is 30 s), m1 for 20 s
    assert heartbeat(raw, "m2", 2, owned={}).error_code == E.UNKNOWN_MEMBER_ID
    alone = heartbeat(raw, "m1", 2, owned={topic_id: kept})
    assert alone.error_code == 0 and alone.member_epoch == 3  # m2's removal bumped the group epoch
    assert assigned(alone) == {topic_id: {0, 1}}
    broker.advance_clock(30001)
    assert heartbeat(raw, "m1", 3, owned={topic_id: {0, 1}}).error_code == E.UNKNOWN_MEMBER_ID


def test_static_member_leaves_temporarily_and_rejoins_with_its_partitions(raw):
    topic_id = create_topic(raw, "t", 4)
    join(raw, "s1", topics=["t"], instance_id="i1")
    join(raw, "d2", topics=["t"])
    kept = assigned(heartbeat(raw, "s1", 1, owned={topic_id: {0, 1, 2, 3}}, instance_id="i1"))[topic_id]
    heartbeat(raw, "s1", 1, owned={topic_id: kept}, instance_id="i1")
    other = assigned(heartbeat(raw, "d2", 2, owned={}))[topic_id]
    assert len(kept) == len(other) == 2

    # Another process with the same instance id is refused while s1 is in the group.
    assert join(raw, "s1-bis", topics=["t"], instance_id="i1").error_code == E.UNRELEASED_INSTANCE_ID
    assert heartbeat(raw, "s1-bis", 2, instance_id="i1").error_code == E.FENCED_INSTANCE_ID

    left = heartbeat(raw, "s1", -2, instance_id="i1")
    assert (left.error_code, left.member_epoch) == (0, -2)
    # d2 does not get s1's partitions while s1 is away.
    assert heartbeat(raw, "d2", 2, owned={topic_id: other}).assignment is None

    back = join(raw, "s1-new", topics=["t"], instance_id="i1")
    assert back.error_code == 0 and back.member_epoch == 2
    assert assigned(back) == {topic_id: kept}
    assert heartbeat(raw, "s1", 2, instance_id="i1").error_code == E.FENCED_INSTANCE_ID


def test_a_classic_member_with_an_unreadable_subscription_does_not_mix(raw):
    """Online migration needs the classic member's consumer-protocol subscription: without a
    readable one, its JoinGroup to a consumer group is INCONSISTENT_GROUP_PROTOCOL and its
    classic group is not upgraded (GROUP_ID_NOT_FOUND to the consumer member), as in Kafka."""
    create_topic(raw, "t", 1)
    assert join(raw, "m1", topics=["t"], group="new-style").error_code == 0
    classic_join = {"group_id": "new-style", "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000,
                    "member_id": "", "group_instance_id": None, "protocol_type": "consumer",
                    "protocols": [{"name": "range", "metadata": b""}]}
    assert raw.request(11, 5, classic_join).error_code == E.INCONSISTENT_GROUP_PROTOCOL

    classic_join["group_id"] = "old-style"
    first = raw.request(11, 5, classic_join)
    assert first.error_code == E.MEMBER_ID_REQUIRED
    assert raw.request(11, 5, dict(classic_join, member_id=first.member_id)).error_code == 0
    refused = join(raw, "m2", topics=["t"], group="old-style")
    assert refused.error_code == E.GROUP_ID_NOT_FOUND


def test_deleted_topic_leaves_the_assignment(raw):
    keep = create_topic(raw, "keep", 1)
    gone = create_topic(raw, "gone", 2)
    first = join(raw, "m1", topics=["keep", "gone"])
    assert assigned(first) == {keep: {0}, gone: {0, 1}}
    body = raw.request(20, 6, {"topics": [{"name": "gone", "topic_id": uuid.UUID(int=0)}], "timeout_ms": 10000})
    assert body.responses[0].error_code == 0, body
    # The member still reports the deleted topic's partitions: it is told to drop them first.
    revoke = heartbeat(raw, "m1", first.member_epoch, owned={keep: {0}, gone: {0, 1}})
    assert revoke.member_epoch == first.member_epoch and assigned(revoke) == {keep: {0}}
    done = heartbeat(raw, "m1", first.member_epoch, owned={keep: {0}})
    assert done.member_epoch == first.member_epoch + 1


def test_topics_created_or_grown_later_are_assigned(raw):
    """Only existing topics are assigned; a subscribed topic created later, or given more
    partitions, bumps the group epoch at the next heartbeat."""
    first = join(raw, "m1", topics=["later"])
    assert first.error_code == 0 and assigned(first) == {}
    later = create_topic(raw, "later", 1)
    second = heartbeat(raw, "m1", first.member_epoch, owned={})
    assert second.member_epoch == first.member_epoch + 1 and assigned(second) == {later: {0}}
    body = raw.request(37, 3, {"topics": [{"name": "later", "count": 3, "assignments": None}],
                               "timeout_ms": 10000, "validate_only": False})
    assert body.results[0].error_code == 0, body
    third = heartbeat(raw, "m1", second.member_epoch, owned={later: {0}})
    assert third.member_epoch == second.member_epoch + 1 and assigned(third) == {later: {0, 1, 2}}


def test_static_member_rejoins_under_its_old_member_id(raw):
    topic_id = create_topic(raw, "t", 2)
    first = join(raw, "s1", topics=["t"], instance_id="i1")
    assert assigned(first) == {topic_id: {0, 1}}
    assert heartbeat(raw, "s1", -2, instance_id="i1").member_epoch == -2
    back = join(raw, "s1", topics=["t"], instance_id="i1")
    assert back.error_code == 0 and back.member_epoch == first.member_epoch
    assert assigned(back) == {topic_id: {0, 1}}


def test_errors_carry_only_the_error_and_its_message(raw):
    response = heartbeat(raw, "nobody", 1, group="no-such-group")
    assert response.error_code == E.GROUP_ID_NOT_FOUND and response.error_message
    assert (response.member_id, response.member_epoch, response.heartbeat_interval_ms) == (None, 0, 0)


def test_member_that_does_not_revoke_is_fenced_after_its_rebalance_timeout(broker, raw):
    topic_id = create_topic(raw, "t", 2)
    join(raw, "m1", topics=["t"], rebalance_timeout_ms=10000)
    join(raw, "m2", topics=["t"])
    told = heartbeat(raw, "m1", 1, owned={topic_id: {0, 1}})
    assert len(assigned(told)[topic_id]) == 1  # one partition to revoke
    broker.advance_clock(6000)
    still = heartbeat(raw, "m1", 1, owned={topic_id: {0, 1}})  # heartbeats, but keeps both
    assert still.error_code == 0 and still.member_epoch == 1
    broker.advance_clock(4001)
    assert heartbeat(raw, "m1", 1, owned={topic_id: {0, 1}}).error_code == E.UNKNOWN_MEMBER_ID
    taken = heartbeat(raw, "m2", 2, owned={})
    assert taken.member_epoch == 3 and assigned(taken) == {topic_id: {0, 1}}


def test_broker_assignor_setting(tmp_path):
    config = {"offsets.topic.num.partitions": 3, "group.consumer.assignors": "range"}
    with TrafkaBroker(data_dir=tmp_path / "data", config=config, in_process=True) as broker, \
            RawClient(broker.bootstrap_servers) as raw:
        topic_id = create_topic(raw, "t", 5)
        assert join(raw, "z", topics=["t"], assignor="uniform").error_code == E.UNSUPPORTED_ASSIGNOR
        join(raw, "a", topics=["t"])
        join(raw, "b", topics=["t"])
        kept = assigned(heartbeat(raw, "a", 1, owned={topic_id: {0, 1, 2, 3, 4}}))[topic_id]
        assert kept == {0, 1, 2}  # range by default now
