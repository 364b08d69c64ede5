"""The nemesis at work: a planned schedule (schedule.py) applied to a running broker or
simulated cluster, one step at its time, then everything healed.

Each step goes through the same calls as the test-control endpoints (the cluster's stop, kill,
start, leader moves and reassignments, its replication's pause and network cuts, the
controller's fencing, each broker's fault table, the broker clock) or, to make topics, through
the broker's own request dispatch (CreateTopics, CreatePartitions), and is recorded as an event:
when it ran in broker time and wall time, what it targeted, and whether it was done or skipped
(a leader move to a replica out of sync, say). Healing starts every broker the nemesis stopped,
mends the network, unfences an isolated broker, resumes paused replication, lifts an injected
down and removes the request faults still armed; then it checks that every live broker answers
on its port (`serving` in the report). Stopping the nemesis (`stop`) heals at once.

One nemesis runs per broker process at a time; `start` refuses a second while one runs. It
runs as a trio system task of the broker's run, so stopping the broker it started on (node 0
of a cluster, say) does not end it.
"""

from __future__ import annotations

import inspect
import logging
import time
import weakref

import trio

from trafka.broker.cluster.replication import INTERNAL_REPLICATION
from trafka.broker.network.connection import dispatch
from trafka.broker.testcontrol.nemesis.schedule import Settings, Step, plan
from trafka.wire import framing
from trafka.wire.messages import APIS

log = logging.getLogger("trafka.nemesis")

_nemeses: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # broker -> its last nemesis


class Skipped(Exception):
    """This step does not apply now (say, the replica it would lead is out of sync)."""

    def __init__(self, target: str | None, why: str):
        super().__init__(why)
        self.target = target


