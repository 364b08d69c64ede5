"""One v2 consumer instance, the Kafka side: a group member, its positions and its reads.

Confluent's proxy keeps a Java KafkaConsumer per instance; this one is a member of a KIP-848
consumer group (ConsumerGroupHeartbeat: the broker assigns, so the proxy runs no assignor, and
classic members of the same group are served through the broker's migration path), or, after
`assign`, a consumer of the partitions it was given without a group membership. Its requests
go through the proxy's KafkaClient, so they are routed, authorised and checked as a client's.

- Positions: the next offset to read per owned partition; a new one starts at the group's
  committed offset, else at `auto.offset.reset` (earliest or latest, ListOffsets).
- Reads: Fetch from each partition's leader, control batches skipped, records past the
  position only, up to max_bytes; the position moves past what was returned.
- Commits: OffsetCommit to the coordinator with the member epoch; on a revocation with
  auto.commit.enable the positions of the revoked partitions are committed first.
"""

from __future__ import annotations

import logging
import re
import time

import trio

from trafka.restproxy import errors
from trafka.restproxy.client import (CONSUMER_GROUP_HEARTBEAT, FETCH, LIST_OFFSETS, MOVED, OFFSET_COMMIT,
                                     OFFSET_FETCH, KafkaClient, Unavailable)
from trafka.wire import records as rec
from trafka.wire.errors import ErrorCode

log = logging.getLogger("trafka.restproxy")

EARLIEST, LATEST = -2, -1
REBALANCE_TIMEOUT_MS = 300_000  # the Java consumer's max.poll.interval.ms default
PATTERN_REFRESH_S = 5.0  # a topic_pattern subscription looks for new topics this often
FETCH_ROUND_MS = 100  # each Fetch of a read waits at most this long, so every leader is asked in turn
REJOIN = frozenset({ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_MEMBER_EPOCH})


