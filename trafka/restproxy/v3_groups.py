"""REST Proxy API v3: consumer groups (their consumers, assignments, lags and lag summary) and
ACLs, in Confluent's shapes, from ListGroups, DescribeGroups, OffsetFetch, ListOffsets and
Describe/Create/DeleteAcls sent with the caller's principal.

A lag is the partition's log end offset minus the group's committed offset, for every
partition the group has committed; `consumer_id` is the member the partition is assigned to
now ("" when none is).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from urllib.parse import quote, urlencode

from starlette.routing import Route

from trafka.restproxy import answers, errors
from trafka.restproxy.client import (CONSUMER_GROUP_DESCRIBE, CREATE_ACLS, DELETE_ACLS, DESCRIBE_ACLS, DESCRIBE_GROUPS,
                                     FIND_COORDINATOR, LIST_GROUPS, LIST_OFFSETS, OFFSET_FETCH)
from trafka.restproxy.v3 import OPERATIONS, Urls, cluster_id
from trafka.wire.errors import ErrorCode

RESOURCE_TYPES = ["UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER"]
PATTERN_TYPES = ["UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"]
PERMISSIONS = ["UNKNOWN", "ANY", "DENY", "ALLOW"]
LATEST = -1


# --- consumer groups -------------------------------------------------------------------------

def _state(kafka_state: str) -> str:
    """Kafka's "PreparingRebalance" as Confluent's PREPARING_REBALANCE."""
    out = "".join(f"_{c}" if c.isupper() and i else c for i, c in enumerate(kafka_state or "Unknown"))
    return out.upper()


def assigned_partitions(assignment: bytes) -> list[tuple[str, int]]:
    """The (topic, partition)s of a classic consumer's member assignment (ConsumerProtocolAssignment)."""
    try:
        pos = 2
        (topics,) = struct.unpack_from(">i", assignment, pos)
        pos += 4
        out = []
        for _ in range(max(topics, 0)):
            (size,) = struct.unpack_from(">h", assignment, pos)
            name = assignment[pos + 2:pos + 2 + size].decode()
            pos += 2 + size
            (count,) = struct.unpack_from(">i", assignment, pos)
            out += [(name, p) for p in struct.unpack_from(f">{max(count, 0)}i", assignment, pos + 4)]
            pos += 4 + 4 * max(count, 0)
        return out
    except (struct.error, UnicodeDecodeError):
        return []


@dataclass
class Member:
    member_id: str
    instance_id: str | None
    client_id: str
    partitions: list  # (topic, partition)s assigned now


@dataclass
class Group:
    group_id: str
    kind: str  # Confluent's type: CLASSIC or CONSUMER (KIP-848)
    state: str
    is_simple: bool
    assignor: str
    members: list


async def _describe(kafka, group_id: str) -> Group:
    """The group as a classic group (DescribeGroups) or, when it is none, as a group of the
    consumer protocol (ConsumerGroupDescribe), as Kafka's Admin client describes groups."""
    answer = await kafka.to_coordinator(group_id, DESCRIBE_GROUPS,
                                        {"groups": [group_id], "include_authorized_operations": False},
                                        lambda a: a.groups[0].error_code)
    group = answer.groups[0]
    if group.error_code not in (ErrorCode.NONE, ErrorCode.GROUP_ID_NOT_FOUND):
        errors.check(group.error_code, group.error_message)
    if group.error_code == ErrorCode.NONE and group.group_state != "Dead":
        members = [Member(m.member_id, m.group_instance_id, m.client_id, assigned_partitions(m.member_assignment))
                   for m in group.members]
        return Group(group_id, "CLASSIC", _state(group.group_state), group.protocol_type == "" and not members,
                     group.protocol_data or "", members)
    answer = await kafka.to_coordinator(group_id, CONSUMER_GROUP_DESCRIBE,
                                        {"group_ids": [group_id], "include_authorized_operations": False},
                                        lambda a: a.groups[0].error_code)
    group = answer.groups[0]
    if group.error_code == ErrorCode.GROUP_ID_NOT_FOUND or group.group_state in ("", "dead", "Dead"):
        raise errors.RestError(404, 404, f"Consumer group {group_id} cannot be found.")
    errors.check(group.error_code, group.error_message)
    members = [Member(m.member_id, m.instance_id, m.client_id,
                      [(t.topic_name, p) for t in m.assignment.topic_partitions for p in t.partitions])
               for m in group.members]
    return Group(group_id, "CONSUMER", _state(group.group_state), False, group.assignor_name, members)


async def _coordinator_id(kafka, group_id: str) -> int:
    answer = await kafka.send(FIND_COORDINATOR, {"key_type": 0, "coordinator_keys": [group_id]})
    return answer.coordinators[0].node_id


