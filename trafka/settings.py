"""Every setting trafka knows, broker and topic level, in one table.

The broker's parser (trafka/broker/config.py), storage's typed topic configs
(trafka/storage/config.py), DescribeConfigs and docs/configuration.md (trafka/configdoc.py) all
read this table; nothing else lists settings. This module imports nothing from trafka, so every
layer may use it.

A row says: the name (Kafka's), the level (broker setting or topic config), the type (Kafka's
ConfigDef types, as DescribeConfigs reports them), the default as text, the validator, the
synonyms, a one-line doc, and whether trafka acts on it. A setting without effect is accepted
(Kafka clients and tools set them) and the broker says once, at start, that it ignores it.

Synonyms, as in Kafka: a topic config's synonyms are the broker settings that give its default
(finest unit first: log.retention.ms, .minutes, .hours for retention.ms); a broker setting's
synonyms are the coarser settings, or the alias, that stand in when it is not set. A synonym
named `*.minutes` or `*.hours` of a `*.ms` setting is scaled to milliseconds.

Adding a setting: see docs/configuration.md ("Adding a setting").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum, IntEnum
from typing import Callable, Iterable

BROKER = "broker"
TOPIC = "topic"

INT_MAX = 2**31 - 1
LONG_MAX = 2**63 - 1


class ConfigError(ValueError):
    """A setting is unknown or its value is invalid."""


class ConfigType(IntEnum):
    """Kafka's ConfigDef types, numbered as DescribeConfigs (v3+) reports them."""

    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


class Update(Enum):
    """How Kafka 4.3 lets a broker setting change on a running broker (its DynamicBrokerConfig;
    the "Update Mode" of Kafka's broker-config docs): AlterConfigs and IncrementalAlterConfigs on a
    BROKER resource accept only what is not READ_ONLY."""

    READ_ONLY = "read-only"  # given at start only
    PER_BROKER = "per-broker"  # on the resource named by the node id, not the cluster default ""
    CLUSTER_WIDE = "cluster-wide"  # per broker, or for every broker at once on the resource ""
    # Kafka documents these (its SSL key and trust store settings) as per-broker too, but accepts
    # a dynamic change only with a listener prefix: listener.name.<listener>.<setting>
    PER_LISTENER = "per-broker, listener prefix only"


_INT_BITS = {ConfigType.SHORT: 15, ConfigType.INT: 31, ConfigType.LONG: 63}


# -- validators: called with the parsed value, raise ConfigError; `text` is for the docs ---------

@dataclass(frozen=True)
class Range:
    lo: float | None = None
    hi: float | None = None

    def __call__(self, value) -> None:
        if self.lo is not None and self.hi is not None and isinstance(value, float):
            if not self.lo <= value <= self.hi:
                raise ConfigError(f"must be between {self.lo} and {self.hi}, got {value}")
        if self.lo is not None and value < self.lo:
            raise ConfigError(f"must be at least {self.lo}, got {value}")
        if self.hi is not None and value > self.hi:
            raise ConfigError(f"must be at most {self.hi}, got {value}")

    @property
    def text(self) -> str:
        if self.hi is None:
            return f"[{self.lo},...]"
        if self.lo is None:
            return f"[...,{self.hi}]"
        return f"[{self.lo},...,{self.hi}]"


@dataclass(frozen=True)
class RebalanceProtocols:
    """Kafka's group.coordinator.rebalance.protocols: protocols it knows, classic among them."""

    def __call__(self, value) -> None:
        one_of(*_GROUP_PROTOCOLS)(value)
        if "classic" not in value:
            raise ConfigError("Disabling the 'classic' protocol is not supported.")

    text = "classic, consumer, share, streams (classic among them)"


_GROUP_PROTOCOLS = ("classic", "consumer", "share", "streams")


@dataclass(frozen=True)
class ThrottledReplicas:
    """Kafka's ThrottledReplicaListValidator: a LIST of partition:broker pairs, or the literal *."""

    def __call__(self, value) -> None:
        if value != ("*",) and not all(re.fullmatch(r"[0-9]+:[0-9]+", item) for item in value):
            raise ConfigError("must be the literal '*' or a list of replicas in the following format: "
                              f"[partitionId]:[brokerId],[partitionId]:[brokerId],..., got {','.join(value)!r}")

    text = "[partitionId]:[brokerId],[partitionId]:[brokerId],..."


def at_least(lo: float) -> Range:
    return Range(lo, None)


def between(lo: float, hi: float) -> Range:
    return Range(lo, hi)


@dataclass(frozen=True)
class OneOf:
    """A STRING from a fixed set, or for a LIST every item from the set (none is allowed, as Kafka's
    cleanup.policy since KIP-1161)."""

    choices: tuple[str, ...]

    def __call__(self, value) -> None:
        if isinstance(value, tuple):
            if any(item not in self.choices for item in value):
                raise ConfigError(f"every item must be one of {', '.join(self.choices)}, got {','.join(value)!r}")
        elif value not in self.choices:
            raise ConfigError(f"must be one of {', '.join(self.choices)}, got {value!r}")

    @property
    def text(self) -> str:
        return ", ".join(self.choices)


def one_of(*choices: str) -> OneOf:
    return OneOf(tuple(choices))


