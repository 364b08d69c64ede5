"""The console's HTTP listener: console.port, the health route, a taken port, -1 = off."""

import json
import socket
import subprocess
import sys
import urllib.request

import pytest

from trafka.testing import TrafkaBroker


def get_json(url: str):
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, json.loads(response.read())


@pytest.mark.parametrize("in_process", [True, False], ids=["in-process", "child-process"])
def test_console_listens_on_a_free_port_beside_the_kafka_port(tmp_path, in_process):
    with TrafkaBroker(data_dir=tmp_path / "data", in_process=in_process) as broker:
        assert broker.console_url.startswith("http://127.0.0.1:")
        status, body = get_json(broker.console_url + "health")
        assert status == 200
        assert body["status"] == "ok"
        assert body["kafka"] == broker.bootstrap_servers


def test_console_keeps_its_port_across_a_restart(tmp_path):
    with TrafkaBroker(data_dir=tmp_path / "data", in_process=True) as broker:
        first = broker.console_url
        broker.restart()
        assert broker.console_url == first
        assert get_json(first + "api/v1/health")[0] == 200


def test_console_port_minus_one_turns_it_off(tmp_path):
    with TrafkaBroker(data_dir=tmp_path / "data", config={"console.port": -1}, in_process=True) as broker:
        assert broker.console_url is None


def _serve(tmp_path, *config):
    args = [sys.executable, "-m", "trafka", "serve", "--port", "0", "--data-dir", str(tmp_path / "data")]
    for item in config:
        args += ["--config", item]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_taken_console_port_is_one_clear_line(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = _serve(tmp_path, f"console.port={port}")
        out, err = process.communicate(timeout=60)
    assert process.returncode == 1
    assert err.strip().splitlines()[-1] == (
        f"trafka: cannot listen on 127.0.0.1:{port} for the console (console.port): Address already in use")
    assert "Traceback" not in err


def test_serve_prints_the_console_url(tmp_path):
    process = _serve(tmp_path, "console.port=0")
    try:
        line = process.stdout.readline()
        assert "trafka listening on 127.0.0.1:" in line
        url = line.split("console at ", 1)[1].split(";")[0].strip()
        assert get_json(url + "health")[1]["status"] == "ok"
    finally:
        process.terminate()
        process.communicate(timeout=30)
    assert process.returncode == 0


@pytest.mark.parametrize("value", ["70000", "-2", "abc"])
def test_a_bad_console_port_is_refused_at_start(tmp_path, value):
    process = _serve(tmp_path, f"console.port={value}")
    _, err = process.communicate(timeout=60)
    assert process.returncode == 2
    assert "invalid value for console.port" in err


def test_serve_stops_promptly_with_a_live_page_open(tmp_path):
    """An open server-sent-event stream (a browser tab) does not hold up SIGTERM."""
    import signal
    import time

    process = _serve(tmp_path, "console.port=0")
    try:
        url = process.stdout.readline().split("console at ", 1)[1].split(";")[0].strip()
        stream = urllib.request.urlopen(url + "api/v1/stream/cluster", timeout=10)
        assert stream.readline().startswith(b"data: {")
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
        assert time.monotonic() - started < 8
        assert process.returncode == 0
        stream.close()
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