def _group_json(urls: Urls, group: Group, coordinator: int) -> dict:
    url = f"{urls.base}/consumer-groups/{group.group_id}"
    return answers.resource(
        "KafkaConsumerGroup", url, f"{urls.crn}/consumer-group={group.group_id}", cluster_id=urls.cluster_id,
        consumer_group_id=group.group_id, is_simple=group.is_simple, partition_assignor=group.assignor,
        state=group.state, type=group.kind, is_mixed_consumer_group=False,
        coordinator=answers.related(urls.broker(coordinator)), consumers=answers.related(f"{url}/consumers"),
        lag_summary=answers.related(f"{url}/lag-summary"))


def _consumer_json(urls: Urls, group_id: str, m: Member) -> dict:
    url = f"{urls.base}/consumer-groups/{group_id}/consumers/{quote(m.member_id, safe='')}"
    return answers.resource(
        "KafkaConsumer", url, f"{urls.crn}/consumer-group={group_id}/consumer={m.member_id}",
        cluster_id=urls.cluster_id, consumer_group_id=group_id, consumer_id=m.member_id,
        instance_id=m.instance_id, client_id=m.client_id, assignments=answers.related(f"{url}/assignments"))


def _assignment_json(urls: Urls, group_id: str, member_id: str, topic: str, p: int) -> dict:
    url = f"{urls.base}/consumer-groups/{group_id}/consumers/{quote(member_id, safe='')}/assignments/{topic}/partitions/{p}"
    return answers.resource(
        "KafkaConsumerAssignment", url,
        f"{urls.crn}/consumer-group={group_id}/consumer={member_id}/assignment={topic}/partition={p}",
        cluster_id=urls.cluster_id, consumer_group_id=group_id, consumer_id=member_id, topic_name=topic,
        partition_id=p, partition=answers.related(urls.partition(topic, p)),
        lag=answers.related(f"{urls.base}/consumer-groups/{group_id}/lags/{topic}/partitions/{p}"))


async def list_groups(request):
    urls = Urls(request, cluster_id(request))
    kafka = answers.client(request)
    data = []
    for node in kafka.nodes():
        listed = await kafka.send(LIST_GROUPS, {"states_filter": [], "types_filter": []}, node)
        for g in sorted(listed.groups, key=lambda g: g.group_id):
            if g.protocol_type in ("consumer", ""):
                try:
                    data.append(_group_json(urls, await _describe(kafka, g.group_id), node.node_id))
                except errors.RestError:
                    continue  # gone meanwhile, or not the caller's to describe
    data.sort(key=lambda g: g["consumer_group_id"])
    return answers.v3(answers.collection("KafkaConsumerGroupList", f"{urls.base}/consumer-groups", data))


async def get_group(request):
    urls = Urls(request, cluster_id(request))
    kafka = answers.client(request)
    group_id = request.path_params["group"]
    group = await _describe(kafka, group_id)
    return answers.v3(_group_json(urls, group, await _coordinator_id(kafka, group_id)))


async def list_consumers(request):
    urls = Urls(request, cluster_id(request))
    group_id = request.path_params["group"]
    group = await _describe(answers.client(request), group_id)
    data = [_consumer_json(urls, group_id, m) for m in sorted(group.members, key=lambda m: m.member_id)]
    return answers.v3(answers.collection("KafkaConsumerList", f"{urls.base}/consumer-groups/{group_id}/consumers", data))


async def _member(request):
    group_id, member_id = request.path_params["group"], request.path_params["consumer"]
    group = await _describe(answers.client(request), group_id)
    for m in group.members:
        if m.member_id == member_id:
            return group_id, m
    raise errors.RestError(404, 404, f"Consumer {member_id} cannot be found.")


async def get_consumer(request):
    urls = Urls(request, cluster_id(request))
    group_id, m = await _member(request)
    return answers.v3(_consumer_json(urls, group_id, m))


async def list_assignments(request):
    urls = Urls(request, cluster_id(request))
    group_id, m = await _member(request)
    data = [_assignment_json(urls, group_id, m.member_id, t, p) for t, p in sorted(m.partitions)]
    url = f"{urls.base}/consumer-groups/{group_id}/consumers/{quote(m.member_id, safe='')}/assignments"
    return answers.v3(answers.collection("KafkaConsumerAssignmentList", url, data))


async def get_assignment(request):
    urls = Urls(request, cluster_id(request))
    group_id, m = await _member(request)
    wanted = (request.path_params["topic"], answers.integer(request.path_params["partition"], "partition_id"))
    if wanted not in m.partitions:
        raise errors.RestError(404, 404, f"Consumer assignment {wanted[0]}-{wanted[1]} cannot be found.")
    return answers.v3(_assignment_json(urls, group_id, m.member_id, *wanted))


# --- lags --------------------------------------------------------------------------------------

