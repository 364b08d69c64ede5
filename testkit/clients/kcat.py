"""kcat (librdkafka's command-line client): the produce/consume driver."""

from __future__ import annotations

import json
import subprocess

from testkit.clients.base import Auth, CREATE_TIME, Got, LOG_APPEND_TIME, Msg, TIMEOUT_S
from testkit.clients.confluent import confluent_config


def kcat_options(auth: Auth, **settings: str) -> list[str]:
    """kcat's `-X` options to connect as `auth`. kcat is librdkafka, so these are the settings
    confluent-kafka gets (confluent_config); `settings` (dots written as underscores) add to or
    replace them, e.g. sasl_oauthbearer_config="principalClaimName=user principal=x"."""
    config = {**confluent_config(auth), **{name.replace("_", "."): value for name, value in settings.items()}}
    options = []
    for name, value in config.items():
        text = str(value).lower() if isinstance(value, bool) else str(value)
        options += ["-X", f"{name}={text}"]
    return options


class Kcat:
    """kcat (librdkafka 2.0.2). Produces one message per line, so keys and values are text
    without tabs or newlines; headers apply to every message of one call; no timestamps."""

    name = "kcat"

    def __init__(self, bootstrap: str, path: str = "kcat"):
        self.bootstrap = bootstrap
        self.path = path

    def run(self, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess:
        result = subprocess.run([self.path, "-b", self.bootstrap, "-m", "10", *args], input=input,
                                capture_output=True, timeout=TIMEOUT_S)
        if result.returncode != 0:
            raise AssertionError(f"kcat {' '.join(args)} failed ({result.returncode}): {result.stderr.decode()}")
        return result

    def produce(self, topic: str, msgs: list[Msg], codec: str = "none", partition: int = 0,
                idempotent: bool = False) -> list[int]:
        headers = {m.headers for m in msgs}
        if len(headers) != 1 or any(m.timestamp is not None or m.key is None or m.value is None for m in msgs):
            raise ValueError("kcat produces text keys and values with one header set per call, no timestamps")
        args = ["-P", "-t", topic, "-p", str(partition), "-K", "\t", "-z", codec]
        if idempotent:
            args += ["-X", "enable.idempotence=true"]
        for k, v in next(iter(headers)):
            args += ["-H", f"{k}={v.decode()}"]
        lines = b"".join(m.key + b"\t" + m.value + b"\n" for m in msgs)
        self.run(*args, input=lines)
        return []  # kcat does not report offsets

    def consume(self, topic: str, count: int, partition: int = 0) -> list[Got]:
        out = self.run("-C", "-t", topic, "-p", str(partition), "-o", "beginning", "-e", "-c", str(count), "-J")
        return self._parse(out.stdout)

    @staticmethod
    def _parse(stdout: bytes) -> list[Got]:
        got = []
        for line in stdout.decode().splitlines():
            m = json.loads(line)
            hs = m.get("headers") or []
            headers = tuple((hs[i], None if hs[i + 1] is None else hs[i + 1].encode()) for i in range(0, len(hs), 2))
            enc = (lambda s: None if s is None else s.encode())
            got.append(Got(m["offset"], enc(m["key"]), enc(m["payload"]), headers, m["ts"],
                           LOG_APPEND_TIME if m["tstype"] == "logappend" else CREATE_TIME))
        return got


    def group_consume(self, topic: str, group: str, count: int) -> list[Got]:
        """kcat -G: a balanced consumer; offsets are committed (auto-commit) when it exits."""
        # Not -o: in -G mode it would override the committed offsets on every assignment.
        out = self.run("-G", group, "-X", "auto.offset.reset=earliest", "-e", "-c", str(count), "-J", topic)
        return self._parse(out.stdout)
