"""The controller writes first and changes nothing it cannot roll back: a broker stopping or
starting while the metadata log cannot be written (a full disk) leaves the live brokers, the
generation Metadata answers follow and every partition's state as they were."""

from __future__ import annotations

import os
import uuid

import pytest
from testkit.storage import small_tmpfs

from trafka.broker.cluster.controller import Controller
from trafka.broker.metadata.image import ClusterMetadata
from trafka.storage.errors import StorageError


@pytest.fixture
def small_disk(tmp_path):
    with small_tmpfs(tmp_path / "disk", "1m") as mountpoint:
        yield mountpoint


def _fill(directory) -> None:
    with open(directory / "filler", "wb") as filler:
        try:
            while True:
                filler.write(b"\0" * 65536)
                filler.flush()
        except OSError:
            pass


def test_a_failed_write_changes_neither_the_live_brokers_nor_the_partitions(small_disk):
    metadata = ClusterMetadata.of_data_dir(small_disk)
    controller = Controller([0, 1, 2], {0: None, 1: None, 2: None}, metadata)
    topics = [uuid.uuid4() for _ in range(20)]
    for topic_id in topics:
        controller.assign(topic_id, {p: (0, 1, 2) for p in range(5)})
    partitions = [(t, p, False) for t in topics for p in range(5)]
    before = {(t, p): controller.partition(t, p) for t, p, _ in partitions}
    generation = controller.generation
    _fill(small_disk)
    with pytest.raises((OSError, StorageError)):
        controller.broker_stopped(0, partitions)
    assert controller.alive == {0, 1, 2}
    assert controller.generation == generation
    assert {(t, p): controller.partition(t, p) for t, p, _ in partitions} == before
    os.remove(small_disk / "filler")
    changes = controller.broker_stopped(0, partitions)  # written now: it takes effect
    assert len(changes) == len(partitions) and controller.alive == {1, 2} and controller.generation > generation
    controller.broker_stopped(1, partitions)
    controller.broker_stopped(2, partitions)  # every partition offline, broker 2 the last leader
    offline = {(t, p): controller.partition(t, p) for t, p, _ in partitions}
    assert {state.leader for state in offline.values()} == {-1}
    _fill(small_disk)
    with pytest.raises((OSError, StorageError)):
        controller.broker_started(2, partitions)  # its election of broker 2 cannot be written
    assert controller.alive == set()
    assert {(t, p): controller.partition(t, p) for t, p, _ in partitions} == offline
    os.remove(small_disk / "filler")
    assert len(controller.broker_started(2, partitions)) == len(partitions) and controller.alive == {2}
    metadata.close()
