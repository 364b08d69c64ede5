"""One description of a group, whichever kind it is: what the console, its JSON API, /metrics
and `trafka groups` show (Kafka's kafka-consumer-groups.sh --describe --members --offsets).

`describe(group, log_end, assignor)` works on a live group (the coordinator's) or on one loaded
from a data directory's files (`trafka groups`), so the two cannot disagree. Lag is Kafka's:
the partition's log end (high watermark) minus the committed offset, not clamped (a commit past
the end shows a negative lag, as kafka-consumer-groups.sh shows it); None when either is
unknown. Text a client chose (member ids, client ids) is escaped with `printable`.
"""

from __future__ import annotations

from typing import Callable

from trafka.broker.coordinators.group.consumer_group import ConsumerGroup
from trafka.broker.coordinators.group.formats import assigned_partitions, subscribed_topics
from trafka.broker.coordinators.group.group import CONSUMER_PROTOCOL_TYPE
from trafka.wire.text import printable


def lag(committed: int | None, log_end: int | None) -> int | None:
    """Kafka's ConsumerGroupCommand.getLag: log end minus committed, unclamped."""
    if committed is None or committed < 0 or log_end is None:
        return None
    return log_end - committed


def describe(g, log_end: Callable[[str, int], int | None], assignor: Callable[[ConsumerGroup], str] | None = None,
             topic_names: Callable[[object], str | None] | None = None) -> dict:
    """A classic, KIP-848 or share group as a JSON-ready dict: state, protocol, generation (the
    group epoch of a consumer or share group), members with subscriptions and assignments, and
    one row per partition committed or owned, with its log end, lag and owner (a share group
    commits no offsets: its partitions' state is its share-partitions', on its console page).
    `topic_names(topic_id)` names a share group's assigned topics."""
    consumer = isinstance(g, ConsumerGroup)
    share = g.group_type == "share"
    if share:
        members, owners = _share_group_members(g, topic_names)
    else:
        members, owners = _consumer_group_members(g) if consumer else _classic_group_members(g)
    offsets = []
    for (t, p) in sorted({*g.offsets, *owners}):
        committed = g.offsets.get((t, p))
        end = log_end(t, p)
        offsets.append({
            "topic": t,
            "partition": p,
            "committed_offset": committed.offset if committed else None,
            "log_end_offset": end,
            "lag": lag(committed.offset if committed else None, end),
            "metadata": committed.metadata if committed else None,
            "commit_timestamp": committed.commit_timestamp if committed else None,
            "member_id": owners.get((t, p)),
        })
    if share:
        header = {"group_type": "share", "protocol": "simple" if g.members else None, "generation": g.group_epoch,
                  "leader": None}
    elif consumer:
        header = {"group_type": "consumer", "protocol": assignor(g) if assignor is not None and g.members else None,
                  "generation": g.group_epoch, "leader": None}
    else:
        header = {"group_type": "classic", "protocol": g.protocol_name, "generation": g.generation, "leader": g.leader_id}
    return {
        "group_id": g.group_id,
        "state": g.state.value,
        "protocol_type": g.protocol_type,
        **header,
        "state_since_ms": g.state_timestamp,
        "members": members,
        "offsets": offsets,
        "total_lag": sum(o["lag"] for o in offsets if o["lag"] is not None),
    }


def _consumer_group_members(g) -> tuple[list[dict], dict[tuple[str, int], str]]:
    """A KIP-848 group's members as the view shows members, and who owns which partition
    (topic names from the group's subscribed-topic metadata)."""
    names = {topic_id: name for name, (topic_id, _) in g.subscription_metadata.items()}
    members, owners = [], {}
    for member in g.members.values():
        assignment = {names.get(topic_id, str(topic_id)): partitions for topic_id, partitions in member.assigned.items()}
        for t, parts in assignment.items():
            owners.update({(t, p): member.member_id for p in parts})
        members.append({
            "member_id": printable(member.member_id),
            "group_instance_id": printable(member.instance_id),
            "client_id": printable(member.client_id),
            "client_host": member.client_host,
            "session_timeout_ms": None,
            "member_epoch": member.member_epoch,
            "subscription": sorted(member.subscribed_topic_names) + (
                [member.subscribed_topic_regex] if member.subscribed_topic_regex else []),
            "assignment": [{"topic": t, "partitions": sorted(p)} for t, p in sorted(assignment.items())],
        })
    return members, owners


def _classic_group_members(g) -> tuple[list[dict], dict[tuple[str, int], str]]:
    consumer = g.protocol_type == CONSUMER_PROTOCOL_TYPE
    members, owners = [], {}
    for member in g.members.values():
        assignment = assigned_partitions(member.assignment) if consumer and member.assignment else None
        subscription = subscribed_topics(member.metadata(g.protocol_name or "") or b"") if consumer else None
        for t, parts in (assignment or {}).items():
            owners.update({(t, p): member.member_id for p in parts})
        members.append({
            "member_id": printable(member.member_id),
            "group_instance_id": printable(member.group_instance_id),
            "client_id": printable(member.client_id),
            "client_host": member.client_host,
            "session_timeout_ms": member.session_timeout_ms,
            "subscription": sorted(subscription) if subscription is not None else None,
            "assignment": [{"topic": t, "partitions": sorted(p)} for t, p in sorted((assignment or {}).items())],
        })
    return members, owners


def _share_group_members(g, topic_names) -> tuple[list[dict], dict[tuple[str, int], str]]:
    members = []
    for member in g.members.values():
        assignment = {(topic_names(t) if topic_names else None) or str(t): sorted(ps) for t, ps in member.assignment.items()}
        members.append({
            "member_id": printable(member.member_id),
            "group_instance_id": None,
            "client_id": printable(member.client_id),
            "client_host": member.client_host,
            "session_timeout_ms": None,
            "member_epoch": member.member_epoch,
            "subscription": list(member.subscribed_topic_names),
            "assignment": [{"topic": t, "partitions": p} for t, p in sorted(assignment.items())],
        })
    return members, {}  # partitions are shared: no single owner