class ConsumerInstance:
    def __init__(self, broker, group: str, name: str, principal: str, *, fmt: str, reset: str,
                 auto_commit: bool, request_timeout_ms: int, fetch_min_bytes: int, read_committed: bool = False):
        self.broker = broker
        self.group, self.name, self.principal = group, name, principal
        self.format, self.reset, self.auto_commit = fmt, reset, auto_commit
        self.request_timeout_ms, self.fetch_min_bytes = request_timeout_ms, fetch_min_bytes
        self.isolation = 1 if read_committed else 0  # Fetch's isolation_level
        self.lock = trio.Lock()  # one HTTP operation (or assignment change) at a time
        self.topics: list[str] | None = None  # subscribed topic names (as resolved for a pattern)
        self.pattern: str | None = None
        self.manual: list[tuple[str, int]] | None = None  # after assign: no group membership
        self.owned: set[tuple[str, int]] = set()
        self.positions: dict[tuple[str, int], int] = {}
        self.member_id, self.epoch = "", 0
        self.assigned = trio.Event()  # set once the first assignment arrived
        self._membership: trio.CancelScope | None = None

    def client(self) -> KafkaClient:
        return KafkaClient(self.broker, self.principal)

    # --- subscription and assignment -------------------------------------------------------

    def subscribed(self) -> bool:
        return self.topics is not None or self.pattern is not None

    async def subscribe(self, nursery, topics: list[str] | None, pattern: str | None) -> None:
        if self.manual is not None:
            raise errors.illegal_state("Subscription to topics, partitions and pattern are mutually exclusive")
        if self.subscribed():
            await self.unsubscribe()
        self.topics, self.pattern = (list(dict.fromkeys(topics)) if topics is not None else None), pattern
        if pattern is not None:
            self.topics = await self._matching(pattern)
        self.assigned = trio.Event()
        scope = self._membership = trio.CancelScope()
        nursery.start_soon(self._heartbeats, scope)

    async def unsubscribe(self) -> None:
        """Leave the group (member epoch -1), committing first when auto-commit is on."""
        if self._membership is not None:
            if self.auto_commit:  # while still a member: a commit with its epoch
                await self._commit_positions(self.owned)
            self._membership.cancel()
            self._membership = None
            if self.member_id:
                await self._heartbeat(leave=True)
        self.topics = self.pattern = self.manual = None
        self.owned, self.positions = set(), {}
        self.member_id, self.epoch = "", 0

    def assign(self, partitions: list[tuple[str, int]]) -> None:
        if self.subscribed():
            raise errors.illegal_state("Subscription to topics, partitions and pattern are mutually exclusive")
        self.manual = list(dict.fromkeys(partitions))
        self.owned = set(self.manual)
        self.positions = {tp: o for tp, o in self.positions.items() if tp in self.owned}

    def assignment(self) -> list[tuple[str, int]]:
        return self.manual if self.manual is not None else sorted(self.owned)

    async def _matching(self, pattern: str) -> list[str]:
        """Topics whose whole name matches the pattern (Java's Pattern.matcher().matches())."""
        compiled = re.compile(pattern)
        answer = await self.client().metadata(None)
        return sorted(t.name for t in answer.topics if not t.is_internal and compiled.fullmatch(t.name))

    # --- membership (KIP-848) --------------------------------------------------------------

    async def _heartbeats(self, scope: trio.CancelScope) -> None:
        with scope:
            interval = 0.0
            refreshed = time.monotonic()
            while True:
                await trio.sleep(interval)
                if self.pattern is not None and time.monotonic() - refreshed > PATTERN_REFRESH_S:
                    refreshed = time.monotonic()
                    try:
                        self.topics = await self._matching(self.pattern)
                    except (Unavailable, LookupError):
                        pass
                try:
                    interval = await self._heartbeat() / 1000
                except Unavailable as exc:
                    log.info("rest proxy consumer %s/%s: no coordinator (%s); trying again", self.group, self.name, exc)
                    interval = 1.0

    async def _heartbeat(self, *, leave: bool = False) -> int:
        """One ConsumerGroupHeartbeat; the interval until the next (ms)."""
        client = self.client()
        ids = await self._topic_ids(client) if self.owned else None
        body = {"group_id": self.group, "member_id": self.member_id, "member_epoch": -1 if leave else self.epoch,
                "rebalance_timeout_ms": REBALANCE_TIMEOUT_MS, "subscribed_topic_names": list(self.topics or []),
                "topic_partitions": [{"topic_id": ids[t], "partitions": sorted(p for tt, p in self.owned if tt == t)}
                                     for t in sorted({t for t, _ in self.owned}) if t in (ids or {})]}
        answer = await client.to_coordinator(self.group, CONSUMER_GROUP_HEARTBEAT, body, lambda a: a.error_code)
        if leave:
            return 0
        if answer.error_code in REJOIN:  # the group forgot this member: join again, owning nothing
            log.info("rest proxy consumer %s/%s: %s; joining again", self.group, self.name,
                     ErrorCode(answer.error_code).name)
            async with self.lock:
                self.owned, self.positions = set(), {}
                self.member_id, self.epoch = "", 0
            return 0
        if answer.error_code != ErrorCode.NONE:
            log.warning("rest proxy consumer %s/%s: heartbeat answered %s: %s", self.group, self.name,
                        ErrorCode(answer.error_code).name, answer.error_message)
            return 1000
        self.member_id, self.epoch = answer.member_id or self.member_id, answer.member_epoch
        if answer.assignment is not None:
            if ids is None or not {t.topic_id for t in answer.assignment.topic_partitions} <= set(ids.values()):
                ids = await self._topic_ids(client)  # a topic new since the heartbeat was sent
            names = {v: k for k, v in ids.items()}
            target = {(names[t.topic_id], p) for t in answer.assignment.topic_partitions if t.topic_id in names
                      for p in t.partitions}
            async with self.lock:
                revoked = self.owned - target
                if revoked and self.auto_commit:
                    await self._commit_positions(revoked)
                self.owned = target
                self.positions = {tp: o for tp, o in self.positions.items() if tp in target}
            self.assigned.set()
            return 0 if revoked else answer.heartbeat_interval_ms  # report the revocation at once
        return answer.heartbeat_interval_ms

    async def _topic_ids(self, client: KafkaClient) -> dict:
        answer = await client.metadata(None)
        return {t.name: t.topic_id for t in answer.topics}

    # --- positions and reads ---------------------------------------------------------------

    async def _position(self, client: KafkaClient, tp: tuple[str, int]) -> int:
        if tp not in self.positions:
            committed = (await self.committed([tp])).get(tp)
            if committed is not None and committed[0] >= 0:
                self.positions[tp] = committed[0]
            else:
                self.positions[tp] = await self.offset_at(client, tp, EARLIEST if self.reset == "earliest" else LATEST)
        return self.positions[tp]

    async def offset_at(self, client: KafkaClient, tp: tuple[str, int], timestamp: int) -> int:
        topic, partition = tp
        body = {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": topic, "partitions": [{"partition_index": partition, "timestamp": timestamp}]}]}
        try:
            answer = await client.to_leader(topic, partition, LIST_OFFSETS, body,
                                            lambda a: a.topics[0].partitions[0].error_code)
        except LookupError as exc:
            raise _not_found(exc) from None
        found = answer.topics[0].partitions[0]
        errors.check(found.error_code)
        return found.offset

    async def seek(self, offsets: dict[tuple[str, int], int]) -> None:
        self._check_owned(offsets)
        self.positions.update(offsets)

    async def seek_to(self, partitions: list[tuple[str, int]], timestamp: int) -> None:
        self._check_owned(partitions)
        client = self.client()
        for tp in partitions:
            self.positions[tp] = await self.offset_at(client, tp, timestamp)

    def _check_owned(self, partitions) -> None:
        for tp in partitions:
            if tp not in self.owned:
                raise errors.illegal_state(f"No current assignment for partition {tp[0]}-{tp[1]}")

    async def read(self, timeout_ms: int, max_bytes: int) -> list[tuple[str, int, rec.Record]]:
        """Records from the owned partitions: as soon as some arrive, or [] after timeout_ms."""
        deadline = time.monotonic() + timeout_ms / 1000
        if self.subscribed() and not self.assigned.is_set():
            with trio.move_on_at(trio.current_time() + timeout_ms / 1000):
                await self.assigned.wait()
        client = self.client()
        while True:
            found: list[tuple[str, int, rec.Record]] = []
            budget = max_bytes
            for tp in sorted(self.owned):
                if budget <= 0:
                    break
                got = await self._fetch(client, tp, budget)
                for record in got:
                    budget -= len(record.key or b"") + len(record.value or b"")
                    found.append((tp[0], tp[1], record))
                    self.positions[tp] = record.offset + 1
                    if budget <= 0 and found:
                        break
            if found or time.monotonic() >= deadline:
                return found
            if not self.owned:
                await trio.sleep(min(FETCH_ROUND_MS / 1000, max(0.0, deadline - time.monotonic())))

    async def _fetch(self, client: KafkaClient, tp: tuple[str, int], max_bytes: int) -> list[rec.Record]:
        topic, partition = tp
        position = await self._position(client, tp)
        body = {"replica_id": -1, "max_wait_ms": FETCH_ROUND_MS, "min_bytes": 1, "max_bytes": max(max_bytes, 1),
                "isolation_level": self.isolation, "session_id": 0, "session_epoch": -1, "rack_id": "",
                "topics": [{"topic": topic, "partitions": [{"partition": partition, "fetch_offset": position,
                                                            "partition_max_bytes": max(max_bytes, 1)}]}],
                "forgotten_topics_data": []}
        try:
            answer = await client.to_leader(topic, partition, FETCH, body, lambda a: a.responses[0].partitions[0].error_code)
        except Unavailable:
            return []  # no leader now: the next read asks again
        except LookupError as exc:
            raise _not_found(exc) from None
        found = answer.responses[0].partitions[0]
        if found.error_code == ErrorCode.OFFSET_OUT_OF_RANGE:
            self.positions[tp] = await self.offset_at(client, tp, EARLIEST if self.reset == "earliest" else LATEST)
            return []
        if found.error_code in MOVED:
            return []  # moving: the next read asks its new leader
        errors.check(found.error_code)
        if not found.records:
            return []
        data = bytes(found.records)
        # read_committed: the answer names each aborted transaction (producer, first offset); its
        # batches are skipped up to that producer's abort marker, as a Kafka consumer does.
        aborted = sorted((a.first_offset, a.producer_id) for a in (found.aborted_transactions or [])) if self.isolation else []
        aborting: set[int] = set()
        out = []
        for pos, header in rec.fetched_batches(data):
            while aborted and aborted[0][0] <= header.last_offset:
                aborting.add(aborted.pop(0)[1])
            if header.is_control:
                aborting.discard(header.producer_id)  # the marker ends that producer's transaction
                continue
            if header.is_transactional and header.producer_id in aborting:
                continue
            out.extend(r for r in rec.iter_records(data, pos) if r.offset >= position)
        return out

    # --- offsets ---------------------------------------------------------------------------

    async def committed(self, partitions: list[tuple[str, int]]) -> dict[tuple[str, int], tuple[int, str | None]]:
        by_topic: dict[str, list[int]] = {}
        for topic, partition in partitions:
            by_topic.setdefault(topic, []).append(partition)
        body = {"groups": [{"group_id": self.group, "member_id": None, "member_epoch": -1,
                            "topics": [{"name": t, "partition_indexes": ps} for t, ps in by_topic.items()]}],
                "require_stable": True}
        answer = await self.client().to_coordinator(self.group, OFFSET_FETCH, body, lambda a: a.groups[0].error_code)
        group = answer.groups[0]
        errors.check(group.error_code)
        for t in group.topics:
            for p in t.partitions:
                if p.error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED:
                    errors.check(p.error_code)
        return {(t.name, p.partition_index): (p.committed_offset, p.metadata)
                for t in group.topics for p in t.partitions if p.error_code == ErrorCode.NONE}

    async def commit(self, offsets: dict[tuple[str, int], tuple[int, str | None]]) -> None:
        """OffsetCommit of {partition: (offset, metadata)} as given (the caller adds the +1)."""
        if not offsets:
            return
        by_topic: dict[str, list] = {}
        for (topic, partition), (offset, metadata) in sorted(offsets.items()):
            by_topic.setdefault(topic, []).append({"partition_index": partition, "committed_offset": offset,
                                                   "committed_leader_epoch": -1, "committed_metadata": metadata or ""})
        member = self._membership is not None and self.member_id
        body = {"group_id": self.group, "generation_id_or_member_epoch": self.epoch if member else -1,
                "member_id": self.member_id if member else "", "group_instance_id": None,
                "topics": [{"name": t, "partitions": ps} for t, ps in by_topic.items()]}

        def first_error(answer) -> int:
            return next((p.error_code for t in answer.topics for p in t.partitions if p.error_code), 0)

        answer = await self.client().to_coordinator(self.group, OFFSET_COMMIT, body, first_error)
        errors.check(first_error(answer))

    async def _commit_positions(self, partitions) -> None:
        try:
            await self.commit({tp: (self.positions[tp], None) for tp in partitions if tp in self.positions})
        except (errors.RestError, Unavailable) as exc:
            log.warning("rest proxy consumer %s/%s: auto-commit failed: %s", self.group, self.name, exc)

    async def commit_positions(self) -> None:
        """POST .../offsets without a body: commit every position read so far."""
        await self.commit({tp: (o, None) for tp, o in self.positions.items() if tp in self.owned})

    async def close(self) -> None:
        """DELETE of the instance (or its idle expiry): commit as auto-commit says, leave."""
        if self.auto_commit and self.manual is not None:
            await self._commit_positions(set(self.positions))
        await self.unsubscribe()


def _not_found(exc: LookupError) -> errors.RestError:
    """The REST answer to a partition Metadata does not show: not found, or not to be described."""
    code = exc.args[0] if exc.args else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    return errors.partition_not_found() if code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION else errors.from_kafka(code)
