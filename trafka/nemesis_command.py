"""`trafka nemesis`: run a seeded fault schedule on a broker started with `trafka serve`, through
its console's control endpoint (POST /api/v1/nemesis), and print each fault as it happens.

    trafka nemesis --seed 7 --duration 30 --faults stop,kill,leader --max-down 1
    trafka nemesis --status        # the running (or last) nemesis
    trafka nemesis --stop          # stop it and heal

Ctrl-C stops the nemesis (it heals) before the command ends. Exit status: 0 when the run ended,
2 when the broker refused the settings (the reason is printed), 1 when it could not be reached.
"""

from __future__ import annotations

import json
import sys
import time

from trafka.broker.testcontrol.nemesis.schedule import KINDS


def add_arguments(parser) -> None:
    parser.add_argument("--console", default="http://127.0.0.1:9644",
                        help="the broker's console URL (default http://127.0.0.1:9644)")
    parser.add_argument("--seed", type=int, help="the schedule's seed: the same seed, the same faults")
    parser.add_argument("--duration", type=float, help="seconds of faults")
    parser.add_argument("--faults", default="", help=f"comma-separated kinds (default: all the broker can take): {', '.join(KINDS)}")
    parser.add_argument("--max-down", type=int, default=1, help="most brokers down at once (default 1)")
    parser.add_argument("--status", action="store_true", help="print the running (or last) nemesis and exit")
    parser.add_argument("--stop", action="store_true", help="stop the running nemesis (it heals) and exit")


class Refused(Exception):
    """The broker answered 4xx: the message says why."""


def _call(console: str, method: str, body=None) -> dict:
    # Imported here: the parser `trafka serve` builds reads this module, and urllib.request
    # brings http.client and email (~15 ms of every start).
    import urllib.error
    import urllib.request

    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(console.rstrip("/") + "/api/v1/nemesis", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read()).get("error", exc.reason)
        except ValueError:
            message = exc.reason
        raise Refused(f"{exc.code}: {message}") from None


def _line(event: dict) -> str:
    stamp = time.strftime("%H:%M:%S", time.localtime(event["wall_time_ms"] / 1000))
    return f"{stamp} +{event['at_ms'] / 1000:6.2f}s  {event['kind']:<8} {event['target'] or '-':<28} {event['result']}"


def _follow(console: str, report: dict) -> dict:
    shown = 0
    while True:
        for event in report["events"][shown:]:
            print(_line(event), flush=True)
        shown = len(report["events"])
        if report["state"] != "running":
            return report
        time.sleep(0.2)
        report = _call(console, "GET")


def run(args) -> int:
    try:
        if args.status:
            print(json.dumps(_call(args.console, "GET"), indent=1))
            return 0
        if args.stop:
            report = _call(args.console, "DELETE")
            print(f"nemesis {report['state']}; healed: {', '.join(report['healed']) or 'nothing'}")
            return 0
        if args.seed is None or args.duration is None:
            print("trafka nemesis: --seed and --duration are needed to start one", file=sys.stderr)
            return 2
        faults = [k.strip() for k in args.faults.split(",") if k.strip()]
        report = _call(args.console, "POST", {"seed": args.seed, "duration_s": args.duration, "faults": faults,
                                              "max_down": args.max_down})
        print(f"nemesis seed {args.seed}: {report['planned']} faults planned over {args.duration:g} s", flush=True)
        try:
            report = _follow(args.console, report)
        except KeyboardInterrupt:
            report = _call(args.console, "DELETE")
        print(f"nemesis {report['state']}; healed: {', '.join(report['healed']) or 'nothing'}")
        return 0
    except Refused as refused:
        print(f"trafka nemesis: the broker refused: {refused}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"trafka nemesis: cannot reach {args.console}: {exc}", file=sys.stderr)
        return 1
