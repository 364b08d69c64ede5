"""The nemesis: seeded fault schedules against a running broker or simulated cluster
(docs/nemesis.md). schedule.py plans (pure: the same seed, the same faults), runner.py applies a
plan and heals; both doors (`POST /api/v1/nemesis`, `TrafkaBroker.nemesis`) go through
trafka.broker.testcontrol.endpoints."""