async def _lags(request) -> tuple[Urls, str, list[dict]]:
    urls = Urls(request, cluster_id(request))
    kafka = answers.client(request)
    group_id = request.path_params["group"]
    group = await _describe(kafka, group_id)
    owners = {tp: m for m in group.members for tp in m.partitions}
    fetched = await kafka.to_coordinator(group_id, OFFSET_FETCH, {
        "groups": [{"group_id": group_id, "member_id": None, "member_epoch": -1, "topics": None}],
        "require_stable": False}, lambda a: a.groups[0].error_code)
    found = fetched.groups[0]
    errors.check(found.error_code)
    lags = []
    for t in sorted(found.topics, key=lambda t: t.name):
        for p in sorted(t.partitions, key=lambda p: p.partition_index):
            if p.committed_offset < 0:
                continue
            end = await _log_end_offset(kafka, t.name, p.partition_index)
            member = owners.get((t.name, p.partition_index))
            lags.append(_lag_json(urls, group_id, t.name, p.partition_index, p.committed_offset, end, member))
    return urls, group_id, lags


async def _log_end_offset(kafka, topic: str, partition: int) -> int:
    body = {"replica_id": -1, "isolation_level": 0,
            "topics": [{"name": topic, "partitions": [{"partition_index": partition, "current_leader_epoch": -1,
                                                       "timestamp": LATEST}]}]}
    try:
        answer = await kafka.to_leader(topic, partition, LIST_OFFSETS, body,
                                       lambda a: a.topics[0].partitions[0].error_code)
    except LookupError as exc:
        raise errors.from_kafka(exc.args[0] if exc.args else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) from None
    result = answer.topics[0].partitions[0]
    errors.check(result.error_code)
    return result.offset


def _lag_json(urls: Urls, group_id: str, topic: str, p: int, current: int, end: int, member) -> dict:
    url = f"{urls.base}/consumer-groups/{group_id}/lags/{topic}/partitions/{p}"
    return answers.resource(
        "KafkaConsumerLag", url, f"{urls.crn}/consumer-group={group_id}/lag={topic}/partition={p}",
        cluster_id=urls.cluster_id, consumer_group_id=group_id, topic_name=topic, partition_id=p,
        current_offset=current, log_end_offset=end, lag=max(end - current, 0),
        consumer_id=member.member_id if member else "", instance_id=member.instance_id if member else None,
        client_id=member.client_id if member else "")


async def list_lags(request):
    urls, group_id, lags = await _lags(request)
    return answers.v3(answers.collection("KafkaConsumerLagList", f"{urls.base}/consumer-groups/{group_id}/lags", lags))


async def get_lag(request):
    _, _, lags = await _lags(request)
    topic, p = request.path_params["topic"], answers.integer(request.path_params["partition"], "partition_id")
    for lag in lags:
        if lag["topic_name"] == topic and lag["partition_id"] == p:
            return answers.v3(lag)
    raise errors.RestError(404, 404, f"Consumer lag for {topic}-{p} cannot be found.")


async def lag_summary(request):
    urls, group_id, lags = await _lags(request)
    url = f"{urls.base}/consumer-groups/{group_id}/lag-summary"
    top = max(lags, key=lambda lag: lag["lag"], default=None)
    return answers.v3(answers.resource(
        "KafkaConsumerGroupLagSummary", url, f"{urls.crn}/consumer-group={group_id}/lag-summary",
        cluster_id=urls.cluster_id, consumer_group_id=group_id,
        max_lag_consumer_id=top["consumer_id"] if top else "", max_lag_instance_id=top["instance_id"] if top else None,
        max_lag_client_id=top["client_id"] if top else "", max_lag_topic_name=top["topic_name"] if top else "",
        max_lag_partition_id=top["partition_id"] if top else 0, max_lag=top["lag"] if top else 0,
        total_lag=sum(lag["lag"] for lag in lags),
        max_lag_consumer=answers.related(f"{urls.base}/consumer-groups/{group_id}/consumers/{quote(top['consumer_id'], safe='')}")
        if top and top["consumer_id"] else None,
        max_lag_partition=answers.related(urls.partition(top["topic_name"], top["partition_id"])) if top else None))


# --- ACLs --------------------------------------------------------------------------------------

def _enum(names: list[str], value, what: str, default: str) -> int:
    text = str(value if value is not None else default).upper()
    if text not in names:
        raise errors.RestError(400, 400, f"Invalid {what}: {value}")
    return names.index(text)