# -- the row --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Setting:
    name: str
    type: ConfigType
    default: str | None  # as text; None: no default (Kafka's null)
    doc: str
    level: str = BROKER
    validator: Callable[[object], None] | None = None
    synonyms: tuple[str, ...] = ()
    effect: bool = True
    update: Update = Update.READ_ONLY  # broker settings: Kafka's dynamic update mode
    listener: bool = False  # may be given for one listener: listener.name.<listener>.[<mechanism>.]<name>

    @property
    def dynamic(self) -> bool:
        return self.update is not Update.READ_ONLY

    @property
    def sensitive(self) -> bool:
        return self.type == ConfigType.PASSWORD

    def parse(self, text: str):
        """The typed value of `text`; raises ConfigError saying what is wrong."""
        value = _parse_type(self.type, text)
        if self.validator is not None and value is not None:
            self.validator(value)
        return value

    def default_value(self):
        return None if self.default is None else self.parse(self.default)

    def format(self, value) -> str | None:
        """A typed value as Kafka reports it (true/false, comma-separated lists)."""
        if value is None:
            return None
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, tuple):
            return ",".join(value)
        return str(value)


def _parse_type(kind: ConfigType, text: str):
    if text is None:
        return None
    text = str(text).strip()
    if kind in _INT_BITS:
        try:
            value = int(text)
        except ValueError:
            raise ConfigError(f"expected an integer, got {text!r}") from None
        bits = _INT_BITS[kind]
        if not -(2**bits) <= value < 2**bits:
            raise ConfigError(f"must be at most {2**bits - 1}, got {value}" if value > 0 else f"must be at least {-(2**bits)}, got {value}")
        return value
    if kind == ConfigType.DOUBLE:
        try:
            return float(text)
        except ValueError:
            raise ConfigError(f"expected a number, got {text!r}") from None
    if kind == ConfigType.BOOLEAN:
        if text.lower() not in ("true", "false"):
            raise ConfigError(f"expected true or false, got {text!r}")
        return text.lower() == "true"
    if kind == ConfigType.LIST:
        return tuple(dict.fromkeys(item.strip() for item in text.split(",") if item.strip()))
    return text


def unit_scale(name: str, synonym: str) -> int:
    """What one unit of `synonym` is in `name`'s unit: log.retention.hours -> 3,600,000 ms."""
    if not name.endswith(".ms"):
        return 1
    return {"hours": 3_600_000, "minutes": 60_000}.get(synonym.rsplit(".", 1)[-1], 1)


def scale_to_ms(value: int, scale: int) -> int:
    """A setting in minutes or hours as milliseconds; -1 (no limit) stays -1."""
    return value if value < 0 else value * scale


def _topic(name, type, default, doc, validator=None, broker=None, coarser=(), effect=True) -> list[Setting]:
    """A topic config and the broker setting that gives its default (same type, default and
    validator; `coarser` are broker settings in hours or minutes that stand in for it)."""
    rows = [Setting(name, type, default, doc, TOPIC, validator, tuple(s for s in (broker, *coarser) if s), effect)]
    if broker is not None:
        # the finest-unit broker setting of each topic config is cluster-wide dynamic in Kafka
        # (DynamicLogConfig); the coarser ones (`*.hours`) are read-only
        rows.append(Setting(broker, type, default, f"default of topic config `{name}`: {doc}", BROKER, validator,
                            tuple(coarser), effect, update=Update.CLUSTER_WIDE))
    return rows


_T = ConfigType
_CW, _PB, _PL = Update.CLUSTER_WIDE, Update.PER_BROKER, Update.PER_LISTENER
_COMPRESSION = one_of("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd")
_TIMESTAMP_TYPE = one_of("CreateTime", "LogAppendTime")
_CLEANUP_POLICY = one_of("delete", "compact")


