"""`trafka healthcheck`: the container image's HEALTHCHECK, against a live and a dead port."""

import socket
import subprocess
import sys

from trafka.healthcheck import api_versions


def test_healthy_broker_answers_api_versions(trafka_broker):
    keys = {key for key, _, _ in api_versions("127.0.0.1", trafka_broker.port)}
    assert {0, 1, 3, 18} <= keys  # Produce, Fetch, Metadata, ApiVersions
    res = subprocess.run([sys.executable, "-m", "trafka", "healthcheck", "--port", str(trafka_broker.port)],
                         capture_output=True, text=True, timeout=30)
    assert res.returncode == 0 and res.stdout.startswith("healthy:"), res


def test_nothing_listening_is_unhealthy():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: connections are refused
        res = subprocess.run([sys.executable, "-m", "trafka.healthcheck", "--port", str(port), "--timeout", "2"],
                             capture_output=True, text=True, timeout=30)
    assert res.returncode == 1 and "unhealthy" in res.stderr
