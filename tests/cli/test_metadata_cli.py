"""`trafka metadata --data-dir DIR` on a directory without a metadata log: one line, exit 1."""

import subprocess
import sys


def test_no_metadata_log_is_one_line(tmp_path):
    (tmp_path / "producer_ids").write_text("1000\n")  # an older trafka's data dir
    result = subprocess.run([sys.executable, "-m", "trafka", "metadata", "--data-dir", str(tmp_path)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "no metadata log" in result.stderr and "Traceback" not in result.stderr