# -- topic configs and their broker-wide defaults (log.*) ---------------------------------------
_TOPIC_CONFIGS: list[Setting] = [
    # Confluent Server's (and Redpanda's) broker-side schema validation: records must be framed
    # with a schema id the built-in registry knows (docs/schema-registry.md).
    *_topic("confluent.key.schema.validation", _T.BOOLEAN, "false",
            "produce refuses a record whose key is not framed with a registered schema id (magic byte 0, 4-byte id)"),
    *_topic("confluent.value.schema.validation", _T.BOOLEAN, "false",
            "produce refuses a record whose value is not framed with a registered schema id (magic byte 0, 4-byte id)"),
    *_topic("cleanup.policy", _T.LIST, "delete", "delete (retention), compact (keep the latest record per key), both, or empty (keep everything, KIP-1161)",
            _CLEANUP_POLICY, broker="log.cleanup.policy"),
    *_topic("compression.type", _T.STRING, "producer", "batches are always stored as the producer sent them",
            _COMPRESSION, broker="compression.type", effect=False),
    *_topic("delete.retention.ms", _T.LONG, "86400000", "how long a tombstone stays once its segment can be cleaned",
            at_least(0), broker="log.cleaner.delete.retention.ms"),
    *_topic("file.delete.delay.ms", _T.LONG, "60000", "deleted segments' files are removed at once",
            at_least(0), broker="log.segment.delete.delay.ms", effect=False),
    *_topic("flush.messages", _T.LONG, str(LONG_MAX), "fsync after this many appended records (default: never, rely on the page cache)",
            at_least(1), broker="log.flush.interval.messages"),
    *_topic("flush.ms", _T.LONG, str(LONG_MAX), "fsync when this long has passed since the last flush (checked on append and by the flush scheduler)",
            at_least(0), broker="log.flush.interval.ms"),
    *_topic("index.interval.bytes", _T.INT, "4096", "bytes of log between offset-index entries",
            at_least(0), broker="log.index.interval.bytes"),
    *_topic("follower.replication.throttled.replicas", _T.LIST, "", "stored and reported; Kafka throttles the follower side of these replicas' replication (partition:broker pairs, or *), trafka never throttles replication",
            ThrottledReplicas(), effect=False),
    *_topic("leader.replication.throttled.replicas", _T.LIST, "", "stored and reported; Kafka throttles the leader side of these replicas' replication (partition:broker pairs, or *), trafka never throttles replication",
            ThrottledReplicas(), effect=False),
    *_topic("max.compaction.lag.ms", _T.LONG, str(LONG_MAX), "a dirty record older than this is compacted whatever the dirty ratio",
            at_least(1), broker="log.cleaner.max.compaction.lag.ms"),
    *_topic("max.message.bytes", _T.INT, "1048588", "largest record batch accepted",
            at_least(0), broker="message.max.bytes"),
    *_topic("message.timestamp.type", _T.STRING, "CreateTime", "CreateTime keeps the producer's timestamps, LogAppendTime sets the broker's",
            _TIMESTAMP_TYPE, broker="log.message.timestamp.type"),
    *_topic("message.timestamp.before.max.ms", _T.LONG, str(LONG_MAX), "records are not refused for old timestamps",
            at_least(0), broker="log.message.timestamp.before.max.ms", effect=False),
    *_topic("message.timestamp.after.max.ms", _T.LONG, str(LONG_MAX), "records are not refused for future timestamps",
            at_least(0), broker="log.message.timestamp.after.max.ms", effect=False),
    *_topic("min.cleanable.dirty.ratio", _T.DOUBLE, "0.5", "dirty share of a compacted log's bytes before the cleaner compacts it",
            between(0.0, 1.0), broker="log.cleaner.min.cleanable.ratio"),
    *_topic("min.compaction.lag.ms", _T.LONG, "0", "records younger than this are never compacted",
            at_least(0), broker="log.cleaner.min.compaction.lag.ms"),
    *_topic("min.insync.replicas", _T.INT, "1", "in-sync replicas an acks=all write needs (NOT_ENOUGH_REPLICAS otherwise); one broker: always met",
            at_least(1), broker="min.insync.replicas"),
    *_topic("preallocate", _T.BOOLEAN, "false", "segment files grow as written",
            broker="log.preallocate", effect=False),
    *_topic("retention.bytes", _T.LONG, "-1", "per partition: the oldest segments go while the partition stays at least this big (-1: no limit)",
            broker="log.retention.bytes"),
    *_topic("retention.ms", _T.LONG, "604800000", "a closed segment goes when its newest record is older than this (-1: forever)",
            at_least(-1), broker="log.retention.ms", coarser=("log.retention.minutes", "log.retention.hours")),
    *_topic("segment.bytes", _T.INT, "1073741824", "a segment rolls before it would grow past this",
            at_least(14), broker="log.segment.bytes"),
    *_topic("segment.index.bytes", _T.INT, "10485760", "indexes grow as needed",
            at_least(4), broker="log.index.size.max.bytes", effect=False),
    *_topic("segment.jitter.ms", _T.LONG, "0", "segments roll at segment.ms exactly",
            at_least(0), broker="log.roll.jitter.ms", coarser=("log.roll.jitter.hours",), effect=False),
    *_topic("segment.ms", _T.LONG, "604800000", "a segment rolls at the first append this long after its first record's timestamp",
            at_least(1), broker="log.roll.ms", coarser=("log.roll.hours",)),
    *_topic("unclean.leader.election.enable", _T.BOOLEAN, "false", "in a simulated cluster: a replica out of sync may become leader when no in-sync one is alive",
            broker="unclean.leader.election.enable"),
]

# -- the broker: identity, network, topics ------------------------------------------------------
_SERVER: list[Setting] = [
    Setting("node.id", _T.INT, "0", "this broker's node id, reported in Metadata", validator=at_least(0), synonyms=("broker.id",)),
    Setting("broker.id", _T.INT, "0", "alias of node.id", validator=at_least(0)),
    Setting("broker.rack", _T.STRING, "", "the rack this broker is in, reported in Metadata and DescribeCluster"),
    Setting("cluster.brokers", _T.INT, "1", "trafka's own: how many brokers this process runs as a simulated cluster (node ids 0..N-1, broker i on the configured port + i unless cluster.broker.ports places it, its data in <data dir>/broker-<i>); a test harness, not a way to scale (docs/cluster.md)", validator=between(1, 16)),
    Setting("cluster.broker.ports", _T.STRING, "", "trafka's own: where each broker of the simulated cluster listens, comma-separated by broker; each broker one port (its first listener's; its other listeners keep their distance from it) or one port per listener, in the order of listeners, separated by / (9092,9095,9098 or 9092/9093,9095/9096,9098/9099); empty: broker i on each configured port + i (docs/cluster.md)"),
    Setting("cluster.broker.racks", _T.STRING, "", "trafka's own: the rack of each broker of the simulated cluster, comma-separated (a,b,c: broker i in the i-th); empty: every broker in broker.rack"),
    Setting("advertised.host", _T.STRING, "", "host clients are told to connect to (default: the bound host)"),
    Setting("advertised.port", _T.INT, "0", "port clients are told to connect to (default: the bound port)", validator=between(0, 65535)),
    Setting("num.partitions", _T.INT, "1", "partitions of an auto-created topic", validator=between(1, 100000)),
    Setting("auto.create.topics.enable", _T.BOOLEAN, "true", "create unknown topics on Metadata and Produce"),
    Setting("default.replication.factor", _T.SHORT, "1", "replicas of a new topic when the request does not say; above the number of brokers is refused (one broker: 1; see cluster.brokers)", validator=at_least(1)),
    Setting("auto.leader.rebalance.enable", _T.BOOLEAN, "true", "in a simulated cluster: leadership returns to preferred replicas by itself (checked every leader.imbalance.check.interval.seconds)"),
    Setting("leader.imbalance.check.interval.seconds", _T.LONG, "300", "in a simulated cluster: how often (broker time) auto.leader.rebalance.enable looks", validator=at_least(1)),
    Setting("leader.imbalance.per.broker.percentage", _T.INT, "10", "in a simulated cluster: the share of a broker's preferred partitions led elsewhere above which they move back", validator=between(0, 100)),
    Setting("replica.selector.class", _T.STRING, "", "KIP-392 follower fetching: org.apache.kafka.common.replica.RackAwareReplicaSelector sends a consumer with client.rack to a replica in its rack; empty: every consumer reads from the leader"),
    Setting("broker.session.timeout.ms", _T.INT, "9000", "in a simulated cluster: how long the controller waits without hearing from a broker before it fences it (the nemesis' isolate fault)", validator=at_least(1)),
    Setting("replica.lag.time.max.ms", _T.LONG, "30000", "in a simulated cluster: a follower not caught up with its leader for this long (broker time) leaves the ISR", validator=at_least(1)),
    Setting("delete.topic.enable", _T.BOOLEAN, "true", "allow DeleteTopics"),
    Setting("socket.request.max.bytes", _T.INT, "104857600", "largest request frame accepted", validator=at_least(1)),
    Setting("fetch.max.bytes", _T.INT, "57671680", "most bytes one Fetch answer carries in all (the smaller of this and the request's max_bytes); the first batch of the first partition with data comes back even when larger", validator=at_least(1024)),
    Setting("queued.max.request.bytes", _T.LONG, "268435456", "request bytes (frames of 64 KiB or more) buffered across all connections before the broker stops reading more; one frame always proceeds; -1 = no limit (Kafka's default)", validator=at_least(-1)),
]

