"""`python -m bench.replication [--count N]`: acks=all produce to a replicated topic (replication
factor 3, min.insync.replicas 2) on a simulated cluster of three brokers, beside the same
produce to a replication factor 1 topic on one broker, on this machine in the same run (issue
#23's goal: at least half the RF 1 rate). A simulated cluster is a test harness, not a way to
scale: its three brokers share one process and its cores.

Three interleaved rounds each; the median is printed, with the ratio RF 3 / RF 1.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time

from bench.brokers import _spawn, free_port
from bench.workloads import produce_all

ROUNDS = 3


def start(brokers: int):
    port, data_dir = free_port(), tempfile.mkdtemp(prefix=f"bench-trafka-{brokers}-")
    argv = [sys.executable, "-m", "trafka", "serve", "--host", "127.0.0.1", "--port", str(port), "--data-dir", data_dir,
            "--log-level", "WARNING", "--config", "console.port=-1", "--config", "schema.registry.port=-1",
            "--config", f"cluster.brokers={brokers}"]
    return _spawn(f"trafka x{brokers}", argv, port, data_dir)


def produce_rate(broker, replication: int, count: int, size: int = 100, partitions: int = 3) -> float:
    """acks=all, idempotent, confluent-kafka: messages a second until every one is acknowledged."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = f"replicated-{replication}-{time.monotonic_ns()}"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    configs = {"min.insync.replicas": "2"} if replication > 1 else {}
    admin.create_topics([NewTopic(topic, partitions, replication, config=configs)])[topic].result(30)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "acks": "all", "enable.idempotence": True,
                         "linger.ms": 5})
    payload = b"x" * size
    producer.produce(topic, payload)  # connections and metadata before the clock starts
    producer.flush(30)
    started = time.perf_counter()
    produce_all(producer, topic, payload, count, partitions)
    return count / (time.perf_counter() - started)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.replication")
    parser.add_argument("--count", type=int, default=300_000)
    args = parser.parse_args(argv)
    single, cluster = start(1), start(3)
    rates: dict[str, list[float]] = {"RF 1, one broker": [], "RF 3, three brokers": []}
    try:
        for _ in range(ROUNDS):
            rates["RF 1, one broker"].append(produce_rate(single, 1, args.count))
            rates["RF 3, three brokers"].append(produce_rate(cluster, 3, args.count))
    finally:
        single.stop()
        cluster.stop()
    one, three = (statistics.median(v) for v in rates.values())
    print(f"acks=all produce, {args.count:,} x 100 B, confluent-kafka, median of {ROUNDS} interleaved rounds")
    for name, values in rates.items():
        print(f"  {name:22} {statistics.median(values):>10,.0f} msg/s   ({', '.join(f'{v:,.0f}' for v in values)})")
    print(f"  RF 3 / RF 1: {three / one:.2f}x (goal: at least 0.50x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
