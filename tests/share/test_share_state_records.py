"""`__share_group_state` records: ShareSnapshot and ShareUpdate round trips, and the two
functions ShareUpdate rests on, checked offset by offset against a model on seeded random
states: `combine` (replay: an update laid over the state so far) and `changed` (a write: what
differs from the state as last written). If they disagree with the model, a restart would bring
back a state the broker never had."""

from __future__ import annotations

import random
import uuid

import pytest

from trafka.broker.coordinators.share import formats
from trafka.broker.coordinators.share.formats import SharePartitionKey, ShareSnapshot, ShareUpdate

NEVER = (0, 0)


def runs(rng, lo, hi):
    """Sorted, non-overlapping state batches within lo..hi, with holes."""
    out, offset = [], lo
    while offset <= hi:
        length = rng.randint(1, 6)
        if rng.random() < 0.7:
            out.append((offset, min(offset + length - 1, hi), rng.choice([0, 2, 4]), rng.randint(0, 3)))
        offset += length + rng.choice([0, 0, 0, 1, 3])
    return out


def model(batches, start, lo=0, hi=60):
    """offset -> (state, count) at or past `start`; offsets in no batch are never delivered."""
    states = {o: NEVER for o in range(max(lo, start), hi + 1)}
    for first, last, state, count in batches:
        for o in range(max(first, start), last + 1):
            states[o] = (state, count)
    return states


def well_formed(batches):
    assert batches == sorted(batches)
    for (_, last, *a), (first, _, *b) in zip(batches, batches[1:]):
        assert last < first, f"overlapping: {batches}"
        assert not (last + 1 == first and a == b), f"not joined: {batches}"


@pytest.mark.parametrize("seed", range(300))
def test_combine_lays_newer_batches_over_the_state_and_drops_what_is_below_the_start(seed):
    rng = random.Random(seed)
    old, newer = runs(rng, 0, 50), runs(rng, rng.randint(0, 30), 60)
    start = rng.choice([0, rng.randint(0, 40)])
    expected = model(old, start)
    for o, st in model(newer, start).items():
        if any(f <= o <= last for f, last, *_ in newer):
            expected[o] = st
    got = formats.combine(old, newer, start)
    well_formed(got)
    assert all(last >= start and first >= start for first, last, *_ in got)
    assert model(got, start) == expected


@pytest.mark.parametrize("seed", range(300))
def test_an_update_of_what_changed_replays_to_the_state_now(seed):
    rng = random.Random(seed)
    written = runs(rng, 0, 50)
    start = rng.choice([0, rng.randint(0, 45)])
    # The state now: mostly the written one with some of it changed, sometimes unrelated.
    now = runs(rng, 0, 60) if rng.random() < 0.3 else formats.combine(written, runs(rng, rng.randint(0, 50), 60), 0)
    delta = formats.changed(written, now, start)
    well_formed(delta)
    assert model(formats.combine(written, delta, start), start) == model(now, start)
    if model(written, start) == model(now, start):
        assert delta == []


def test_snapshot_and_update_records_round_trip_with_kafkas_key_types():
    key = SharePartitionKey("workers", uuid.uuid4(), 7)
    snapshot = ShareSnapshot(3, 0, 100, ((100, 109, 2, 1), (110, 110, 0, 2)))
    update = ShareUpdate(3, 105, ((110, 110, 4, 3),))
    assert formats.key(key)[:2] == b"\x00\x00" and formats.update_key(key)[:2] == b"\x00\x01"
    assert formats.parse_key(formats.key(key)) == (formats.SHARE_SNAPSHOT, key)
    assert formats.parse_key(formats.update_key(key)) == (formats.SHARE_UPDATE, key)
    assert formats.parse_value(formats.value(snapshot)) == snapshot
    assert formats.parse_update(formats.update_value(update)) == update
