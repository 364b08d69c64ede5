"""The nemesis planner alone (trafka/broker/testcontrol/nemesis/schedule.py): a pure function of its settings,
that never has more brokers down than allowed, and refuses what it cannot do."""

from __future__ import annotations

import pytest

from trafka.broker.testcontrol.nemesis.schedule import ANY_BROKER_KINDS, DOWN_KINDS, KINDS, Settings, plan


def test_the_same_seed_gives_the_same_plan_and_another_seed_another():
    settings = Settings(7, 60.0)
    assert plan(settings, 3) == plan(Settings(7, 60.0), 3)
    assert plan(Settings(8, 60.0), 3) != plan(settings, 3)


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("max_down", [0, 1, 2])
def test_never_more_brokers_down_than_allowed_and_every_one_recovers(seed, max_down):
    steps = plan(Settings(seed, 120.0, max_down=max_down), 3)
    down: dict[int, int] = {}  # broker -> recovery time
    for step in steps:
        assert 0 < step.at_ms < 120_000
        for broker, until in list(down.items()):
            if until <= step.at_ms and step.kind not in ("start", "rejoin"):
                del down[broker]
        if step.kind in ("stop", "kill", "bounce", "isolate"):
            down[step.broker] = 1 << 62
        elif step.kind == "fence":
            assert down.get(step.broker) == 1 << 62, (seed, step)  # fenced only while isolated
        elif step.kind in ("start", "rejoin"):
            assert step.broker in down
            down.pop(step.broker)
        elif step.kind == "down":
            down[step.broker] = step.at_ms + step.params["down_ms"]
        assert len(down) <= max_down, (seed, step)
    assert not [b for b, until in down.items() if until == 1 << 62], "a stopped broker is never started"
    kinds = {step.kind for step in steps}
    assert kinds & set(DOWN_KINDS) if max_down else not kinds & set(DOWN_KINDS)


def test_a_single_broker_gets_only_the_faults_it_can_take():
    steps = plan(Settings(1, 120.0), 1)
    assert {s.kind for s in steps} <= set(ANY_BROKER_KINDS)
    with pytest.raises(ValueError, match="need a simulated cluster"):
        plan(Settings(1, 10.0, ("stop",)), 1)


@pytest.mark.parametrize("body, message", [
    ([], "JSON object"),
    ({"seed": 1, "duration_s": 5, "speed": 2}, "unknown nemesis field"),
    ({"seed": "7", "duration_s": 5}, "seed must be an integer"),
    ({"seed": True, "duration_s": 5}, "seed must be an integer"),
    ({"seed": 1}, "duration_s must be"),
    ({"seed": 1, "duration_s": -1}, "duration_s must be"),
    ({"seed": 1, "duration_s": 5, "faults": "stop"}, "faults must be a list"),
    ({"seed": 1, "duration_s": 5, "faults": ["meteor"]}, "unknown fault kind"),
    ({"seed": 1, "duration_s": 5, "max_down": -1}, "max_down must be"),
])
def test_bad_settings_say_what_is_wrong(body, message):
    with pytest.raises(ValueError, match=message):
        Settings.parse(body)


def test_only_the_kinds_asked_for_are_planned():
    steps = plan(Settings(3, 60.0, ("leader", "clock")), 3)
    assert steps and {s.kind for s in steps} <= {"leader", "clock"}
    assert set(KINDS) >= {s.kind for s in plan(Settings(3, 60.0), 3)} - {"start", "resume", "fence", "rejoin", "mend"}


def test_an_isolated_broker_is_fenced_after_the_session_timeout_and_rejoins():
    steps = plan(Settings(5, 120.0, ("isolate",), session_timeout_ms=2000), 3)
    isolated = [s for s in steps if s.kind == "isolate"]
    assert isolated
    for step in isolated:
        fence = next((s for s in steps if s.kind == "fence" and s.broker == step.broker and s.at_ms > step.at_ms), None)
        rejoin = next(s for s in steps if s.kind == "rejoin" and s.broker == step.broker and s.at_ms > step.at_ms)
        if fence is not None and fence.at_ms < rejoin.at_ms:
            assert fence.at_ms == step.at_ms + 2000
