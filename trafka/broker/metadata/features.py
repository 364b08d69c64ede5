"""Finalized features (KIP-584), as a single-node KRaft cluster keeps them.

A Kafka broker reports, in every ApiVersions answer (v3+), the features it supports (a range
of levels each) and the cluster's finalized level of each, with an epoch that grows with every
change; UpdateFeatures changes the finalized levels. trafka serves the three features clients
and tools look at:

- metadata.version: 7-27 (3.3-IV3 to 4.1-IV1, Kafka 4.1's range), finalized at 27. trafka keeps
  no metadata log, so the level changes nothing it does; Kafka refuses every downgrade of it
  from 4.0 on, and so does trafka.
- group.version: 1 (the KIP-848 consumer protocol) is supported and finalized only while
  ConsumerGroupHeartbeat (key 68) is served, as on Kafka 4.1; otherwise 0-0.
- transaction.version: 0-2, finalized at 2 as on a fresh Kafka 4.1. Level 1 writes flexible
  `__transaction_state` records; level 2 lets clients use KIP-890 part 2 (implicit partition
  adds, an epoch bump at every commit/abort; docs/transactions.md). Java 4.x follows the
  finalized level: UpdateFeatures lowering it to 0 or 1 turns its new producers back to the
  classic protocol.

A feature at level 0 is not listed as finalized, as in KRaft. The levels UpdateFeatures set are
FeatureLevelRecords of the metadata log (image.py), one per feature in one batch, fsynced before
UpdateFeatures answers and applied only then; each carries the epoch it made (trafka's field:
Kafka takes the epoch from the metadata log's offset).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from trafka.broker.metadata.image import ClusterMetadata
from trafka.broker.metadata.records import MetadataRecord
from trafka.broker.requests import routes
from trafka.wire.errors import ErrorCode

log = logging.getLogger("trafka.broker")

METADATA_VERSION = "metadata.version"
GROUP_VERSION = "group.version"
TRANSACTION_VERSION = "transaction.version"

METADATA_VERSION_MIN = 7  # 3.3-IV3, the oldest Kafka 4.x accepts
METADATA_VERSION_LATEST = 27  # 4.1-IV1, Kafka 4.1's latest production level
CONSUMER_GROUP_HEARTBEAT = 68
TRANSACTION_VERSION_LATEST = 2  # KIP-890 part 2 (trafka/broker/coordinators/transaction/coordinator.py)

# UpdateFeatures' upgrade types (v1+); v0's allow_downgrade maps to SAFE_DOWNGRADE.
UPGRADE = 1
SAFE_DOWNGRADE = 2
UNSAFE_DOWNGRADE = 3


def supported_features(served_keys) -> dict[str, tuple[int, int]]:
    """Each feature's supported (min, max) level, given the API keys this broker serves."""
    return {
        METADATA_VERSION: (METADATA_VERSION_MIN, METADATA_VERSION_LATEST),
        GROUP_VERSION: (0, 1 if CONSUMER_GROUP_HEARTBEAT in served_keys else 0),
        TRANSACTION_VERSION: (0, TRANSACTION_VERSION_LATEST),
    }


@dataclass(frozen=True)
class FeatureUpdate:
    feature: str
    max_version_level: int
    upgrade_type: int


class FeatureLevels:
    """The finalized levels: each feature's supported maximum unless UpdateFeatures set one."""

    FIRST_EPOCH = 1

    def __init__(self, metadata, node_id: int):
        """`metadata`: the broker's ClusterMetadata (ClusterMetadata.of for the other forms)."""
        self.node_id = node_id
        self.epoch, self._set = self.FIRST_EPOCH, {}
        self.metadata = ClusterMetadata.of(metadata)
        self.metadata.register(["FeatureLevelRecord"], self._replay)

    def _replay(self, record: MetadataRecord) -> None:
        self._set[str(record.fields["name"])] = int(record.fields["feature_level"])
        self.epoch = max(self.epoch, int(record.fields.get("epoch", self.epoch)))

    @property
    def supported(self) -> dict[str, tuple[int, int]]:
        return supported_features(routes.ROUTES)

    def level(self, feature: str) -> int:
        lo, hi = self.supported.get(feature, (0, 0))
        chosen = self._set.get(feature, hi)
        return max(min(chosen, hi), 0)

    def finalized(self) -> dict[str, int]:
        """Features finalized above level 0 (level 0 is 'not finalized' in KRaft)."""
        return {name: self.level(name) for name in self.supported if self.level(name) > 0}

    def check(self, update: FeatureUpdate) -> tuple[ErrorCode, str | None]:
        """Kafka's FeatureControlManager checks for one update: NONE or the error and message."""
        name, level = update.feature, update.max_version_level
        if name not in self.supported:
            return ErrorCode.INVALID_UPDATE_VERSION, f"Invalid update version {level} for feature {name}. The controller does not support the given feature."
        if update.upgrade_type not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
            return ErrorCode.INVALID_UPDATE_VERSION, f"Unknown upgrade type {update.upgrade_type}."
        current = self.level(name)
        lo, hi = self.supported[name]
        if level > 0 and not lo <= level <= hi or level <= 0 and name == METADATA_VERSION:
            return ErrorCode.INVALID_UPDATE_VERSION, (
                f"Invalid update version {level} for feature {name}. Local controller {self.node_id} only supports versions {lo}-{hi}"
            )
        if level < current:
            if update.upgrade_type == UPGRADE:
                return ErrorCode.INVALID_UPDATE_VERSION, (
                    f"Invalid update version {level} for feature {name}. Can't downgrade the version of this feature "
                    "without setting the upgrade type to either safe or unsafe downgrade."
                )
            if name == METADATA_VERSION:
                if update.upgrade_type == UNSAFE_DOWNGRADE:
                    return ErrorCode.INVALID_UPDATE_VERSION, "Unsafe metadata.version downgrades are not supported."
                return ErrorCode.INVALID_UPDATE_VERSION, (
                    f"Invalid metadata.version {level}. Refusing to perform the requested downgrade because it might "
                    "delete metadata information."
                )
        elif level > current and update.upgrade_type != UPGRADE:
            return ErrorCode.INVALID_UPDATE_VERSION, (
                f"Invalid update version {level} for feature {name}. Can't downgrade to a newer version."
            )
        return ErrorCode.NONE, None

    def apply(self, updates: list[FeatureUpdate]) -> None:
        """Set the levels (already checked) and bump the epoch, durably."""
        epoch = self.epoch + 1
        levels = {update.feature: max(update.max_version_level, 0) for update in updates}
        self.metadata.write([MetadataRecord("FeatureLevelRecord", {"name": name, "feature_level": level, "epoch": epoch})
                             for name, level in sorted(levels.items())])
        self.epoch = epoch  # also when every update was already in force (no record changed the epoch)
        log.info("finalized features now %s (epoch %d)", self.finalized(), epoch)