# -- what one client may cost: connections and frames before authentication (docs/security.md) --
def connection_overrides(text: str) -> dict[str, int]:
    """`max.connections.per.ip.overrides`: `host:count,host:count` (IPv6 hosts keep their colons)."""
    overrides: dict[str, int] = {}
    for item in (part.strip() for part in (text or "").split(",")):
        if not item:
            continue
        host, sep, count = item.rpartition(":")
        if not sep or not host.strip() or not count.strip().isdigit():
            raise ConfigError(f"{item!r} is not host:count with a count of 0 or more")
        overrides[host.strip().strip("[]")] = int(count)
    return overrides


_CONNECTIONS: list[Setting] = [
    Setting("max.connections", _T.INT, str(INT_MAX), "connections the broker keeps open at once; past it a new connection waits, unread, until one closes (Kafka's acceptor stops accepting)", validator=at_least(0), update=_CW),
    Setting("max.connections.per.ip", _T.INT, str(INT_MAX), "connections one address may have open; past it a new one is closed at once", validator=at_least(0), update=_CW),
    Setting("max.connections.per.ip.overrides", _T.STRING, "", "host:count,... per-address exceptions to max.connections.per.ip", validator=connection_overrides, update=_CW),
    Setting("max.connection.creation.rate", _T.INT, str(INT_MAX), "new connections accepted per second, all addresses together; past it new connections are delayed", validator=at_least(0), update=_CW),
    Setting("connections.max.idle.ms", _T.LONG, "600000", "a connection with no request for this long is closed, authenticated or not", validator=at_least(-1)),
    Setting("sasl.server.max.receive.size", _T.INT, "524288", "largest frame accepted on a SASL listener before authentication completes (ApiVersions, SaslHandshake, SaslAuthenticate); a larger one closes the connection", validator=at_least(1)),
    Setting("sasl.handshake.timeout.ms", _T.LONG, "30000", "trafka's own: a connection on a SASL listener that has not authenticated within this long is closed (0: never)", validator=at_least(0)),
]

# -- security: listeners, SASL, SSL, ACLs (engineer "security" adds here) ---------------------
_AUTHORIZERS = ("org.apache.kafka.metadata.authorizer.StandardAuthorizer", "kafka.security.authorizer.AclAuthorizer")


def _known_authorizer(value) -> None:
    if value and value not in _AUTHORIZERS:
        raise ConfigError(f"authorizer.class.name: trafka has one authorizer, Kafka's StandardAuthorizer "
                          f"({_AUTHORIZERS[0]}, or the older name {_AUTHORIZERS[1]}); got {value!r}")


