"""The REST proxy's listener (rest.proxy.port): started by `trafka serve` (named in its
"listening" line), by TrafkaBroker in a child process or in process on a free port kept across
restarts, off with -1, and a taken port given explicitly is one clear line."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest
import requests

from trafka.testing import TrafkaBroker


@pytest.mark.parametrize("in_process", [True, False], ids=["in-process", "child-process"])
def test_the_proxy_listens_on_a_free_port_and_keeps_it(tmp_path, in_process):
    with TrafkaBroker(data_dir=tmp_path / "data", in_process=in_process) as broker:
        first = broker.rest_proxy_url
        assert first.startswith("http://127.0.0.1:") and first != broker.schema_registry_url
        assert requests.get(first + "brokers", timeout=10).json() == {"brokers": [0]}
        broker.restart()
        assert broker.rest_proxy_url == first
        assert requests.get(first + "v3/clusters", timeout=10).status_code == 200


def test_minus_one_turns_it_off(tmp_path):
    with TrafkaBroker(data_dir=tmp_path / "data", config={"rest.proxy.port": -1}, in_process=True) as broker:
        assert broker.rest_proxy_url is None


def test_serve_names_it_and_a_taken_port_is_one_clear_line(tmp_path):
    args = [sys.executable, "-m", "trafka", "serve", "--port", "0", "--data-dir", str(tmp_path / "data"),
            "--config", "console.port=-1", "--config", "schema.registry.port=-1"]
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = subprocess.Popen(args + ["--config", f"rest.proxy.port={port}"], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        out, err = process.communicate(timeout=60)
    assert process.returncode == 1
    assert err.strip().splitlines()[-1] == (
        f"trafka: cannot listen on 127.0.0.1:{port} for the REST proxy (rest.proxy.port): Address already in use")

    process = subprocess.Popen(args + ["--config", "rest.proxy.port=0"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        assert "; REST proxy at http://127.0.0.1:" in line, line
        url = line.split("REST proxy at ", 1)[1].split(";")[0].strip()
        assert requests.get(url + "topics", timeout=10).status_code == 200
    finally:
        process.terminate()
        process.communicate(timeout=30)