class Nemesis:
    def __init__(self, broker, settings: Settings):
        self.broker = broker
        self.cluster = broker.cluster
        self.settings = settings
        self.steps: list[Step] = plan(settings, len(self.cluster.nodes))
        self.events: list[dict] = []
        self.healed: list[str] = []
        self.state = "running"
        self.started_wall_ms = int(time.time() * 1000)
        self.started_broker_ms = broker.clock.time_ms()
        self._cancel = trio.CancelScope()
        self._stopped: set[int] = set()
        self._paused: set[int] = set()
        self._downed: set[int] = set()
        self._armed: list[tuple[object, int]] = []  # (fault table, fault id) the nemesis added
        self._isolated: dict[int, list[tuple[object, int]]] = {}  # broker -> its appends failed meanwhile
        self._fenced: set[int] = set()
        self._cuts: set[tuple[int, int]] = set()
        self._created = 0
        self._jumped_ms = 0  # broker clock moved by the clock steps so far
        self.serving: dict[str, bool] = {}  # after healing: broker id -> whether it answers on its port

    # --- the run ------------------------------------------------------------------------------

    async def run(self) -> None:
        start = trio.current_time()
        with self._cancel:
            for step in self.steps:
                await trio.sleep_until(start + step.at_ms / 1000)
                await self._run_step(step)
        if self.state != "running":
            return  # stopped: healed already
        self.heal()
        await self.check_serving()
        self.state = "done"
        log.warning("nemesis (seed %d) %s: %d faults, healed %s", self.settings.seed, self.state,
                    len(self.events), ", ".join(self.healed) or "nothing")

    def stop(self) -> None:
        """End the run now, healed before this returns."""
        self._cancel.cancel()
        self.heal()
        self.state = "stopped"

    async def _run_step(self, step: Step) -> None:
        # Where the step falls in broker time by the plan: its offset plus the clock's planned jumps.
        event = {"at_ms": step.at_ms, "broker_at_ms": step.at_ms + self._jumped_ms, "kind": step.kind,
                 "planned": step.describe(), "target": None,
                 "broker_time_ms": self.broker.clock.time_ms(), "wall_time_ms": int(time.time() * 1000)}
        try:
            target = getattr(self, "_" + step.kind)(step)
            event["target"] = await target if inspect.isawaitable(target) else target
            event["result"] = "done"
        except Skipped as skipped:
            event["target"], event["result"] = skipped.target, f"skipped: {skipped}"
        except (ValueError, LookupError) as exc:
            event["result"] = f"failed: {exc}"
        except Exception as exc:  # a step must never end the run (or the broker): it is a result
            log.exception("nemesis step %s failed", step.describe())
            event["result"] = f"failed: {type(exc).__name__}: {exc}"
        self.events.append(event)
        log.warning("nemesis: %s -> %s (%s)", step.describe(), event["target"], event["result"])

    # --- the faults ---------------------------------------------------------------------------

    def _stop(self, step: Step, kill: bool = False) -> str:
        if step.broker in self.cluster.stopped:
            raise Skipped(f"broker {step.broker}", "it is stopped already")
        self.cluster.stop_broker(step.broker, kill=kill)
        self._stopped.add(step.broker)
        return f"broker {step.broker}"

    def _kill(self, step: Step) -> str:
        return self._stop(step, kill=True)

    def _start(self, step: Step) -> str:
        if step.broker not in self.cluster.stopped:
            raise Skipped(f"broker {step.broker}", "it is running")
        self.cluster.start_broker(step.broker)
        self._stopped.discard(step.broker)
        return f"broker {step.broker}"

    def _bounce(self, step: Step) -> str:
        """Killed, started and killed again with nothing between (a start's serving task not
        run yet when the second kill comes)."""
        self._stop(step, kill=True)
        self.cluster.start_broker(step.broker)
        self.cluster.stop_broker(step.broker, kill=True)
        return f"broker {step.broker}"

    def _isolate(self, step: Step) -> str:
        """A network partition around the broker: no replication to or from it, and its
        coordinators' writes, which could reach no follower, fail (Kafka's would time out)."""
        node = self._node(step.broker)
        self.cluster.replication.isolated.add(step.broker)
        self._isolated[step.broker] = [
            (node.faults, node.faults.add({"append_fails": True, "topic": topic}).id) for topic in INTERNAL_REPLICATION]
        return f"broker {step.broker}"

    def _fence(self, step: Step) -> str:
        if step.broker not in self._isolated:
            raise Skipped(f"broker {step.broker}", "it is not isolated")
        self.cluster.fence_broker(step.broker)
        self._fenced.add(step.broker)
        return f"broker {step.broker}"

    def _rejoin(self, step: Step) -> str:
        for table, fault_id in self._isolated.pop(step.broker, []):
            table.remove(fault_id)
        self.cluster.replication.isolated.discard(step.broker)
        if step.broker in self._fenced:
            self._fenced.discard(step.broker)
            self.cluster.unfence_broker(step.broker)
        return f"broker {step.broker}"

    def _cut(self, step: Step) -> str:
        pair = (step.broker, step.params["from"])
        self.cluster.replication.cut.add(pair)
        self._cuts.add(pair)
        return f"broker {pair[0]} from broker {pair[1]}"

    def _mend(self, step: Step) -> str:
        pair = (step.broker, step.params["from"])
        self.cluster.replication.cut.discard(pair)
        self._cuts.discard(pair)
        return f"broker {pair[0]} from broker {pair[1]}"

    async def _create(self, step: Step) -> str:
        """A topic, a partition or `_schemas` made now, whatever else is in force."""
        what = step.params["what"]
        running = [n for n in self.cluster.running_nodes() if n.node_id in self.cluster.controller.alive]
        if not running:
            raise Skipped(None, "no broker is running")
        node = running[step.pick % len(running)]
        if what == "registry":
            if "_schemas" in node.logs.topics:
                raise Skipped("_schemas", "it exists")
            self.cluster.schema_registry()
            return "_schemas"
        if what == "partitions":
            topic, _ = self._partition(step.pick)
            count = node.logs.topics[topic].partitions + 1
            answer = await self._request(node, 37, 3, {"topics": [{"name": topic, "count": count, "assignments": None}],
                                                       "timeout_ms": 10_000, "validate_only": False})
            result = answer.results[0]
            target = f"{topic} to {count} partitions"
        else:
            self._created += 1
            topic = f"nemesis-{self.settings.seed}-{self._created}"
            answer = await self._request(node, 19, 7, {"topics": [{
                "name": topic, "num_partitions": 3, "replication_factor": min(3, len(self.cluster.nodes)),
                "assignments": [], "configs": []}], "timeout_ms": 10_000, "validate_only": False})
            result = answer.topics[0]
            target = topic
        if result.error_code:
            raise ValueError(f"{target}: error {result.error_code} {result.error_message or ''}".strip())
        return target

    @staticmethod
    async def _request(node, api_key: int, version: int, body: dict):
        """One request through the broker's own dispatch, as a connection sends it."""
        api = APIS[api_key]
        frame = framing.encode_request(api, version, 1, "trafka-nemesis", body)
        parts = await dispatch(node, frame[4:], "nemesis")
        data = b"".join(p if isinstance(p, (bytes, bytearray, memoryview)) else p.read() for p in parts)
        return framing.decode_response(api, version, data[4:])[1]

    def _coordinator(self, step: Step) -> str:
        """The leadership of a partition of an internal topic moves to another in-sync replica."""
        running = self.cluster.running_nodes()
        topics = running[0].logs.topics if running else {}
        partitions = sorted((name, p) for name in INTERNAL_REPLICATION if name in topics
                            for p in range(topics[name].partitions))
        if not partitions:
            raise Skipped(None, "there is no internal topic yet")
        topic, partition = partitions[step.pick % len(partitions)]
        state = self.cluster.describe_partition(topic, partition)
        new = sorted(state["replicas"])[step.params["choice"] % len(state["replicas"])]
        target = f"{topic}-{partition} to broker {new}"
        if new == state["leader"]:
            raise Skipped(target, "it leads already")
        if new not in state["isr"] or new not in self.cluster.controller.alive:
            raise Skipped(target, "it is not in sync")
        self.cluster.move_leader(topic, partition, new)
        return target

    def _down(self, step: Step) -> str:
        self._node(step.broker).faults.add({"down_ms": step.params["down_ms"]})
        self._downed.add(step.broker)
        return f"broker {step.broker}"

    def _pause(self, step: Step) -> str:
        self.cluster.replication.paused.add(step.broker)
        self._paused.add(step.broker)
        return f"broker {step.broker}"

    def _resume(self, step: Step) -> str:
        self.cluster.replication.paused.discard(step.broker)
        self._paused.discard(step.broker)
        return f"broker {step.broker}"

    def _leader(self, step: Step) -> str:
        topic, partition = self._partition(step.pick)
        state = self.cluster.describe_partition(topic, partition)
        new = sorted(state["replicas"])[step.params["choice"] % len(state["replicas"])]
        target = f"{topic}-{partition} to broker {new}"
        if new == state["leader"]:
            raise Skipped(target, "it leads already")
        if new not in state["isr"] or new in self.cluster.stopped:
            raise Skipped(target, "it is not in sync")
        self.cluster.move_leader(topic, partition, new)
        return target

    def _reassign(self, step: Step) -> str:
        topic, partition = self._partition(step.pick)
        state = self.cluster.describe_partition(topic, partition)
        brokers = len(self.cluster.nodes)
        replicas = [(step.params["choice"] + i) % brokers for i in range(len(state["replicas"]))]
        target = f"{topic}-{partition} to brokers {replicas}"
        if replicas == list(state["replicas"]):
            raise Skipped(target, "its replicas already")
        if any(r in self.cluster.stopped for r in replicas):
            raise Skipped(target, "a broker of them is stopped")
        self.cluster.reassign(topic, partition, replicas)
        return target

    def _request_fault(self, step: Step, spec: dict) -> str:
        node = self._node(step.broker)
        fault = node.faults.add({"api": step.params["api"], "count": step.params["count"], **spec})
        self._armed.append((node.faults, fault.id))
        where = f" on broker {step.broker}" if step.broker is not None else ""
        return f"{step.params['api']}{where}"

    def _errors(self, step: Step) -> str:
        return self._request_fault(step, {"error": step.params["error"]})

    def _delays(self, step: Step) -> str:
        return self._request_fault(step, {"delay_ms": step.params["delay_ms"]})

    def _drops(self, step: Step) -> str:
        return self._request_fault(step, {"drop_connection": True})

    def _clock(self, step: Step) -> str:
        self.broker.advance_clock(step.params["ms"])
        self._jumped_ms += step.params["ms"]
        return f"+{step.params['ms']} ms"

    # --- targets ------------------------------------------------------------------------------

    def _node(self, node_id: int | None):
        """A planned broker (numbered 0..N-1 as the cluster's nodes are), None: the whole broker's."""
        return self.broker if node_id is None else self.cluster.nodes[node_id]

    def _partition(self, pick: int) -> tuple[str, int]:
        """The partition numbered `pick` among the user's topics' partitions, in sorted order."""
        running = self.cluster.running_nodes()
        topics = running[0].logs.topics if running else {}
        partitions = sorted((name, p) for name, meta in topics.items() if not name.startswith("_")
                            for p in range(meta.partitions))
        if not partitions:
            raise Skipped(None, "there is no topic yet")
        return partitions[pick % len(partitions)]

    # --- healing ------------------------------------------------------------------------------

    def heal(self) -> None:
        for pair in sorted(self._cuts):
            self.cluster.replication.cut.discard(pair)
            self.healed.append(f"mended broker {pair[0]}'s replication from broker {pair[1]}")
        self._cuts.clear()
        for node_id in sorted(self._isolated):
            self._rejoin(Step(0, "rejoin", node_id))
            self.healed.append(f"broker {node_id} back in the network")
        for node_id in sorted(self._stopped):
            if node_id in self.cluster.stopped:
                self.cluster.start_broker(node_id)
                self.healed.append(f"started broker {node_id}")
        self._stopped.clear()
        for node_id in sorted(self._paused):
            self.cluster.replication.paused.discard(node_id)
            self.healed.append(f"resumed broker {node_id}'s replication")
        self._paused.clear()
        for node_id in sorted(self._downed, key=lambda n: -1 if n is None else n):
            if self._node(node_id).faults.come_up():
                self.healed.append(f"broker {node_id} up again" if node_id is not None else "broker up again")
        self._downed.clear()
        removed = sum(1 for table, fault_id in self._armed if table.remove(fault_id))
        if removed:
            self.healed.append(f"removed {removed} request fault(s)")
        self._armed.clear()

    async def check_serving(self, timeout_s: float = 10) -> None:
        """Every live broker answers on its port after healing (a started broker's listener
        opens in its own task): `serving` says which did."""
        for node in self.cluster.nodes:
            if node.node_id not in self.cluster.controller.alive:
                self.serving[str(node.node_id)] = False
                continue
            with trio.move_on_after(timeout_s):
                while True:
                    try:
                        stream = await trio.open_tcp_stream(node.host, node.port)
                    except OSError:
                        await trio.sleep(0.05)
                        continue
                    await stream.aclose()
                    self.serving[str(node.node_id)] = True
                    break
            self.serving.setdefault(str(node.node_id), False)
        missing = [n for n, ok in self.serving.items() if not ok]
        if missing:
            log.error("nemesis (seed %d): after healing, broker(s) %s do not serve", self.settings.seed, ", ".join(missing))

    # --- what it did --------------------------------------------------------------------------

    def report(self) -> dict:
        return {"state": self.state, "settings": self.settings.to_json(), "planned": len(self.steps),
                "started_wall_ms": self.started_wall_ms, "started_broker_ms": self.started_broker_ms,
                "events": list(self.events), "healed": list(self.healed), "serving": dict(self.serving)}