_SECURITY: list[Setting] = [
    Setting("listeners", _T.STRING, "", "NAME://HOST:PORT,... to listen on (default: one PLAINTEXT listener on --host/--port); see docs/security.md", update=_PB),
    Setting("advertised.listeners", _T.STRING, "", "NAME://HOST:PORT,... clients are told to connect to, per listener (default: the bound address)"),
    Setting("listener.security.protocol.map", _T.STRING, "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL", "NAME:PROTOCOL,... the security protocol of each listener", update=_PB),
    Setting("controller.listener.names", _T.STRING, "", "listeners accepted but not opened (a single broker is its own controller)"),
    Setting("sasl.enabled.mechanisms", _T.STRING, "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER", "SASL mechanisms offered on SASL listeners (Kafka: GSSAPI, which trafka does not have)", update=_PB, listener=True),
    Setting("sasl.jaas.config", _T.PASSWORD, None, "JAAS line for every SASL listener: PLAIN users as user_NAME=\"PASSWORD\", OAUTHBEARER validator options", update=_PB, listener=True),
    Setting("connections.max.reauth.ms", _T.LONG, "0", "a SASL session must re-authenticate after this long (0: never); KIP-368", validator=at_least(0), listener=True),
    Setting("ssl.keystore.type", _T.STRING, "PKCS12", "format of ssl.keystore.location", validator=one_of("PKCS12", "PEM"), update=_PL, listener=True),
    Setting("ssl.keystore.location", _T.STRING, None, "the broker's key and certificate chain (PKCS12 file, or PEM file with key and certificates)", update=_PL, listener=True),
    Setting("ssl.keystore.password", _T.PASSWORD, None, "password of the PKCS12 keystore", update=_PL, listener=True),
    Setting("ssl.key.password", _T.PASSWORD, None, "password of the private key (PEM keystores, ssl.keystore.key)", update=_PL, listener=True),
    Setting("ssl.keystore.certificate.chain", _T.PASSWORD, None, "the broker's certificate chain, inline PEM", update=_PL, listener=True),
    Setting("ssl.keystore.key", _T.PASSWORD, None, "the broker's private key, inline PEM", update=_PL, listener=True),
    Setting("ssl.truststore.type", _T.STRING, "PKCS12", "format of ssl.truststore.location", validator=one_of("PKCS12", "PEM"), update=_PL, listener=True),
    Setting("ssl.truststore.location", _T.STRING, None, "CA certificates that sign client certificates (PKCS12 or PEM file)", update=_PL, listener=True),
    Setting("ssl.truststore.password", _T.PASSWORD, None, "password of the PKCS12 truststore", update=_PL, listener=True),
    Setting("ssl.truststore.certificates", _T.PASSWORD, None, "CA certificates, inline PEM", update=_PL, listener=True),
    Setting("ssl.client.auth", _T.STRING, "none", "ask TLS clients for a certificate (mTLS); the principal is its subject", validator=one_of("none", "requested", "required"), update=_PB, listener=True),
    Setting("ssl.enabled.protocols", _T.STRING, "TLSv1.2,TLSv1.3", "TLS versions accepted", update=_PB, listener=True),
    Setting("ssl.cipher.suites", _T.STRING, "", "cipher names for TLS 1.2 (default: OpenSSL's)", update=_PB, listener=True),
    Setting("ssl.protocol", _T.STRING, "TLSv1.3", "ssl.enabled.protocols decides", effect=False, update=_PB, listener=True),
    Setting("ssl.endpoint.identification.algorithm", _T.STRING, "https", "a broker does not verify client host names", effect=False, update=_PB, listener=True),
    # what else Kafka's DynamicListenerConfig reconfigures per broker (and per listener): JSSE and
    # Kerberos tuning trafka has no use for (OpenSSL does its TLS; SASL has no GSSAPI)
    Setting("principal.builder.class", _T.CLASS, "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder", "the principal is User:<SASL user>, or User:<TLS subject> with ssl.client.auth", effect=False, update=_PB, listener=True),
    Setting("ssl.provider", _T.STRING, None, "OpenSSL (Python's ssl module) is the TLS provider", effect=False, update=_PB, listener=True),
    Setting("ssl.keymanager.algorithm", _T.STRING, "SunX509", "OpenSSL picks the key from ssl.keystore.*", effect=False, update=_PB, listener=True),
    Setting("ssl.trustmanager.algorithm", _T.STRING, "PKIX", "OpenSSL checks client certificates against ssl.truststore.*", effect=False, update=_PB, listener=True),
    Setting("ssl.secure.random.implementation", _T.STRING, None, "OpenSSL's random generator is used", effect=False, update=_PB, listener=True),
    Setting("ssl.engine.factory.class", _T.CLASS, None, "TLS is Python's ssl module on the stream", effect=False, update=_PB, listener=True),
    Setting("sasl.kerberos.service.name", _T.STRING, None, "there is no GSSAPI (Kerberos) mechanism", effect=False, update=_PB, listener=True),
    Setting("sasl.kerberos.kinit.cmd", _T.STRING, "/usr/bin/kinit", "there is no GSSAPI (Kerberos) mechanism", effect=False, update=_PB, listener=True),
    Setting("sasl.kerberos.ticket.renew.window.factor", _T.DOUBLE, "0.8", "there is no GSSAPI (Kerberos) mechanism", effect=False, update=_PB, listener=True),
    Setting("sasl.kerberos.ticket.renew.jitter", _T.DOUBLE, "0.05", "there is no GSSAPI (Kerberos) mechanism", effect=False, update=_PB, listener=True),
    Setting("sasl.kerberos.min.time.before.relogin", _T.LONG, "60000", "there is no GSSAPI (Kerberos) mechanism", effect=False, update=_PB, listener=True),
    Setting("sasl.kerberos.principal.to.local.rules", _T.LIST, "DEFAULT", "there is no GSSAPI (Kerberos) mechanism", effect=False, update=_PB, listener=True),
    # OAUTHBEARER validated against an identity provider (KIP-768): trafka validates tokens as
    # Kafka's unsecured validator does (JAAS unsecuredValidator* options), so these do nothing
    *(Setting(name, kind, default, "OAUTHBEARER tokens are checked by the unsecured validator's JAAS options (unsecuredValidator*); there is no JWKS validation", validator=check, effect=False, listener=True)
      for name, kind, default, check in (
          ("sasl.oauthbearer.expected.issuer", _T.STRING, None, None),
          ("sasl.oauthbearer.expected.audience", _T.LIST, None, None),
          ("sasl.oauthbearer.scope.claim.name", _T.STRING, "scope", None),
          ("sasl.oauthbearer.sub.claim.name", _T.STRING, "sub", None),
          ("sasl.oauthbearer.jwks.endpoint.url", _T.STRING, None, None),
          ("sasl.oauthbearer.jwks.endpoint.refresh.ms", _T.LONG, "3600000", at_least(0)),
          ("sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", _T.LONG, "100", at_least(0)),
          ("sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", _T.LONG, "10000", at_least(0)),
          ("sasl.oauthbearer.clock.skew.seconds", _T.INT, "30", at_least(0)),
          ("sasl.oauthbearer.token.endpoint.url", _T.STRING, None, None),
      )),
    Setting("sasl.server.callback.handler.class", _T.CLASS, None, "each mechanism's server is trafka's own (OAUTHBEARER: the unsecured validator)", effect=False, listener=True),
    *(Setting(name, kind, default, "the broker logs in to no SASL server", validator=check, effect=False, listener=True)
      for name, kind, default, check in (
          ("sasl.login.class", _T.CLASS, None, None),
          ("sasl.login.callback.handler.class", _T.CLASS, None, None),
          ("sasl.login.connect.timeout.ms", _T.INT, None, at_least(0)),
          ("sasl.login.read.timeout.ms", _T.INT, None, at_least(0)),
          ("sasl.login.retry.backoff.ms", _T.LONG, "100", at_least(0)),
          ("sasl.login.retry.backoff.max.ms", _T.LONG, "10000", at_least(0)),
      )),
    Setting("sasl.login.refresh.window.factor", _T.DOUBLE, "0.8", "the broker logs in to no SASL server", validator=between(0.5, 1.0), effect=False, update=_PB, listener=True),
    Setting("sasl.login.refresh.window.jitter", _T.DOUBLE, "0.05", "the broker logs in to no SASL server", validator=between(0.0, 0.25), effect=False, update=_PB, listener=True),
    Setting("sasl.login.refresh.min.period.seconds", _T.SHORT, "60", "the broker logs in to no SASL server", validator=between(0, 900), effect=False, update=_PB, listener=True),
    Setting("sasl.login.refresh.buffer.seconds", _T.SHORT, "300", "the broker logs in to no SASL server", validator=between(0, 3600), effect=False, update=_PB, listener=True),
    Setting("log.dirs", _T.STRING, None, "the data directory (one only) when --data-dir is not given"),
    Setting("authorizer.class.name", _T.STRING, "", "org.apache.kafka.metadata.authorizer.StandardAuthorizer (or kafka.security.authorizer.AclAuthorizer) turns ACLs on; empty: no ACLs, and the ACL requests answer SECURITY_DISABLED", validator=_known_authorizer),
    Setting("super.users", _T.STRING, "", "principals allowed everything when ACLs are on, separated by ';' (User:alice;User:bob)"),
    Setting("allow.everyone.if.no.acl.found", _T.BOOLEAN, "false", "with ACLs on, allow an action on a resource no ACL covers"),
]