def _acl_filter(source: dict, *, exact: bool) -> dict:
    """Kafka's ACL fields from query parameters or a body (`exact`: a binding to create)."""
    default = "UNKNOWN" if exact else "ANY"
    out = {"resource_type": _enum(RESOURCE_TYPES, source.get("resource_type"), "resource_type", default),
           "resource_name": source.get("resource_name"),
           "pattern_type": _enum(PATTERN_TYPES, source.get("pattern_type"), "pattern_type", default),
           "principal": source.get("principal"), "host": source.get("host"),
           "operation": _enum(OPERATIONS, source.get("operation"), "operation", default),
           "permission": _enum(PERMISSIONS, source.get("permission"), "permission", default)}
    if exact and (0 in (out["resource_type"], out["pattern_type"], out["operation"], out["permission"])
                  or not out["resource_name"] or not out["principal"]):
        raise errors.RestError(400, 400, "An ACL needs resource_type, resource_name, pattern_type, principal, "
                                         "operation and permission")
    if exact and out["host"] is None:
        out["host"] = "*"
    return out


def _acl_json(urls: Urls, resource_type: int, name: str, pattern: int, principal: str, host: str, op: int,
              permission: int) -> dict:
    fields = {"resource_type": RESOURCE_TYPES[resource_type], "resource_name": name,
              "pattern_type": PATTERN_TYPES[pattern], "principal": principal, "host": host,
              "operation": OPERATIONS[op], "permission": PERMISSIONS[permission]}
    return {"kind": "KafkaAcl", "metadata": {"self": f"{urls.base}/acls?{urlencode(fields)}"},
            "cluster_id": urls.cluster_id, **fields}


def _kafka_filter(f: dict) -> dict:
    return {"resource_type_filter": f["resource_type"], "resource_name_filter": f["resource_name"],
            "pattern_type_filter": f["pattern_type"], "principal_filter": f["principal"], "host_filter": f["host"],
            "operation": f["operation"], "permission_type": f["permission"]}


async def list_acls(request):
    urls = Urls(request, cluster_id(request))
    f = _acl_filter(dict(request.query_params), exact=False)
    answer = await answers.client(request).send(DESCRIBE_ACLS, _kafka_filter(f))
    errors.check(answer.error_code, answer.error_message)
    data = [_acl_json(urls, r.resource_type, r.resource_name, r.pattern_type, a.principal, a.host, a.operation,
                      a.permission_type) for r in answer.resources for a in r.acls]
    return answers.v3(answers.collection("KafkaAclList", str(request.url), data))


async def _create(request, bindings: list[dict]):
    answer = await answers.client(request).send(CREATE_ACLS, {"creations": [
        {"resource_type": b["resource_type"], "resource_name": b["resource_name"],
         "resource_pattern_type": b["pattern_type"], "principal": b["principal"], "host": b["host"],
         "operation": b["operation"], "permission_type": b["permission"]} for b in bindings]})
    for result in answer.results:
        errors.check(result.error_code, result.error_message)
    return answers.created()


async def create_acl(request):
    cluster_id(request)
    return await _create(request, [_acl_filter(await answers.json_object(request), exact=True)])


async def create_acls(request):
    cluster_id(request)
    data = (await answers.json_object(request)).get("data")
    if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
        raise errors.RestError(400, 400, "data must be a list of ACLs")
    return await _create(request, [_acl_filter(d, exact=True) for d in data])


async def delete_acls(request):
    urls = Urls(request, cluster_id(request))
    f = _acl_filter(dict(request.query_params), exact=False)
    answer = await answers.client(request).send(DELETE_ACLS, {"filters": [_kafka_filter(f)]})
    result = answer.filter_results[0]
    errors.check(result.error_code, result.error_message)
    data = [_acl_json(urls, a.resource_type, a.resource_name, a.pattern_type, a.principal, a.host, a.operation,
                      a.permission_type) for a in result.matching_acls]
    return answers.v3({"data": data})


def routes() -> list[Route]:
    g = "/v3/clusters/{cluster_id}/consumer-groups/{group}"
    acls = "/v3/clusters/{cluster_id}/acls"
    return [
        Route("/v3/clusters/{cluster_id}/consumer-groups", list_groups, methods=["GET"]),
        Route(g, get_group, methods=["GET"]),
        Route(g + "/consumers", list_consumers, methods=["GET"]),
        # A member id may hold "/" (base64 of a KIP-848 member's UUID), sent as %2F: matched as a path.
        Route(g + "/consumers/{consumer:path}/assignments/{topic}/partitions/{partition}", get_assignment, methods=["GET"]),
        Route(g + "/consumers/{consumer:path}/assignments", list_assignments, methods=["GET"]),
        Route(g + "/consumers/{consumer:path}", get_consumer, methods=["GET"]),
        Route(g + "/lags", list_lags, methods=["GET"]),
        Route(g + "/lags/{topic}/partitions/{partition}", get_lag, methods=["GET"]),
        Route(g + "/lag-summary", lag_summary, methods=["GET"]),
        Route(acls, list_acls, methods=["GET"]),
        Route(acls, create_acl, methods=["POST"]),
        Route(acls, delete_acls, methods=["DELETE"]),
        Route(acls + ":batch", create_acls, methods=["POST"]),
    ]
