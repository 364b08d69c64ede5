"""A broker that cannot start says why in one line, without a traceback."""

import socket
import subprocess
import sys


def test_a_taken_port_is_one_clear_line(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "trafka", "serve", "--port", str(port), "--data-dir", str(tmp_path / "data")],
            capture_output=True, text=True, timeout=60,
        )
    assert result.returncode == 1
    assert f"trafka: cannot listen on 127.0.0.1:{port}: Address already in use" in result.stderr
    assert "Traceback" not in result.stderr