# -- the HTTP side: console, JSON API, metrics (engineer "console" adds here) -----------------
_HTTP: list[Setting] = [
    Setting("console.port", _T.INT, "9644", "HTTP port of the console, JSON API and /metrics, on the broker's host; 0 picks a free port, -1 turns it off", validator=between(-1, 65535)),
    Setting("schema.registry.port", _T.INT, "8081", "HTTP port of the built-in schema registry (Confluent's REST API, docs/schema-registry.md), on the broker's host; 0 picks a free port, -1 turns it off", validator=between(-1, 65535)),
    Setting("schema.registry.auth", _T.STRING, "none", "basic: the schema registry asks for HTTP Basic credentials of a SASL user of the broker (PLAIN or SCRAM); none: open, as on loopback by default", validator=one_of("none", "basic")),
    Setting("rest.proxy.port", _T.INT, "8082", "HTTP port of the REST proxy (Confluent's REST Proxy API v2 and v3, docs/rest-proxy.md), on the broker's host; 0 picks a free port, -1 turns it off", validator=between(-1, 65535)),
    Setting("rest.proxy.auth", _T.STRING, "none", "basic: the REST proxy asks for HTTP Basic credentials of a SASL user of the broker (PLAIN or SCRAM) and acts as User:<name>, so ACLs apply; none: open, every request acts as User:ANONYMOUS", validator=one_of("none", "basic")),
    Setting("rest.proxy.consumer.instance.timeout.ms", _T.INT, "300000", "a v2 consumer instance of the REST proxy nobody used for this long is deleted (it commits if auto-commit is on and leaves its group); Confluent's consumer.instance.timeout.ms", validator=at_least(1000)),
    Setting("console.control.enabled", _T.BOOLEAN, "false", "serve the test-control endpoints (/api/v1/clock, /api/v1/faults, /api/v1/snapshot) even when the console listens on a non-loopback address"),
]

# -- the log layer's broker-only settings, and coarser units of the log.* defaults above -------
_LOG: list[Setting] = [
    Setting("log.roll.hours", _T.INT, "168", "segment age before a roll, in hours (log.roll.ms wins)", validator=at_least(1)),
    Setting("log.roll.jitter.hours", _T.INT, "0", "segments roll at segment.ms exactly", validator=at_least(0), effect=False),
    Setting("log.retention.minutes", _T.INT, None, "retention in minutes (log.retention.ms wins)", validator=at_least(-1)),
    Setting("log.retention.hours", _T.INT, "168", "retention in hours (minutes and ms win)", validator=at_least(-1)),
    Setting("log.retention.check.interval.ms", _T.LONG, "300000", "how often retention runs", validator=at_least(1)),
    Setting("log.cleaner.enable", _T.BOOLEAN, "true", "run compaction for compacted topics"),
    Setting("log.cleaner.backoff.ms", _T.LONG, "15000", "pause between cleaner passes", validator=at_least(0), update=_CW),
    Setting("log.flush.scheduler.interval.ms", _T.LONG, "1000", "how often the flusher applies flush.ms without appends (Kafka: Long.MAX)", validator=at_least(1)),
]

