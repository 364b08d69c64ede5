"""What the group coordinator's managers share: one object per manager, each holding the
coordinator it works for (no mixins; the coordinator composes them, as Kafka's
GroupCoordinatorShard composes its GroupMetadataManager and OffsetMetadataManager)."""

from __future__ import annotations


class CoordinatorPart:
    def __init__(self, coordinator, overlay=None):
        self.coordinator = coordinator
        # The maps the part reads and changes: the coordinator's, or an overlay's copies.
        self._maps = overlay if overlay is not None else coordinator

    @property
    def groups(self):
        """Classic groups (and offsets-only groups) of every loaded shard."""
        return self._maps.groups

    @property
    def consumer_groups(self):
        """KIP-848 consumer groups of every loaded shard."""
        return self._maps.consumer_groups

    @property
    def config(self):
        return self.coordinator.config

    @property
    def logs(self):
        return self.coordinator.logs

    def _now(self) -> int:
        return self.coordinator.now()

    def _reschedule(self) -> None:
        self.coordinator.reschedule()
