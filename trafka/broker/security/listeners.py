"""Kafka's `listeners`, `advertised.listeners` and `listener.security.protocol.map`.

A listener is NAME://HOST:PORT; its security protocol comes from the map (by default a listener
named after a protocol uses that protocol). `--host/--port` are the shorthand for one PLAINTEXT
listener when `listeners` is not set. Controller listeners (`controller.listener.names`) are
accepted and not opened: a single trafka broker is its own controller.

In a simulated cluster (`cluster.brokers`) broker i listens on each listener's port + i, or
where `cluster.broker.ports` places it (`place_in_cluster`).
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


def place_in_cluster(listeners: list[Listener], config, index: int) -> None:
    """Broker `index` of a simulated cluster: its listeners on `cluster.broker.ports`' entry for
    it when that is set (one port: the first listener's, the others keeping their distance from
    it; or one port per listener, in the order of `listeners`), else on each configured port +
    `index`; a port 0 stays a free one. Advertised ports move as their listeners do."""
    entries = cluster_ports(config, len(listeners))
    first = listeners[0].port
    for j, listener in enumerate(listeners):
        if entries is None:
            moved = listener.port + index if listener.port else 0
        elif len(entries[index]) > 1 or j == 0:
            moved = entries[index][j]
        elif listener.port and first and entries[index][0]:  # its distance from the first kept
            moved = entries[index][0] + listener.port - first
        else:
            moved = 0
        if listener.advertised_port:
            listener.advertised_port += moved - listener.port
        listener.port = moved


def cluster_ports(config, listener_count: int) -> list[list[int]] | None:
    """`cluster.broker.ports` parsed: per broker, one port or one per listener (None when unset)."""
    text = config["cluster.broker.ports"]
    if not text.strip() or config["cluster.brokers"] == 1:
        return None
    entries = []
    for entry in text.split(","):
        ports = []
        for item in entry.split("/"):
            if not item.strip().isdigit() or int(item) > 65535:
                raise ConfigError(f"invalid value for cluster.broker.ports: {item.strip()!r} is not a port")
            ports.append(int(item))
        if len(ports) not in (1, listener_count):
            raise ConfigError(f"invalid value for cluster.broker.ports: {entry.strip()!r} gives {len(ports)} ports "
                              f"for {listener_count} listeners (one port, or one per listener)")
        entries.append(ports)
    if len(entries) != config["cluster.brokers"]:
        raise ConfigError(f"cluster.broker.ports names {len(entries)} brokers for {config['cluster.brokers']} "
                          "(cluster.brokers)")
    return entries