def start(broker, body) -> dict:
    """Start a nemesis on `broker` (node 0 of a simulated cluster): its report so far. ValueError
    for bad settings or while another one runs."""
    if isinstance(body, dict) and "session_timeout_ms" not in body:
        body = {**body, "session_timeout_ms": broker.config["broker.session.timeout.ms"]}
    settings = Settings.parse(body)
    current = _nemeses.get(broker)
    if current is not None and current.state == "running":
        raise ValueError("a nemesis is running already: DELETE /api/v1/nemesis stops it")
    nemesis = Nemesis(broker, settings)
    _nemeses[broker] = nemesis
    trio.lowlevel.spawn_system_task(nemesis.run, name=f"nemesis seed {settings.seed}")
    log.warning("nemesis started: seed %d, %.1f s, %d faults planned", settings.seed, settings.duration_s, len(nemesis.steps))
    return nemesis.report()


def report(broker) -> dict:
    """The running or last nemesis' report ({"state": "none"} before the first)."""
    nemesis = _nemeses.get(broker)
    return {"state": "none"} if nemesis is None else nemesis.report()


def stop(broker) -> dict:
    """Stop the running nemesis (it heals); the report once it has."""
    nemesis = _nemeses.get(broker)
    if nemesis is None:
        raise LookupError("no nemesis has run on this broker")
    if nemesis.state == "running":
        nemesis.stop()
    return nemesis.report()
