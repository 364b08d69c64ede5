"""CLI polish: `trafka dump-log ... | head` ends quietly, as Unix tools do."""

import subprocess
import sys

from kafka import KafkaProducer


def test_dump_log_piped_to_head_ends_without_broken_pipe(broker):
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers, linger_ms=0)
    for i in range(300):
        producer.send("piped", value=b"v" * 200, partition=0)
    producer.flush()
    producer.close()
    segment = next((broker.data_dir / "piped-0").glob("*.log"))
    # Far more than a pipe buffer of output, so the writer is still writing when head exits.
    files = " ".join([str(segment)] * 20)
    result = subprocess.run(f"'{sys.executable}' -m trafka dump-log --print-data-log {files} | head -n 3",
                            shell=True, capture_output=True, text=True, timeout=120)
    assert result.stdout.splitlines()[0] == f"Dumping {segment}"
    assert len(result.stdout.splitlines()) == 3
    assert result.stderr == ""
