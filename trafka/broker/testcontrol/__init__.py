"""Test control: the broker clock, injected faults, snapshots and the nemesis, as one request API."""
