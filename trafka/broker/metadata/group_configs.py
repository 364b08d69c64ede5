"""Group configs: settings of one consumer or share group, set through IncrementalAlterConfigs or
AlterConfigs on a GROUP config resource (type 32) and read by DescribeConfigs, as Kafka's
GroupConfig and GroupConfigManager have them.

A group may be configured before it exists. Each config falls back to the broker setting named
in `GROUP_CONFIGS` and is validated as Kafka validates it: within the broker's
`group.{consumer,share}.min/max.*` bounds, an offset-reset policy Kafka knows, an isolation
level. The coordinators read a group's setting in force with `value(group_id, name)`.

Kept as Kafka keeps them: ConfigRecords on resource type GROUP in the metadata log (image.py),
fsynced before the answer and applied only then.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from trafka.broker.metadata.image import ClusterMetadata
from trafka.broker.metadata.records import GROUP, config_changes, replay_configs
from trafka.storage.errors import InvalidConfig


@dataclass(frozen=True)
class GroupConfig:
    name: str
    kind: str  # "int" or "string"
    default_setting: str | None  # the broker setting it defaults to
    default: str | None = None  # else this default
    bounds: tuple[str, str] | None = None  # broker settings holding its min and max
    doc: str = ""
    limits: tuple[int, int] | None = None  # else a fixed range (the broker setting's own)


GROUP_CONFIGS: dict[str, GroupConfig] = {c.name: c for c in (
    GroupConfig("consumer.session.timeout.ms", "int", "group.consumer.session.timeout.ms",
                bounds=("group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"),
                doc="a KIP-848 member of this group that sends no heartbeat for this long is removed"),
    GroupConfig("consumer.heartbeat.interval.ms", "int", "group.consumer.heartbeat.interval.ms",
                bounds=("group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms"),
                doc="heartbeat interval told to this KIP-848 group's members"),
    GroupConfig("share.session.timeout.ms", "int", "group.share.session.timeout.ms",
                bounds=("group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms"),
                doc="a member of this share group that sends no heartbeat for this long is removed"),
    GroupConfig("share.heartbeat.interval.ms", "int", "group.share.heartbeat.interval.ms",
                bounds=("group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms"),
                doc="heartbeat interval told to this share group's members"),
    GroupConfig("share.record.lock.duration.ms", "int", "group.share.record.lock.duration.ms",
                bounds=("group.share.min.record.lock.duration.ms", "group.share.max.record.lock.duration.ms"),
                doc="how long a member of this share group holds the records it acquired"),
    # KIP-1240: per-group forms of two broker settings, within the broker setting's own range.
    GroupConfig("share.delivery.count.limit", "int", "group.share.delivery.count.limit", limits=(2, 10),
                doc="deliveries of one record to this share group before it is archived"),
    GroupConfig("share.partition.max.record.locks", "int", "group.share.partition.max.record.locks",
                limits=(100, 10000), doc="most records of one partition this share group holds in flight at once"),
    GroupConfig("share.auto.offset.reset", "string", None, "latest",
                doc="where this share group starts reading a partition: latest, earliest or by_duration:<ISO-8601 duration>"),
    GroupConfig("share.isolation.level", "string", None, "read_uncommitted",
                doc="read_committed: this share group never acquires records of open or aborted transactions"),
)}

_DURATION = re.compile(r"^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$")


def duration_ms(text: str) -> int | None:
    """Milliseconds of an ISO-8601 duration as Java's Duration.parse reads the common forms
    (PnDTnHnMn.nS), or None."""
    match = _DURATION.match(text.strip().upper())
    if not match or text.strip().upper() in ("P", "PT"):
        return None
    days, hours, minutes, seconds = (float(g) if g else 0.0 for g in match.groups())
    return int(((days * 24 + hours) * 60 + minutes) * 60_000 + seconds * 1000)


class GroupConfigs:
    def __init__(self, metadata, broker_config):
        """`metadata`: the broker's ClusterMetadata; None keeps them in memory only (a coordinator
        built alone, in a unit test)."""
        self.broker_config = broker_config
        self.groups: dict[str, dict[str, str]] = {}
        self.metadata = ClusterMetadata.of(metadata)
        self.metadata.register(["ConfigRecord"], self._replay)

    def _replay(self, record) -> None:
        if record.fields["resource_type"] == GROUP:
            replay_configs(self.groups, record)

    # --- reading ------------------------------------------------------------------------------

    def default(self, name: str) -> str:
        config = GROUP_CONFIGS[name]
        if config.default_setting is not None:
            return str(self.broker_config[config.default_setting])
        return config.default

    def value(self, group_id: str, name: str):
        """The setting in force for the group: its own, else the broker's (ints as int)."""
        text = self.groups.get(group_id, {}).get(name, self.default(name))
        return int(text) if GROUP_CONFIGS[name].kind == "int" else text

    def overrides(self, group_id: str) -> dict[str, str]:
        return dict(self.groups.get(group_id, {}))

    def configured(self) -> list[str]:
        return sorted(g for g, values in self.groups.items() if values)

    # --- changing -----------------------------------------------------------------------------

    def validate(self, values: dict[str, str]) -> None:
        """InvalidConfig (Kafka's INVALID_CONFIG) with Kafka-like messages."""
        for name, text in values.items():
            config = GROUP_CONFIGS.get(name)
            if config is None:
                raise InvalidConfig(f"Unknown group config name: {name}")
            if config.kind == "int":
                try:
                    number = int(text)
                except (TypeError, ValueError):
                    raise InvalidConfig(f"Invalid value {text} for configuration {name}: Not a number of type INT") from None
                if config.bounds:
                    low_name, high_name = config.bounds
                    low, high = self.broker_config[low_name], self.broker_config[high_name]
                    if number < low:
                        raise InvalidConfig(f"{name} must be greater than or equal to {low_name}")
                    if number > high:
                        raise InvalidConfig(f"{name} must be less than or equal to {high_name}")
                if config.limits and not config.limits[0] <= number <= config.limits[1]:
                    raise InvalidConfig(f"Invalid value {text} for configuration {name}: "
                                        f"Value must be in [{config.limits[0]}, {config.limits[1]}]")
            elif name == "share.auto.offset.reset":
                policy = text.strip().lower()
                if policy not in ("latest", "earliest") and not (
                        policy.startswith("by_duration:") and duration_ms(policy.split(":", 1)[1]) is not None):
                    raise InvalidConfig(f"Invalid value {text} for configuration {name}: "
                                        "must be latest, earliest or by_duration:<ISO-8601 duration>")
            elif name == "share.isolation.level" and text not in ("read_committed", "read_uncommitted"):
                raise InvalidConfig(f"Invalid value {text} for configuration {name}: "
                                    "String must be one of: read_committed, read_uncommitted")

    def alter(self, group_id: str, values: dict[str, str], validate_only: bool) -> None:
        """Replace the group's configs with `values` (validated first; durable before return)."""
        self.validate(values)
        if validate_only:
            return
        self.metadata.write(config_changes(GROUP, group_id, self.groups.get(group_id, {}),
                                           {k: str(v) for k, v in values.items()}))