# -- consumer groups and committed offsets (engineer "kip848" adds group.consumer.* here) ------
_GROUP: list[Setting] = [
    Setting("group.coordinator.rebalance.protocols", _T.LIST, "classic,consumer", "classic, consumer (KIP-848) and share groups are served whatever it lists; leaving classic out is refused, as in Kafka", validator=RebalanceProtocols(), effect=False),
    Setting("group.initial.rebalance.delay.ms", _T.INT, "0", "wait for more members before the first rebalance (Kafka: 3000; 0 suits a dev broker)", validator=at_least(0)),
    Setting("group.min.session.timeout.ms", _T.INT, "1000", "smallest session timeout a member may ask for", validator=at_least(0)),
    Setting("group.max.session.timeout.ms", _T.INT, "1800000", "largest session timeout a member may ask for", validator=at_least(0)),
    Setting("group.consumer.assignors", _T.LIST, "uniform,range", "server-side assignors of KIP-848 consumer groups, the first is the default (uniform, range; Kafka's class names are accepted too)", validator=one_of("uniform", "range", "org.apache.kafka.coordinator.group.assignor.UniformAssignor", "org.apache.kafka.coordinator.group.assignor.RangeAssignor")),
    Setting("group.consumer.heartbeat.interval.ms", _T.INT, "5000", "heartbeat interval told to KIP-848 consumer group members", validator=at_least(1)),
    Setting("group.consumer.session.timeout.ms", _T.INT, "45000", "a KIP-848 consumer group member that sends no heartbeat for this long is removed", validator=at_least(1)),
    Setting("group.consumer.max.size", _T.INT, str(INT_MAX), "most members a KIP-848 consumer group may have (GROUP_MAX_SIZE_REACHED beyond)", validator=at_least(1)),
    Setting("group.consumer.min.session.timeout.ms", _T.INT, "45000", "smallest consumer.session.timeout.ms a group config may set", validator=at_least(1)),
    Setting("group.consumer.max.session.timeout.ms", _T.INT, "60000", "largest consumer.session.timeout.ms a group config may set", validator=at_least(1)),
    Setting("group.consumer.min.heartbeat.interval.ms", _T.INT, "5000", "smallest consumer.heartbeat.interval.ms a group config may set", validator=at_least(1)),
    Setting("group.consumer.max.heartbeat.interval.ms", _T.INT, "15000", "largest consumer.heartbeat.interval.ms a group config may set", validator=at_least(1)),
    Setting("group.consumer.migration.policy", _T.STRING, "bidirectional", "online migration of a group with members (KIP-848): upgrade converts a classic group when a consumer-protocol member joins, downgrade converts back when only classic members remain; an empty group changes protocol whatever it says", validator=one_of("disabled", "downgrade", "upgrade", "bidirectional")),
    Setting("offsets.topic.num.partitions", _T.INT, "50", "partitions of __consumer_offsets", validator=between(1, 1000)),
    Setting("group.share.heartbeat.interval.ms", _T.INT, "5000", "heartbeat interval told to share group members", validator=at_least(1)),
    Setting("group.share.session.timeout.ms", _T.INT, "45000", "a share group member that sends no heartbeat for this long is removed and its acquired records released", validator=at_least(1)),
    Setting("group.share.record.lock.duration.ms", _T.INT, "30000", "how long a share group member holds the records it acquired before they are available again (a group's share.record.lock.duration.ms wins)", validator=at_least(1000)),
    Setting("group.share.min.record.lock.duration.ms", _T.INT, "15000", "smallest share.record.lock.duration.ms a group config may set", validator=at_least(1000)),
    Setting("group.share.max.record.lock.duration.ms", _T.INT, "60000", "largest share.record.lock.duration.ms a group config may set", validator=at_least(1000)),
    Setting("group.share.min.session.timeout.ms", _T.INT, "45000", "smallest share.session.timeout.ms a group config may set", validator=at_least(1)),
    Setting("group.share.max.session.timeout.ms", _T.INT, "60000", "largest share.session.timeout.ms a group config may set", validator=at_least(1)),
    Setting("group.share.min.heartbeat.interval.ms", _T.INT, "5000", "smallest share.heartbeat.interval.ms a group config may set", validator=at_least(1)),
    Setting("group.share.max.heartbeat.interval.ms", _T.INT, "15000", "largest share.heartbeat.interval.ms a group config may set", validator=at_least(1)),
    Setting("group.share.delivery.count.limit", _T.INT, "5", "deliveries of one record to a share group before it is archived", validator=between(2, 10)),
    Setting("group.share.partition.max.record.locks", _T.INT, "2000", "most records of one partition a share group holds acquired at once", validator=at_least(100)),
    Setting("telemetry.max.bytes", _T.INT, "1048576", "largest metrics payload a client may push (PushTelemetry, KIP-714)", validator=at_least(1)),
    Setting("telemetry.export.metrics", _T.LIST, "", "client metric-name prefixes trafka exports on /metrics as trafka_client_metric (none by default)"),
    Setting("share.coordinator.state.topic.num.partitions", _T.INT, "50", "partitions of __share_group_state", validator=between(1, 1000)),
    Setting("share.coordinator.snapshot.update.records.per.snapshot", _T.INT, "500", "ShareUpdate records written for a share-partition before its next state record is a whole ShareSnapshot", validator=between(0, 500)),
    Setting("share.coordinator.state.topic.prune.interval.ms", _T.INT, "300000", "how often the share coordinator deletes the __share_group_state records no share-partition's state needs any more", validator=at_least(1)),
    Setting("share.coordinator.cold.partition.snapshot.interval.ms", _T.INT, "300000", "how often the share coordinator writes a fresh ShareSnapshot of each share-partition that has had none since", validator=at_least(1)),
    Setting("offsets.retention.minutes", _T.INT, "10080", "how long an empty group's offsets are kept", validator=at_least(1)),
    Setting("offsets.retention.check.interval.ms", _T.LONG, "600000", "how often expired committed offsets are removed", validator=at_least(1)),
]

