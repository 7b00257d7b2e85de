#!/usr/bin/env python3
"""How many connections does a server deserve? `braid bench` against a local nginx, next to what physics predicts.

Scenarios (all on loopback, with nginx on a free port and a sparse file that costs no disk):

  capped   nginx `limit_rate RATE` per connection. Throughput should grow as n x RATE until the machine itself
           (measured first, unthrottled) is the limit: the curve flattens at about ceiling / RATE connections.
  limited  the same cap, and `limit_conn` allowing CONN_LIMIT connections per client: extra connections are
           turned away with 503, so the curve flattens at CONN_LIMIT whatever the machine can do.
  netem    the same cap inside a network namespace whose loopback has `tc netem` latency and a link rate: the
           curve flattens at LINK / RATE connections. Needs root and the sch_netem kernel module; skipped with a
           message otherwise.

Predictions take nginx's burst into account. Its formula, `limit = rate * (elapsed + 1) - sent`, suggests each
request may send a second's worth of bytes at full speed, but nginx 1.22 also waits (bytes sent) / rate after
every send, so in practice a request gets only about one `sendfile_max_chunk` (2 MiB) ahead: measured here with
curl at limit_rate 25m, 10 MiB took 0.32 s and 25 MiB 0.97 s (0.40 s and 1.00 s at exactly 25 MiB/s). `--burst`
sets the figure the model uses.

The default 2016 MiB per run is 32 ranges of 63 MiB (the engine plans ranges of at most 64 MiB), so every count
up to 32 gets an equal whole number of ranges per connection and no count pays for an uneven tail.

Usage: Benchmarks/bench_curve.py [--scenarios capped,limited,netem] [--quick] [--out DIR] ...
(see --help and Benchmarks/README.md, "The connection curve").
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Location, MiB, log  # noqa: E402
from harness import format_rate as rate  # noqa: E402

SCENARIOS = ("capped", "limited", "netem")


class Namespace:
    """A network namespace whose loopback has netem latency and a link rate; `prefix` runs a command in it."""

    def __init__(self, delay_ms, link_rate):
        self.name = f"braid-curve-{os.getpid()}"
        self.delay_ms = delay_ms
        self.link_rate = link_rate
        self.created = False

    @property
    def prefix(self):
        return ["ip", "netns", "exec", self.name]

    def unavailable(self):
        """Why the namespace cannot be made here, or None once it is up."""
        if os.geteuid() != 0:
            return "it needs root (ip netns, tc)"
        if not shutil.which("ip") or not shutil.which("tc"):
            return "ip or tc (iproute2) is not installed"
        steps = [
            ["ip", "netns", "add", self.name],
            self.prefix + ["ip", "link", "set", "lo", "up"],
            # netem on lo delays every packet once: the round trip is twice the delay.
            self.prefix + ["tc", "qdisc", "add", "dev", "lo", "root", "netem",
                           "delay", f"{self.delay_ms / 2:g}ms", "rate", f"{self.link_rate * 8}bit"],
        ]
        for step in steps:
            result = subprocess.run(step, capture_output=True, text=True)
            if step[:3] == ["ip", "netns", "add"] and result.returncode == 0:
                self.created = True
            if result.returncode != 0:
                self.remove()
                return f"'{' '.join(step)}' failed: {result.stderr.strip() or result.returncode}"
        return None

    def remove(self):
        if self.created:
            subprocess.run(["ip", "netns", "delete", self.name], capture_output=True)
            self.created = False


def predicted(n, per_connection, byte_limit, ceiling, burst, conn_limit=None, rtt=0.0):
    """Bytes per second physics allows n connections fetching byte_limit together.

    Each connection runs at `per_connection` after a head start of `burst` bytes; at most `conn_limit` run at
    once; all of them together at most `ceiling`; each run costs about four round trips (probe, connect,
    request).
    """
    active = min(n, conn_limit) if conn_limit else n
    share = byte_limit / active
    throttled = max(share - burst, 0) / per_connection
    seconds = max(throttled, byte_limit / ceiling) + 4 * rtt
    return byte_limit / seconds


def bench(work, braid, url, counts, repeat, byte_limit, discard, svg, prefix=()):
    """Runs `braid bench --json` (progress shown on this terminal) and returns its report."""
    extra = (["--discard"] if discard else []) + (["--svg", svg] if svg else [])
    try:
        return harness.braid_bench(work.children, braid, url, counts, repeat, byte_limit, extra, prefix, quiet=False)
    except harness.BenchFailed as failure:
        raise SystemExit(str(failure)) from None


def report(title, result, model, knee):
    log()
    print(f"## {title}")
    print()
    rows = []
    for row in result["results"]:
        n = row["connections"]
        expected = model(n)
        rows.append([n, rate(row["medianBytesPerSecond"]), rate(row["minBytesPerSecond"]),
                     rate(row["maxBytesPerSecond"]), f"{row['speedUp']:.2f}x", rate(expected),
                     f"{row['medianBytesPerSecond'] / expected:.2f}"])
    harness.print_table(["connections", "median", "min", "max", "speed-up", "predicted", "measured / predicted"],
                        rows, markdown=True, align="rrrrrrr")
    print()
    print(f"Physics: the curve should flatten at about {knee}. "
          f"braid recommends {result['recommendedConnections']}: {result['recommendation']['reason']}")
    print(flush=True)


def nginx(work, name, per_connection, conn_limit, prefix=()):
    """nginx serving the sparse file at /file.bin, /capped/ (per-connection rate) and /limited/ (also limit_conn)."""
    root = work.document_root
    return work.nginx([Location.directory("capped", root, rate=per_connection),
                       Location.conn_limited("limited", root, conn_limit, rate=per_connection)],
                      name=name, prefix=prefix)


def save(result, out, name):
    with open(os.path.join(out, f"{name}.json"), "w") as file:
        json.dump(result, file, indent=2)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--braid", default=None, help="the braid binary (default: .build/release/braid)")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS), help="comma-separated: capped,limited,netem")
    parser.add_argument("--rate", default="25M", help="nginx limit_rate per connection (default 25M)")
    parser.add_argument("--connections", default="1,2,4,8,16,32,64", help="counts to compare (1,2,4,8,16,32,64)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per count (default 3)")
    parser.add_argument("--bytes", default="2016M", help="bytes per run (default 2016M: 32 ranges of 63 MiB)")
    parser.add_argument("--burst", default="2M", help="bytes nginx sends ahead of its rate per request (2M)")
    parser.add_argument("--conn-limit", type=int, default=8, help="connections per client in 'limited' (8)")
    parser.add_argument("--delay-ms", type=float, default=20, help="round-trip time added by netem (20 ms)")
    parser.add_argument("--link-rate", default="200M", help="netem link rate in bytes/s (default 200M)")
    parser.add_argument("--discard", action="store_true", help="pass --discard: measure the network path only")
    parser.add_argument("--quick", action="store_true", help="1008 MiB per run, 1 run, counts 1,4,16: a smoke run")
    parser.add_argument("--out", default=None, help="directory for each scenario's JSON and SVG")
    args = parser.parse_args(argv)

    braid = harness.require_executable(args.braid or harness.built("braid"), "braid")
    harness.require_executable(harness.nginx.NGINX)
    scenarios = [name for name in args.scenarios.split(",") if name]
    for name in scenarios:
        if name not in SCENARIOS:
            raise SystemExit(f"unknown scenario {name}; choose from {', '.join(SCENARIOS)}")
    counts = [int(count) for count in args.connections.split(",")]
    repeat, byte_limit = args.repeat, harness.parse_size(args.bytes)
    if args.quick:
        counts, repeat, byte_limit = [1, 4, 16], 1, 1008 * MiB
    per_connection, link = harness.parse_size(args.rate), harness.parse_size(args.link_rate)
    burst = harness.parse_size(args.burst)

    # Without --out, the results stay in the work directory, which is then kept (less its sparse file).
    work = harness.Workspace("braid-curve-", keep=None if args.out else tempfile.mkdtemp(prefix="braid-curve-"))
    out = os.path.abspath(args.out or work.path("results"))
    os.makedirs(out, exist_ok=True)
    namespace = None
    with work:
        # A sparse file: nginx reads its holes as zeros from the page cache, and no disk space is spent.
        os.makedirs(work.document_root, exist_ok=True)
        harness.sparse_file(os.path.join(work.document_root, "file.bin"), byte_limit)
        work.scratch("www")
        log(f"braid: {braid}")
        log(f"{len(counts)} counts x {repeat} runs x {byte_limit / MiB:g} MiB per run; results in {out}")
        try:
            if {"capped", "limited"} & set(scenarios):
                server = nginx(work, "nginx", per_connection, args.conn_limit)
                log("measuring the machine's own ceiling (nginx unthrottled, no cap)")
                ceiling_counts = sorted({4, 16, max(counts)})
                ceiling_report = bench(work, braid, server.url("/file.bin"), ceiling_counts, 1, byte_limit,
                                       args.discard, None)
                ceiling = max(row["medianBytesPerSecond"] for row in ceiling_report["results"])
                log(f"ceiling: {rate(ceiling)}")
                if "capped" in scenarios:
                    result = bench(work, braid, server.url("/capped/file.bin"), counts, repeat, byte_limit,
                                   args.discard, os.path.join(out, "capped.svg"))
                    save(result, out, "capped")
                    report(
                        f"capped: nginx limit_rate {rate(per_connection)} per connection, "
                        f"{byte_limit / MiB:g} MiB per run, machine ceiling {rate(ceiling)}",
                        result, lambda n: predicted(n, per_connection, byte_limit, ceiling, burst),
                        f"{ceiling / per_connection:.0f} connections (ceiling / rate)",
                    )
                if "limited" in scenarios:
                    result = bench(work, braid, server.url("/limited/file.bin"), counts, repeat, byte_limit,
                                   args.discard, os.path.join(out, "limited.svg"))
                    save(result, out, "limited")
                    report(
                        f"limited: {rate(per_connection)} per connection, at most {args.conn_limit} connections "
                        f"per client (limit_conn, 503 + Retry-After beyond)",
                        result,
                        lambda n: predicted(n, per_connection, byte_limit, ceiling, burst, conn_limit=args.conn_limit),
                        f"{args.conn_limit} connections (limit_conn)",
                    )
                server.stop()
            if "netem" in scenarios:
                namespace = Namespace(args.delay_ms, link)
                reason = namespace.unavailable()
                if reason:
                    log(f"netem: skipped: {reason}")
                    print(f"## netem\n\nskipped: {reason}\n", flush=True)
                else:
                    shaped = nginx(work, "nginx-netem", per_connection, args.conn_limit, prefix=namespace.prefix)
                    result = bench(work, braid, shaped.url("/capped/file.bin"), counts, repeat, byte_limit,
                                   args.discard, os.path.join(out, "netem.svg"), prefix=namespace.prefix)
                    shaped.stop()
                    save(result, out, "netem")
                    report(
                        f"netem: {rate(per_connection)} per connection, {args.delay_ms:g} ms round trip, "
                        f"link {rate(link)}",
                        result,
                        lambda n: predicted(n, per_connection, byte_limit, link, burst, rtt=args.delay_ms / 1000),
                        f"{link / per_connection:.0f} connections (link / rate)",
                    )
        finally:
            if namespace:
                namespace.remove()
    if not args.out:
        log(f"results kept in {out}")
    return 0


if __name__ == "__main__":
    harness.main(main)
