"""`trafka nemesis` against a broker started as `trafka serve` (a child process with its console):
it starts a seeded run, prints each fault as it happens and ends when the run does; a bad
setting is refused with the broker's reason and exit status 2."""

from __future__ import annotations

import subprocess
import sys

from trafka.testing import TrafkaBroker


def _nemesis(broker, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trafka", "nemesis", "--console", broker.console_url, *args],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def test_trafka_nemesis_runs_a_seeded_schedule_and_prints_each_fault(tmp_path):
    with TrafkaBroker(data_dir=tmp_path / "data") as broker:
        done = _nemesis(broker, "--seed", "4", "--duration", "4", "--faults", "delays,errors,clock")
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        planned = int(lines[0].split(": ")[1].split()[0])
        events = [line for line in lines[1:-1]]
        assert planned >= 2 and len(events) == planned, done.stdout
        assert all(any(kind in line for kind in ("delays", "errors", "clock")) for line in events)
        assert lines[-1].startswith("nemesis done; healed:")
        assert broker.faults() == []  # what it armed and did not fire is gone
        again = _nemesis(broker, "--seed", "4", "--duration", "4", "--faults", "delays,errors,clock")
        strip = lambda out: [line.split(None, 1)[1] for line in out.splitlines()[1:-1]]  # noqa: E731 (without the time)
        assert strip(again.stdout) == strip(done.stdout)  # the same seed: the same faults


def test_trafka_nemesis_refuses_what_the_broker_refuses(tmp_path):
    with TrafkaBroker(data_dir=tmp_path / "data") as broker:
        refused = _nemesis(broker, "--seed", "1", "--duration", "5", "--faults", "kill")
        assert refused.returncode == 2
        assert "need a simulated cluster" in refused.stderr
        status = _nemesis(broker, "--status")
        assert status.returncode == 0 and '"state": "none"' in status.stdout
