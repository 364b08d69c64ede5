"""OffsetCommit v9 and OffsetFetch v9 over the raw protocol: what changes with the KIP-848
versions, for classic groups and for consumer-protocol groups (member epochs)."""

from __future__ import annotations

from testkit.groups import create_topic
from trafka.testing.rawwire import RawClient
from trafka.wire.errors import ErrorCode


def commit(raw: RawClient, version: int, group: str, topic: str, offset: int, *, epoch: int = -1, member_id: str = "") -> ErrorCode:
    body = raw.request(8, version, {
        "group_id": group, "generation_id_or_member_epoch": epoch, "member_id": member_id, "group_instance_id": None,
        "topics": [{"name": topic, "partitions": [
            {"partition_index": 0, "committed_offset": offset, "committed_leader_epoch": -1, "committed_metadata": ""}
        ]}],
    })
    return body.topics[0].partitions[0].error_code


def fetch(raw: RawClient, group: str, topic: str, *, member_id: str | None = None, epoch: int = -1):
    """(group error, committed offset of partition 0 or None when no topics came back)."""
    [answer] = raw.request(9, 9, {
        "groups": [{"group_id": group, "member_id": member_id, "member_epoch": epoch,
                    "topics": [{"name": topic, "partition_indexes": [0]}]}],
        "require_stable": False,
    }).groups
    offset = answer.topics[0].partitions[0].committed_offset if answer.topics else None
    return answer.error_code, offset


def test_v9_commit_with_a_generation_to_an_unknown_group_is_group_id_not_found(broker):
    create_topic(broker.bootstrap_servers, "t", 1)
    with RawClient(broker.bootstrap_servers) as raw:
        assert commit(raw, 9, "ghost", "t", 5, epoch=3, member_id="m") == ErrorCode.GROUP_ID_NOT_FOUND
        assert commit(raw, 8, "ghost", "t", 5, epoch=3, member_id="m") == ErrorCode.ILLEGAL_GENERATION
        # Without a generation it is a simple (manually assigned) commit, in every version.
        assert commit(raw, 9, "simple", "t", 5) == ErrorCode.NONE
        assert fetch(raw, "simple", "t") == (ErrorCode.NONE, 5)
        # A classic group does not check the member of a fetch, as in Kafka.
        assert fetch(raw, "simple", "t", member_id="whoever", epoch=7) == (ErrorCode.NONE, 5)
        assert fetch(raw, "ghost", "t") == (ErrorCode.NONE, -1)


def join_consumer_group(raw: RawClient, group: str, member_id: str, topic: str) -> int:
    """A KIP-848 member joins (ConsumerGroupHeartbeat v1, epoch 0); its member epoch."""
    body = raw.request(68, 1, {
        "group_id": group, "member_id": member_id, "member_epoch": 0, "instance_id": None, "rack_id": None,
        "rebalance_timeout_ms": 60000, "subscribed_topic_names": [topic], "subscribed_topic_regex": None,
        "server_assignor": None, "topic_partitions": [],
    })
    assert body.error_code == ErrorCode.NONE, body
    return body.member_epoch


def test_consumer_group_commits_and_fetches_are_checked_against_member_epochs(broker):
    create_topic(broker.bootstrap_servers, "t", 1)
    with RawClient(broker.bootstrap_servers) as raw:
        epoch = join_consumer_group(raw, "cg", "member-1", "t")
        assert epoch == 1
        assert commit(raw, 9, "cg", "t", 7, epoch=epoch, member_id="member-1") == ErrorCode.NONE
        assert commit(raw, 9, "cg", "t", 8, epoch=epoch + 1, member_id="member-1") == ErrorCode.STALE_MEMBER_EPOCH
        assert commit(raw, 9, "cg", "t", 8, epoch=epoch - 1, member_id="member-1") == ErrorCode.STALE_MEMBER_EPOCH
        assert commit(raw, 9, "cg", "t", 8, epoch=epoch, member_id="stranger") == ErrorCode.UNKNOWN_MEMBER_ID
        # A member of the consumer protocol must use OffsetCommit v9 or later.
        assert commit(raw, 8, "cg", "t", 8, epoch=epoch, member_id="member-1") == ErrorCode.UNSUPPORTED_VERSION
        # Without membership, only while the group has no members.
        assert commit(raw, 9, "cg", "t", 8) == ErrorCode.UNKNOWN_MEMBER_ID

        assert fetch(raw, "cg", "t", member_id="member-1", epoch=epoch) == (ErrorCode.NONE, 7)
        assert fetch(raw, "cg", "t", member_id="member-1", epoch=epoch + 1) == (ErrorCode.STALE_MEMBER_EPOCH, None)
        assert fetch(raw, "cg", "t", member_id="stranger", epoch=epoch) == (ErrorCode.UNKNOWN_MEMBER_ID, None)
        assert fetch(raw, "cg", "t") == (ErrorCode.NONE, 7)  # an admin client's fetch

        leave = raw.request(68, 1, {"group_id": "cg", "member_id": "member-1", "member_epoch": -1, "instance_id": None,
                                    "rack_id": None, "rebalance_timeout_ms": -1, "subscribed_topic_names": None,
                                    "subscribed_topic_regex": None, "server_assignor": None, "topic_partitions": None})
        assert leave.error_code == ErrorCode.NONE
        # The group is empty now: a commit without membership (e.g. an admin reset) goes through.
        assert commit(raw, 9, "cg", "t", 3) == ErrorCode.NONE
        assert fetch(raw, "cg", "t") == (ErrorCode.NONE, 3)