# -- transactions ---------------------------------------------------------------------------
_TRANSACTION: list[Setting] = [
    Setting("transactional.id.expiration.ms", _T.INT, "604800000", "a transactional id with no transaction for this long is forgotten", validator=at_least(1)),
    Setting("transaction.max.timeout.ms", _T.INT, "900000", "largest transaction.timeout.ms a producer may ask for", validator=at_least(1)),
    Setting("transaction.state.log.num.partitions", _T.INT, "50", "partitions of __transaction_state", validator=between(1, 1000)),
    Setting("transaction.state.log.segment.bytes", _T.INT, "104857600", "segment size of __transaction_state", validator=at_least(1024)),
    Setting("transaction.state.log.replication.factor", _T.SHORT, "3", "replicas of __transaction_state in a simulated cluster, at most cluster.brokers (one broker: 1)", validator=at_least(1)),
    Setting("transaction.state.log.min.isr", _T.INT, "1", "there is one replica", validator=at_least(1), effect=False),
    Setting("transaction.state.log.load.buffer.size", _T.INT, "5242880", "the state is read in one pass", validator=at_least(1), effect=False),
    Setting("transaction.partition.verification.enable", _T.BOOLEAN, "true", "a transactional Produce v3-11 is checked with the transaction coordinator (the partition must be in the producer's open transaction); false appends it without asking, as Kafka's ReplicaManager; v12+ always goes to the coordinator, which adds its partition", update=_CW),
    Setting("transaction.abort.timed.out.transaction.cleanup.interval.ms", _T.INT, "10000", "how often transactions past their timeout are aborted", validator=at_least(1)),
    Setting("transaction.remove.expired.transaction.cleanup.interval.ms", _T.INT, "3600000", "how often expired transactional ids are removed", validator=at_least(1)),
]

# -- Kafka broker settings trafka accepts and ignores (replication, quotas, tuning of threads and
# buffers): a server.properties written for Kafka starts trafka with one warning -------------
_WITHOUT_EFFECT: list[Setting] = [
    # what Kafka 4's KRaft combined-mode config/server.properties sets (docs/security.md)
    Setting("process.roles", _T.STRING, "", "a trafka broker is broker and controller in one", effect=False),
    Setting("controller.quorum.bootstrap.servers", _T.STRING, "", "there is no controller quorum", effect=False),
    Setting("controller.quorum.voters", _T.STRING, "", "there is no controller quorum", effect=False),
    Setting("inter.broker.listener.name", _T.STRING, "", "there are no other brokers", effect=False),
    Setting("security.inter.broker.protocol", _T.STRING, "PLAINTEXT", "there are no other brokers", effect=False),
    Setting("sasl.mechanism.inter.broker.protocol", _T.STRING, "GSSAPI", "there are no other brokers", effect=False, update=_PB),
    Setting("sasl.mechanism.controller.protocol", _T.STRING, "GSSAPI", "there is no controller quorum", effect=False),
    Setting("num.network.threads", _T.INT, "3", "one trio event loop serves every connection", validator=at_least(1), effect=False, update=_CW),
    Setting("num.io.threads", _T.INT, "8", "one trio event loop serves every request", validator=at_least(1), effect=False, update=_CW),
    Setting("num.recovery.threads.per.data.dir", _T.INT, "2", "logs are recovered in one pass", validator=at_least(1), effect=False, update=_CW),
    Setting("socket.send.buffer.bytes", _T.INT, "102400", "the operating system's socket buffers are used", effect=False),
    Setting("socket.receive.buffer.bytes", _T.INT, "102400", "the operating system's socket buffers are used", effect=False),
    Setting("offsets.topic.replication.factor", _T.SHORT, "3", "replicas of __consumer_offsets (and _schemas) in a simulated cluster, at most cluster.brokers (one broker: 1)", validator=at_least(1)),
    Setting("share.coordinator.state.topic.replication.factor", _T.SHORT, "3", "replicas of __share_group_state in a simulated cluster, at most cluster.brokers (one broker: 1)", validator=at_least(1)),
    Setting("share.coordinator.state.topic.min.isr", _T.SHORT, "2", "there is one replica", validator=at_least(1), effect=False),
    Setting("log.dir", _T.STRING, "/tmp/kafka-logs", "the data dir is --data-dir, or log.dirs", effect=False),
    # the metadata log is the data dir's metadata/ and snapshots by trafka's rule (docs/metadata-log.md)
    Setting("metadata.log.dir", _T.STRING, "", "the metadata log is the data dir's metadata/", effect=False),
    Setting("metadata.log.max.record.bytes.between.snapshots", _T.LONG, "20971520",
            "the metadata log snapshots past 1 MiB and past the last snapshot's size", validator=at_least(1), effect=False),
    Setting("metadata.log.max.snapshot.interval.ms", _T.LONG, "3600000",
            "the metadata log snapshots by size only", validator=at_least(0), effect=False),
]


def _index(rows: Iterable[Setting], level: str) -> dict[str, Setting]:
    table: dict[str, Setting] = {}
    for row in rows:
        if row.level != level:
            continue
        if row.name in table:
            raise AssertionError(f"{level} setting {row.name} is declared twice")
        table[row.name] = row
    return table


ALL: list[Setting] = [*_SERVER, *_CONNECTIONS, *_SECURITY, *_HTTP, *_TOPIC_CONFIGS, *_LOG, *_GROUP, *_TRANSACTION, *_WITHOUT_EFFECT]
BROKER_SETTINGS: dict[str, Setting] = _index(ALL, BROKER)
TOPIC_CONFIGS: dict[str, Setting] = _index(ALL, TOPIC)


def _check() -> None:
    """The table is consistent: synonyms exist, defaults parse, docs are there."""
    for row in ALL:
        if not row.doc:
            raise AssertionError(f"{row.name} has no doc")
        row.default_value()
        for synonym in row.synonyms:
            if synonym not in BROKER_SETTINGS:
                raise AssertionError(f"{row.name}: synonym {synonym} is not a broker setting")
        if row.level == TOPIC and (row.dynamic or row.listener):
            raise AssertionError(f"topic config {row.name}: update modes and listener prefixes are broker settings")
        if row.update is Update.PER_LISTENER and not row.listener:
            raise AssertionError(f"{row.name} changes per listener, so it must take the listener prefix")


_check()
