"""The pytest plugin, as a user's suite sees it: pytester runs a separate pytest in a
subprocess, with the plugin loaded only through its `trafka` entry point."""

from __future__ import annotations

import json
import os

import pytest

from trafka.testing.waiting import wait_until

pytest_plugins = ["pytester"]

pytestmark = pytest.mark.timeout(300)

USER_SUITE = '''
import json, os, time
from kafka import KafkaProducer, KafkaConsumer, TopicPartition

RECORD = os.environ["TRAFKA_PLUGIN_RECORD"]

def note(**kw):
    with open(RECORD, "a") as f:
        f.write(json.dumps(kw) + "\\n")

def roundtrip(bootstrap, topic):
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    producer.send(topic, b"x").get(timeout=15)
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest")
    consumer.assign([TopicPartition(topic, 0)])
    values, deadline = [], time.monotonic() + 15
    while not values and time.monotonic() < deadline:
        values += [r.value for rs in consumer.poll(timeout_ms=500).values() for r in rs]
    # and whatever else the partition holds (it would have come with the first)
    values += [r.value for rs in consumer.poll(timeout_ms=300).values() for r in rs]
    consumer.close()
    return values

def test_one(trafka_broker, trafka_session_broker, trafka_topic):
    note(test="one", broker=trafka_broker.process.pid, session=trafka_session_broker.process.pid,
         topic=trafka_topic, config=trafka_broker.config)
    assert roundtrip(trafka_broker.bootstrap_servers, trafka_topic) == [b"x"]
    assert roundtrip(trafka_session_broker.bootstrap_servers, trafka_topic) == [b"x"]

def test_two(trafka_broker, trafka_session_broker, trafka_topic):
    note(test="two", broker=trafka_broker.process.pid, session=trafka_session_broker.process.pid,
         topic=trafka_topic, config=trafka_broker.config)
    # a fresh per-test broker: the topic test_one wrote is not here
    assert trafka_broker.bootstrap_servers != ""
    assert roundtrip(trafka_session_broker.bootstrap_servers, trafka_topic) == [b"x"]
'''


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is not running; it only waits for its (gone) parent's reaping.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


def run_suite(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, list[dict]]:
    pytester.makepyfile(test_user=USER_SUITE)
    record = pytester.path / "record.jsonl"
    os.environ["TRAFKA_PLUGIN_RECORD"] = str(record)
    try:
        # No -p trafka: the plugin must come from the installed entry point.
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q", *args, timeout=240)
    finally:
        del os.environ["TRAFKA_PLUGIN_RECORD"]
    notes = [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
    return result, notes


def test_fixtures_through_the_entry_point_scopes_and_no_leftover_process(pytester):
    result, notes = run_suite(pytester)
    result.assert_outcomes(passed=2)
    one, two = notes
    assert one["broker"] != two["broker"], "trafka_broker must be a new broker for each test"
    assert one["session"] == two["session"], "trafka_session_broker must be shared by the session"
    assert one["topic"] != two["topic"] and one["topic"].startswith("test_one-")
    pids = {one["broker"], two["broker"], one["session"]}
    wait_until(lambda: not any(alive(p) for p in pids), 5, "every broker process to end with the pytest session")


def test_trafka_config_from_command_line_ini_and_marker(pytester):
    pytester.makeini("[pytest]\ntrafka_config =\n    num.partitions=2\n    log.retention.ms=60000\n")
    pytester.makepyfile(test_cfg='''
import pytest

def test_defaults(trafka_broker, trafka_session_broker):
    assert trafka_broker.config == {"num.partitions": "4", "log.retention.ms": "60000"}
    assert trafka_session_broker.config == trafka_broker.config

@pytest.mark.trafka_config({"num.partitions": 7})
def test_marker(trafka_broker):
    assert trafka_broker.config["num.partitions"] == 7
''')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q", "--trafka-config", "num.partitions=4", timeout=240)
    result.assert_outcomes(passed=2)


def test_bad_trafka_config_is_a_usage_error(pytester):
    pytester.makepyfile(test_x="def test_x(): pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--trafka-config", "oops", timeout=120)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*trafka config must be NAME=VALUE*"])


def test_broker_that_fails_to_start_is_reported(pytester):
    pytester.makepyfile(test_x="def test_x(trafka_broker): pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--trafka-config", "no.such.setting=1", timeout=120)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*broker did not start*"])


def test_in_process_brokers_from_the_fixture_and_the_setting(pytester):
    pytester.makepyfile(test_inproc='''
def test_fixture(trafka_inprocess_broker, trafka_broker):
    assert trafka_inprocess_broker.in_process and trafka_inprocess_broker.process is None
    assert trafka_broker.in_process  # --trafka-in-process
    trafka_inprocess_broker.advance_clock(1000)
    assert trafka_inprocess_broker.clock()["offset_ms"] == 1000
    with trafka_broker.inject_fault("Metadata", delay_ms=10):
        assert len(trafka_broker.faults()) == 1
    assert trafka_broker.faults() == []
''')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q", "--trafka-in-process", timeout=120)
    result.assert_outcomes(passed=1)
