"""KIP-848's safety and liveness over the wire, with simulated members that follow the protocol
to the letter: random joins, leaves, subscription changes, topic creations and heartbeats
against a real broker. Revoke-before-assign means no partition is ever owned by two members at
once; once the events stop, a few heartbeat rounds leave every subscribed partition owned by
exactly one member and the group Stable."""

from __future__ import annotations

import random
import uuid

import pytest

from trafka.testing import TrafkaBroker
from trafka.testing.rawwire import RawClient
from trafka.wire.errors import ErrorCode as E

HEARTBEAT = 68


class Member:
    """A client as KIP-848 describes one: it takes newly assigned partitions at once, but keeps
    working on the ones it is told to give up until its next heartbeat, which reports them gone
    (a real client commits and revokes in between)."""

    def __init__(self, raw: RawClient, group: str, topics: list[str], assignor: str):
        self.raw, self.group, self.topics, self.assignor = raw, group, topics, assignor
        self.member_id = uuid.uuid4().hex
        self.epoch = 0
        self.owned: set[tuple[uuid.UUID, int]] = set()
        self.revoking: set[tuple[uuid.UUID, int]] = set()  # still owned until the next heartbeat
        self.subscription_changed = True
        self.joined = False  # a member never heard of by the broker is unknown when it leaves

    def heartbeat(self) -> None:
        self.revoking = set()
        joining = self.epoch == 0
        body = {"group_id": self.group, "member_id": self.member_id, "member_epoch": self.epoch,
                "instance_id": None, "rack_id": None, "server_assignor": self.assignor if joining else None,
                "subscribed_topic_regex": None, "rebalance_timeout_ms": 60000 if joining else -1,
                "subscribed_topic_names": self.topics if joining or self.subscription_changed else None,
                "topic_partitions": self._owned_wire()}
        response = self.raw.request(HEARTBEAT, 1, body)
        if response.error_code in (E.FENCED_MEMBER_EPOCH, E.UNKNOWN_MEMBER_ID):
            self.epoch, self.owned = 0, set()  # give everything up and join again
            return
        assert response.error_code == 0, response
        self.joined = True
        self.subscription_changed = False
        self.epoch = response.member_epoch
        if response.assignment is not None:
            assigned = {(tp.topic_id, p) for tp in response.assignment.topic_partitions for p in tp.partitions}
            self.revoking = self.owned - assigned
            self.owned = assigned

    def leave(self) -> None:
        response = self.raw.request(HEARTBEAT, 1, {
            "group_id": self.group, "member_id": self.member_id, "member_epoch": -1, "instance_id": None,
            "rack_id": None, "server_assignor": None, "subscribed_topic_regex": None, "rebalance_timeout_ms": -1,
            "subscribed_topic_names": None, "topic_partitions": None})
        assert response.error_code == (0 if self.joined else E.UNKNOWN_MEMBER_ID), response
        self.owned, self.revoking = set(), set()

    def _owned_wire(self):
        by_topic: dict[uuid.UUID, list[int]] = {}
        for topic_id, p in self.owned:
            by_topic.setdefault(topic_id, []).append(p)
        return [{"topic_id": t, "partitions": sorted(ps)} for t, ps in by_topic.items()]


def create_topic(raw: RawClient, name: str, partitions: int) -> uuid.UUID:
    body = raw.request(19, 7, {"topics": [{"name": name, "num_partitions": partitions, "replication_factor": 1,
                                           "assignments": [], "configs": []}], "timeout_ms": 10000, "validate_only": False})
    assert body.topics[0].error_code == 0, body
    return body.topics[0].topic_id


def grow_topic(raw: RawClient, name: str, count: int) -> None:
    body = raw.request(37, 3, {"topics": [{"name": name, "count": count, "assignments": None}],
                               "timeout_ms": 10000, "validate_only": False})
    assert body.results[0].error_code == 0, body


def assert_no_partition_owned_twice(members: list[Member]) -> None:
    seen: dict[tuple[uuid.UUID, int], str] = {}
    for member in members:
        for tp in member.owned | member.revoking:
            assert tp not in seen, f"{tp} owned by {seen[tp]} and {member.member_id}"
            seen[tp] = member.member_id


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    data = tmp_path_factory.mktemp("reconciliation") / "data"
    with TrafkaBroker(data_dir=data, config={"offsets.topic.num.partitions": 3}, in_process=True) as running:
        yield running


@pytest.mark.parametrize("assignor", ["uniform", "range"])
@pytest.mark.parametrize("seed", range(4))
def test_random_membership_changes_never_share_a_partition(broker, seed, assignor):
    rng = random.Random(seed)
    group = f"sim-{assignor}-{seed}"
    with RawClient(broker.bootstrap_servers) as raw:
        topics = {f"{group}-a": 3, f"{group}-b": 2}
        ids = {name: create_topic(raw, name, count) for name, count in topics.items()}
        members: list[Member] = []
        for _ in range(250):
            event = rng.random()
            if event < 0.08 and len(members) < 6:
                members.append(Member(raw, group, rng.sample(sorted(topics), rng.randint(1, len(topics))), assignor))
            elif event < 0.12 and members:
                members.pop(rng.randrange(len(members))).leave()
            elif event < 0.15 and members:
                member = rng.choice(members)
                member.topics = rng.sample(sorted(topics), rng.randint(1, len(topics)))
                member.subscription_changed = True
            elif event < 0.17:
                name = rng.choice(sorted(topics))
                topics[name] += 1
                grow_topic(raw, name, topics[name])
            elif members:
                rng.choice(members).heartbeat()
            assert_no_partition_owned_twice(members)

        # The events stop: everyone heartbeats until nothing moves.
        for _ in range(12):
            for member in members:
                member.heartbeat()
                assert_no_partition_owned_twice(members)
        wanted = {(ids[name], p) for member in members for name in member.topics for p in range(topics[name])}
        owned = [tp for member in members for tp in member.owned]
        assert sorted(owned) == sorted(wanted)
        described = raw.request(69, 0, {"group_ids": [group], "include_authorized_operations": False}).groups[0]
        assert described.group_state == "Stable", described
        assert described.assignor_name == assignor
