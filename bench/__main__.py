"""`python -m bench [--quick] [--only NAME] [--brokers trafka,tansu,noida-db]`

Each workload runs against trafka and each reference broker in the same run; the table shows
absolute numbers and trafka / reference. Results also go to bench/results.json, and a plot
to docs/performance.png when matplotlib is installed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from bench import protocol, work_queue, workloads
from bench.brokers import STARTERS

HIGHER_IS_BETTER = ("msgs_per_s",)


def _workloads(quick: bool):
    scale = 10 if quick else 1
    return {
        "confluent 1M x 100B, 1 partition": lambda b: workloads.confluent_throughput(b, 1_000_000 // scale, 100, 1),
        "confluent 1M x 100B, 8 partitions": lambda b: workloads.confluent_throughput(b, 1_000_000 // scale, 100, 8),
        # The same with max.partition.fetch.bytes at 8 MiB: Tansu answers up to ~4.8 MB per
        # partition whatever the client's 1 MiB limit says, trafka keeps to the limit as Kafka
        # does; with a limit both keep to, the row shows what each broker can feed.
        "confluent 1M x 100B, 8 partitions, 8 MiB partition fetches": lambda b: workloads.confluent_throughput(
            b, 1_000_000 // scale, 100, 8, partition_fetch_bytes=8 * 1024 * 1024),
        # librdkafka stops fetching a partition for fetch.queue.backoff.ms (1 s) whenever its
        # queue holds queued.min.messages (100,000): with the defaults the two rows above
        # measure that pause more than either broker (docs/performance.md). Without it:
        **{f"confluent 1M x 100B, {n}, fetch.queue.backoff.ms=0": (lambda b, parts=parts: workloads.confluent_throughput(
            b, 1_000_000 // scale, 100, parts, **{"fetch.queue.backoff.ms": 0}))
           for n, parts in (("1 partition", 1), ("8 partitions", 8))},
        "confluent 10k x 100KB, 1 partition": lambda b: workloads.confluent_throughput(b, 10_000 // scale, 100_000, 1),
        "kafka-python 100k x 100B": lambda b: workloads.kafka_python_throughput(b, 100_000 // scale, 100),
        "latency, 200 msg/s": lambda b: workloads.latency(b, 1000 // scale, 200),
        # Issue #26's tail: acks=all, one record a millisecond, p99.9 over 10,000 records.
        "latency, 1,000 msg/s": lambda b: workloads.latency(b, 10_000 // scale, 1000),
        "small requests, 16 conns x 8 pipelined": lambda b: protocol.small_requests(b, 5.0 if not quick else 2.0),
        "fetch 64 KB: tiny batches vs one batch": lambda b: protocol.fetch_tiny_batches(b),
        "1,000 idle connections": lambda b: protocol.idle_connections(b),
        "5,000 partitions": lambda b: protocol.many_partitions(b),
        # Issue #35: a share group as a work queue beside a consumer group reading the same records.
        "work queue: 4 share consumers, 200k x 100B, 1 partition": lambda b: work_queue.work_queue(b, 200_000 // scale, 4),
        # Issue #44: the same queue beside 2,000 share-partitions that exist and hold nothing.
        "work queue beside 2,000 idle share-partitions": lambda b: work_queue.work_queue_beside_idle(b, 100_000 // scale, 4, 2000),
        # Issue #26: one consumer of each client reading many partitions.
        **{f"wide read: {client}, {n} partitions": (lambda b, c=client, n=n: workloads.wide_read(b, c, n, 400_000 // scale))
           for client in ("confluent-kafka", "kafka-python", "aiokafka", "confluent-kafka, fetch.queue.backoff.ms=0")
           for n in (8, 32, 100)},
    }


def run(broker_names: list[str], only: str | None, quick: bool) -> dict:
    results: dict = {"started": time.strftime("%Y-%m-%dT%H:%M:%S"), "quick": quick, "brokers": {}}
    for name in broker_names:
        broker = STARTERS[name]()
        if broker is None:
            print(f"# {name}: not installed (pip install '.[bench]'), skipped", file=sys.stderr)
            continue
        entry = {"startup_s": broker.started_in, "idle_rss_mb": broker.rss_mb(), "notes": broker.notes, "workloads": {}}
        try:
            for title, workload in _workloads(quick).items():
                if only and only not in title:
                    continue
                print(f"# {name}: {title}", file=sys.stderr, flush=True)
                try:
                    entry["workloads"][title] = workload(broker)
                except Exception as exc:  # a reference broker failing one workload is a result too
                    entry["workloads"][title] = {"error": f"{type(exc).__name__}: {exc}"}
        finally:
            broker.stop()
        results["brokers"][name] = entry
    return results


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"
    return str(value)


def print_table(results: dict) -> None:
    brokers = results["brokers"]
    if "trafka" not in brokers:
        return
    refs = [n for n in brokers if n != "trafka"]
    header = ["metric", "trafka"] + [f"{r} | trafka/{r}" for r in refs]
    rows = [header]
    for metric in ("startup_s", "idle_rss_mb"):
        rows.append([metric, _fmt(brokers["trafka"][metric])] + [f"{_fmt(brokers[r][metric])} | {_ratio(brokers['trafka'][metric], brokers[r][metric])}" for r in refs])
    for title, values in brokers["trafka"]["workloads"].items():
        for metric, value in values.items():
            cells = [f"{title}: {metric}", _fmt(value)]
            for r in refs:
                other = brokers[r]["workloads"].get(title, {})
                cells.append(f"{_fmt(other.get(metric, other.get('error', '-')))} | {_ratio(value, other.get(metric))}")
            rows.append(cells)
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(header))]
    for row in rows:
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)))


def _ratio(ours, theirs) -> str:
    if not isinstance(ours, (int, float)) or not isinstance(theirs, (int, float)) or not theirs:
        return "-"
    return f"{ours / theirs:.2f}x"


def plot(results: dict, path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("# matplotlib not installed: no plot", file=sys.stderr)
        return
    brokers = results["brokers"]
    titles = [t for t, v in brokers.get("trafka", {}).get("workloads", {}).items() if "produce_msgs_per_s" in v]
    fig, axes = plt.subplots(1, 3, figsize=(17, 4.8))
    _plot_protocol(axes[2], brokers)
    for ax, metric in zip(axes, ("produce_msgs_per_s", "consume_msgs_per_s")):
        width = 0.8 / max(1, len(brokers))
        for i, (name, entry) in enumerate(brokers.items()):
            values = [entry["workloads"].get(t, {}).get(metric, 0) or 0 for t in titles]
            ax.bar([x + i * width for x in range(len(titles))], values, width, label=name)
        ax.set_xticks([x + width * (len(brokers) - 1) / 2 for x in range(len(titles))])
        ax.set_xticklabels([t.replace(", ", "\n") for t in titles], fontsize=7)
        ax.set_title(metric.replace("_", " "))
        ax.set_yscale("log")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"# plot written to {path}", file=sys.stderr)


# Protocol-level rows (bench/protocol.py), higher is better after the sign below.
_PROTOCOL_BARS = (
    ("small requests, 16 conns x 8 pipelined", "produce_req_per_s", 1, "Produce req/s"),
    ("small requests, 16 conns x 8 pipelined", "metadata_req_per_s", 1, "Metadata req/s"),
    ("fetch 64 KB: tiny batches vs one batch", "tiny_batches_fetch_ms", -1, "64 KB fetch of\ntiny batches"),
    ("5,000 partitions", "create_5000_partitions_s", -1, "create 5,000\npartitions"),
    ("5,000 partitions", "full_metadata_first_ms", -1, "full Metadata\n(uncached)"),
)


def _plot_protocol(ax, brokers: dict) -> None:
    """trafka / Tansu on the protocol workloads, as 'times better' (>1 is trafka ahead)."""
    ours, theirs = brokers.get("trafka", {}).get("workloads", {}), brokers.get("tansu", {}).get("workloads", {})
    labels, values = [], []
    for title, metric, sign, label in _PROTOCOL_BARS:
        a, b = ours.get(title, {}).get(metric), theirs.get(title, {}).get(metric)
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a and b:
            labels.append(label)
            values.append(a / b if sign > 0 else b / a)
    ax.bar(range(len(values)), values, color=["tab:blue" if v >= 1 else "tab:red" for v in values])
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(values)))
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_yscale("log")
    ax.set_title("trafka vs Tansu, same run (x better; >1 = trafka ahead)")


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--brokers", default="trafka,tansu,noida-db")
    parser.add_argument("--only", help="run only workloads whose title contains this")
    parser.add_argument("--quick", action="store_true", help="a tenth of the message counts")
    parser.add_argument("--out", default="bench/results.json")
    parser.add_argument("--plot", default="docs/performance.png")
    args = parser.parse_args()
    results = run(args.brokers.split(","), args.only, args.quick)
    Path(args.out).write_text(json.dumps(results, indent=2))
    print_table(results)
    if args.plot:
        plot(results, Path(args.plot))
    return 0


if __name__ == "__main__":
    sys.exit(main())
