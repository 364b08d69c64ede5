"""Kafka's `listeners`, `advertised.listeners` and `listener.security.protocol.map`.

A listener is NAME://HOST:PORT; its security protocol comes from the map (by default a listener
named after a protocol uses that protocol). `--host/--port` are the shorthand for one PLAINTEXT
listener when `listeners` is not set. Controller listeners (`controller.listener.names`) are
accepted and not opened: a single trafka broker is its own controller.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from trafka.broker.config import ConfigError

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
_ENDPOINT = re.compile(r"^([A-Za-z0-9_]+)://(\[[^\]]*\]|[^:/]*):(\d+)$")


@dataclass
class Listener:
    name: str  # upper case, as Kafka normalises it
    protocol: str
    host: str
    port: int  # 0 until bound when a free port was asked for
    advertised_host: str | None = None
    advertised_port: int | None = None

    @property
    def tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def sasl(self) -> bool:
        return self.protocol in ("SASL_PLAINTEXT", "SASL_SSL")

    @property
    def advertised(self) -> tuple[str, int]:
        return (self.advertised_host or self.host, self.advertised_port or self.port)

    def __str__(self) -> str:
        return f"{self.name}://{self.host}:{self.port}"


def _endpoints(text: str, setting: str) -> list[tuple[str, str, int]]:
    endpoints = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        match = _ENDPOINT.match(item)
        if match is None:
            raise ConfigError(f"invalid value for {setting}: {item!r} is not NAME://HOST:PORT")
        name, host, port = match.group(1).upper(), match.group(2).strip("[]"), int(match.group(3))
        if port > 65535:
            raise ConfigError(f"invalid value for {setting}: port {port} of {item!r} is out of range")
        if any(name == seen for seen, _, _ in endpoints):
            raise ConfigError(f"invalid value for {setting}: listener {name} appears twice")
        endpoints.append((name, host, port))
    return endpoints


def protocol_map(text: str) -> dict[str, str]:
    mapping = {p: p for p in PROTOCOLS}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, sep, protocol = item.partition(":")
        protocol = protocol.strip().upper()
        if not sep or protocol not in PROTOCOLS:
            raise ConfigError(
                f"invalid value for listener.security.protocol.map: {item!r} (expected NAME:PROTOCOL, "
                f"PROTOCOL one of {', '.join(PROTOCOLS)})"
            )
        mapping[name.strip().upper()] = protocol
    return mapping


def configured_listeners(config, host: str, port: int) -> list[Listener]:
    """The listeners to open: from `listeners` when set, else one PLAINTEXT on host:port."""
    text = config["listeners"]
    if not text:
        listener = Listener("PLAINTEXT", "PLAINTEXT", host, port)
        listener.advertised_host = config["advertised.host"] or None
        listener.advertised_port = config["advertised.port"] or None
        return [listener]
    mapping = protocol_map(config["listener.security.protocol.map"])
    controllers = {n.strip().upper() for n in config["controller.listener.names"].split(",") if n.strip()}
    listeners = []
    for name, bind_host, bind_port in _endpoints(text, "listeners"):
        if name in controllers:
            continue
        if name not in mapping:
            raise ConfigError(
                f"listener {name} has no security protocol: add {name}:PROTOCOL to listener.security.protocol.map"
            )
        # Kafka binds every interface for an empty host; trafka binds the --host address.
        listeners.append(Listener(name, mapping[name], bind_host or host, bind_port))
    if not listeners:
        raise ConfigError("listeners names only controller listeners; add one for clients, e.g. PLAINTEXT://:9092")
    by_name = {listener.name: listener for listener in listeners}
    for name, adv_host, adv_port in _endpoints(config["advertised.listeners"], "advertised.listeners"):
        if name in controllers:
            continue
        if name not in by_name:
            raise ConfigError(f"advertised.listeners names {name}, which is not in listeners")
        by_name[name].advertised_host = adv_host or None
        by_name[name].advertised_port = adv_port or None
    return listeners
