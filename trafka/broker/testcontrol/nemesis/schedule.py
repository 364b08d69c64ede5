"""A nemesis schedule: the faults a seed gives, planned before the first one runs.

`plan(settings, brokers)` is a pure function of the settings (seed, duration, fault kinds,
max_down) and the number of brokers, so the same seed gives the same faults, on the same
targets, in the same order and at the same offsets from the start, wherever it runs: a failure
found once can be replayed. Targets are brokers by node id, and partitions by a number
(`pick`) the runner turns into a partition of the user's topics in sorted order, so the same
topics give the same partition.

The plan keeps to `max_down` at every instant: a broker stopped, killed or injected "down" is
down from its fault until its planned recovery, and a fault that would take one more broker
down than allowed is not planned. Every stop, kill and pause is followed by its recovery
within the duration; whatever is still in force at the end is healed by the runner.

Fault kinds (`KINDS`):
    stop, kill      a broker of a simulated cluster stops cleanly / is killed; `start` brings it back
    bounce          a broker is killed, started and killed again back to back; `start` brings it back
    isolate         a network partition around a broker: no replication to or from it, and after
                    broker.session.timeout.ms the controller fences it (its partitions' leaders
                    move, it leaves every ISR) while it still serves its clients; `rejoin` heals
    cut             replication from one broker to another is cut (that follower stops fetching
                    from that leader, and leaves the ISR after replica.lag.time.max.ms); `mend` heals
    create          a topic is made (RF 3 where the cluster has three brokers), a user topic grows by
                    a partition, or the schema registry makes `_schemas` (its first request): made
                    while whatever else is planned is in force, an outage included
    coordinator     the leadership of a partition of an internal topic (__consumer_offsets,
                    __transaction_state, __share_group_state, _schemas) moves to another replica
    down            a broker refuses every connection for a while (an injected down)
    leader          a partition's leadership moves to another of its replicas
    reassign        a partition moves to another set of brokers, of the same size
    pause           a broker's replica fetchers hold; `resume` lets them go on
    errors          a request of one API is answered with a retriable error, a few times
    delays          requests of one API are answered late, a few times
    drops           a request of one API closes its connection unanswered, once
    clock           broker time jumps forward a few seconds
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

CLUSTER_KINDS = ("stop", "kill", "bounce", "isolate", "cut", "leader", "coordinator", "reassign", "pause", "create")
ANY_BROKER_KINDS = ("down", "errors", "delays", "drops", "clock")
KINDS = CLUSTER_KINDS + ANY_BROKER_KINDS
DOWN_KINDS = ("stop", "kill", "bounce", "isolate", "down")
CREATED = ("topic", "partitions", "registry")  # what a `create` step makes
SESSION_TIMEOUT_MS = 9000  # Kafka's broker.session.timeout.ms: an isolated broker is fenced after it

# Errors a client retries without losing or duplicating anything (the request is answered
# before its handler runs), per API.
RETRIABLE_ERRORS = {
    "Produce": ("NOT_LEADER_OR_FOLLOWER", "NOT_ENOUGH_REPLICAS"),
    "Fetch": ("NOT_LEADER_OR_FOLLOWER",),
    "FindCoordinator": ("COORDINATOR_NOT_AVAILABLE",),
    "OffsetCommit": ("COORDINATOR_NOT_AVAILABLE", "NOT_COORDINATOR"),
    "Heartbeat": ("COORDINATOR_NOT_AVAILABLE",),
}
DELAYED_APIS = ("Produce", "Fetch", "Metadata", "FindCoordinator", "OffsetCommit", "JoinGroup", "Heartbeat",
                "ShareFetch", "ConsumerGroupHeartbeat")
DROPPED_APIS = ("Produce", "Fetch", "Metadata", "OffsetCommit", "FindCoordinator")

MIN_GAP_MS, MAX_GAP_MS = 400, 1500  # between two faults
MIN_OUTAGE_MS, MAX_OUTAGE_MS = 500, 3000  # how long a broker stays down or paused
MAX_DURATION_S = 3600


@dataclass(frozen=True)
class Settings:
    seed: int
    duration_s: float
    faults: tuple[str, ...] = ()  # empty: every kind the broker allows
    max_down: int = 1
    session_timeout_ms: int = SESSION_TIMEOUT_MS  # the broker's broker.session.timeout.ms

    @classmethod
    def parse(cls, body) -> "Settings":
        """Settings from a JSON body or keyword dict; ValueError saying what is wrong."""
        if not isinstance(body, dict):
            raise ValueError("the nemesis takes a JSON object: {\"seed\": 7, \"duration_s\": 15, \"faults\": [...], \"max_down\": 1}")
        unknown = set(body) - {"seed", "duration_s", "faults", "max_down", "session_timeout_ms"}
        if unknown:
            raise ValueError(f"unknown nemesis field(s) {sorted(unknown)}; known: duration_s, faults, max_down, seed, "
                             "session_timeout_ms")
        seed = body.get("seed")
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise ValueError(f"seed must be an integer, got {seed!r}")
        duration = body.get("duration_s")
        if not isinstance(duration, (int, float)) or isinstance(duration, bool) or not 0 < duration <= MAX_DURATION_S:
            raise ValueError(f"duration_s must be a number of seconds in (0, {MAX_DURATION_S}], got {duration!r}")
        faults = body.get("faults", [])
        if not isinstance(faults, list) or not all(isinstance(k, str) for k in faults):
            raise ValueError(f"faults must be a list of fault kinds ({', '.join(KINDS)}), got {faults!r}")
        unknown_kinds = [k for k in faults if k not in KINDS]
        if unknown_kinds:
            raise ValueError(f"unknown fault kind(s) {unknown_kinds}; known: {', '.join(KINDS)}")
        max_down = body.get("max_down", 1)
        if not isinstance(max_down, int) or isinstance(max_down, bool) or max_down < 0:
            raise ValueError(f"max_down must be a whole number of brokers, got {max_down!r}")
        session = body.get("session_timeout_ms", SESSION_TIMEOUT_MS)
        if not isinstance(session, int) or isinstance(session, bool) or session < 1:
            raise ValueError(f"session_timeout_ms must be a positive whole number of ms, got {session!r}")
        return cls(seed, float(duration), tuple(dict.fromkeys(faults)), max_down, session)

    def kinds_for(self, brokers: int) -> tuple[str, ...]:
        """The kinds planned on `brokers` brokers; ValueError for a kind that needs a cluster."""
        allowed = KINDS if brokers > 1 else ANY_BROKER_KINDS
        if not self.faults:
            return allowed
        refused = [k for k in self.faults if k not in allowed]
        if refused:
            raise ValueError(f"fault kind(s) {refused} need a simulated cluster (cluster.brokers > 1)")
        return self.faults

    def to_json(self) -> dict:
        return {"seed": self.seed, "duration_s": self.duration_s, "faults": list(self.faults), "max_down": self.max_down,
                "session_timeout_ms": self.session_timeout_ms}


@dataclass(frozen=True)
class Step:
    """One planned fault: at `at_ms` from the start, `kind` on `broker` (a node id) or on the
    partition numbered `pick` (resolved by the runner), with its parameters."""

    at_ms: int
    kind: str
    broker: int | None = None
    pick: int | None = None
    params: dict = field(default_factory=dict, hash=False, compare=True)

    def describe(self) -> str:
        parts = [self.kind]
        if self.broker is not None:
            parts.append(f"broker {self.broker}")
        if self.pick is not None:
            parts.append(f"partition #{self.pick}")
        parts += [f"{k}={v}" for k, v in sorted(self.params.items())]
        return " ".join(parts)


def plan(settings: Settings, brokers: int) -> list[Step]:
    """The schedule `settings` gives on `brokers` brokers (see the module's docstring)."""
    kinds = settings.kinds_for(brokers)
    rng = random.Random(settings.seed)
    duration_ms = int(settings.duration_s * 1000)
    steps: list[Step] = []
    down_until: dict[int, int] = {}  # broker -> when its planned recovery runs
    paused_until: dict[int, int] = {}
    at = 0
    while True:
        at += rng.randint(MIN_GAP_MS, MAX_GAP_MS)
        if at >= duration_ms:
            break
        kind = rng.choice(kinds)
        outage = rng.randint(MIN_OUTAGE_MS, MAX_OUTAGE_MS)
        pick = rng.randrange(1 << 16)
        node = rng.randrange(brokers)
        down_now = {b for b, until in down_until.items() if until > at}
        if kind in DOWN_KINDS:
            up = [b for b in range(brokers) if b not in down_now]
            if kind == "isolate":  # long enough, mostly, for the controller to fence it
                outage += rng.randint(settings.session_timeout_ms // 2, settings.session_timeout_ms * 3 // 2)
            recover = min(at + outage, duration_ms - 1)
            if len(down_now) >= settings.max_down or not up or recover <= at:
                continue
            target = up[pick % len(up)]
            down_until[target] = recover
            if kind == "down":
                steps.append(Step(at, "down", target, params={"down_ms": recover - at}))
            elif kind == "isolate":
                steps.append(Step(at, "isolate", target))
                if at + settings.session_timeout_ms < recover:
                    steps.append(Step(at + settings.session_timeout_ms, "fence", target))
                steps.append(Step(recover, "rejoin", target))
            else:
                steps.append(Step(at, kind, target))
                steps.append(Step(recover, "start", target))
        elif kind == "cut":
            source = (node + 1 + rng.randrange(brokers - 1)) % brokers
            recover = min(at + outage, duration_ms - 1)
            steps.append(Step(at, "cut", node, params={"from": source}))
            steps.append(Step(recover, "mend", node, params={"from": source}))
        elif kind == "create":
            steps.append(Step(at, kind, pick=pick, params={"what": rng.choice(CREATED)}))
        elif kind == "coordinator":
            steps.append(Step(at, kind, pick=pick, params={"choice": rng.randrange(brokers)}))
        elif kind == "pause":
            if paused_until.get(node, 0) > at:
                continue
            recover = min(at + outage, duration_ms - 1)
            paused_until[node] = recover
            steps.append(Step(at, "pause", node))
            steps.append(Step(recover, "resume", node))
        elif kind in ("leader", "reassign"):
            steps.append(Step(at, kind, pick=pick, params={"choice": rng.randrange(brokers)}))
        elif kind == "errors":
            api = rng.choice(sorted(RETRIABLE_ERRORS))
            steps.append(Step(at, kind, node if brokers > 1 else None, params={
                "api": api, "error": rng.choice(RETRIABLE_ERRORS[api]), "count": rng.randint(1, 3)}))
        elif kind == "delays":
            steps.append(Step(at, kind, node if brokers > 1 else None, params={
                "api": rng.choice(DELAYED_APIS), "delay_ms": rng.randint(50, 800), "count": rng.randint(1, 5)}))
        elif kind == "drops":
            steps.append(Step(at, kind, node if brokers > 1 else None, params={"api": rng.choice(DROPPED_APIS), "count": 1}))
        elif kind == "clock":
            steps.append(Step(at, kind, params={"ms": rng.randint(500, 5000)}))
    return sorted(steps, key=lambda step: step.at_ms)  # stable: a recovery planned earlier keeps its place
