"""The group coordinator: consumer groups and committed offsets, kept in `__consumer_offsets`."""

from trafka.broker.coordinators.group.coordinator import GroupCoordinator

__all__ = ["GroupCoordinator"]
