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

Usage: Benchmarks/bench-curve/bench-curve.py [--scenarios capped,limited,netem] [--quick] [--out DIR] ...
(see --help and Benchmarks/bench-curve/README.md).
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

MiB = 1 << 20
GiB = 1 << 30
NGINX = "/usr/sbin/nginx"
SCENARIOS = ("capped", "limited", "netem")
PROXY_VARIABLES = {"http_proxy", "https_proxy", "all_proxy", "no_proxy", "ftp_proxy"}


def parse_size(text):
    """'64M', '1G', '512K', '25m' or a plain byte count."""
    units = {"K": 1 << 10, "M": MiB, "G": GiB, "T": 1 << 40}
    text = text.strip().upper().removesuffix("IB").removesuffix("B")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def rate(bytes_per_second):
    for unit, name in ((GiB, "GiB/s"), (MiB, "MiB/s"), (1 << 10, "KiB/s")):
        if bytes_per_second >= unit:
            return f"{bytes_per_second / unit:.1f} {name}"
    return f"{bytes_per_second:.0f} B/s"


def log(message=""):
    print(message, file=sys.stderr, flush=True)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def environment():
    """The children's environment: no proxy may take loopback traffic elsewhere."""
    return {key: value for key, value in os.environ.items() if key.lower() not in PROXY_VARIABLES}


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


class Nginx:
    """nginx on a free 127.0.0.1 port serving `root` at /capped/ and /limited/ (and unthrottled at /)."""

    def __init__(self, directory, root, rate_limit, conn_limit, prefix=()):
        self.directory = directory
        self.root = root
        self.rate_limit = rate_limit
        self.conn_limit = conn_limit
        self.prefix = list(prefix)
        self.process = None
        self.port = None

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def config(self):
        d = self.directory
        lines = [
            "daemon off;",
            "worker_processes auto;",
            f'pid "{d}/nginx.pid";',
            f'error_log "{d}/error.log" notice;',
            "events { worker_connections 4096; }",
            "http {",
            "    default_type application/octet-stream;",
            "    types {}",
            "    sendfile on;",
            "    tcp_nopush on;",
            "    keepalive_requests 100000;",
            "    access_log off;",
            "    limit_conn_zone $binary_remote_addr zone=perclient:1m;",
            "    limit_conn_status 503;",
        ]
        if os.geteuid() == 0:
            lines.insert(0, "user root;")
        for temp in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
            lines.append(f'    {temp}_temp_path "{d}/{temp}";')
        lines += [
            "    server {",
            f"        listen 127.0.0.1:{self.port};",
            f'        root "{self.root}";',
            "        location = /.ready { return 204; }",
            f'        location ^~ /capped/ {{ alias "{self.root}/"; limit_rate {self.rate_limit}; }}',
            f'        location ^~ /limited/ {{ alias "{self.root}/"; limit_rate {self.rate_limit}; '
            f"limit_conn perclient {self.conn_limit}; add_header Retry-After 1 always; }}",
            "    }",
            "}",
        ]
        return "\n".join(lines) + "\n"

    def start(self):
        for _ in range(5):
            self.port = free_port()
            config = os.path.join(self.directory, "nginx.conf")
            with open(config, "w") as file:
                file.write(self.config())
            self.process = subprocess.Popen(
                self.prefix + [NGINX, "-p", self.directory, "-c", config, "-e", f"{self.directory}/error.log"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            )
            if self.wait_until_ready():
                return
            self.stop()
        raise SystemExit(f"nginx did not start; see {self.directory}/error.log")

    def wait_until_ready(self, timeout=10.0):
        """Polls with curl (run where nginx runs, maybe in the namespace) until nginx answers 204."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            result = subprocess.run(
                self.prefix + ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", self.url("/.ready")],
                capture_output=True, text=True, env=environment(),
            )
            if result.stdout == "204":
                return True
            time.sleep(0.05)
        return False

    def stop(self):
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def bench(braid, url, counts, repeat, byte_limit, discard, svg, prefix=()):
    """Runs `braid bench --json` (progress shown on this terminal) and returns its report."""
    argv = list(prefix) + [braid, "bench", url, "--connections", ",".join(map(str, counts)),
                           "--repeat", str(repeat), "--bytes", str(byte_limit), "--json"]
    if discard:
        argv.append("--discard")
    if svg:
        argv += ["--svg", svg]
    log("$ " + " ".join(argv))
    result = subprocess.run(argv, stdout=subprocess.PIPE, env=environment())
    if result.returncode != 0:
        raise SystemExit(f"braid bench failed with exit status {result.returncode}")
    return json.loads(result.stdout)


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


def report(title, result, model, knee):
    log()
    print(f"## {title}")
    print()
    print("| connections | median | min | max | speed-up | predicted | measured / predicted |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for row in result["results"]:
        n = row["connections"]
        expected = model(n)
        print(f"| {n} | {rate(row['medianBytesPerSecond'])} | {rate(row['minBytesPerSecond'])} | "
              f"{rate(row['maxBytesPerSecond'])} | {row['speedUp']:.2f}x | {rate(expected)} | "
              f"{row['medianBytesPerSecond'] / expected:.2f} |")
    print()
    print(f"Physics: the curve should flatten at about {knee}. "
          f"braid recommends {result['recommendedConnections']}: {result['recommendation']['reason']}")
    print(flush=True)


def main():
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
    args = parser.parse_args()

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    braid = os.path.abspath(args.braid or os.path.join(root, ".build", "release", "braid"))
    if not os.access(braid, os.X_OK):
        raise SystemExit(f"{braid} not found: run `swift build -c release --product braid` first, or pass --braid")
    if not os.access(NGINX, os.X_OK):
        raise SystemExit(f"{NGINX} not found: install nginx-light (scripts/install-deps)")
    scenarios = [name for name in args.scenarios.split(",") if name]
    for name in scenarios:
        if name not in SCENARIOS:
            raise SystemExit(f"unknown scenario {name}; choose from {', '.join(SCENARIOS)}")
    counts = [int(count) for count in args.connections.split(",")]
    repeat, byte_limit = args.repeat, parse_size(args.bytes)
    if args.quick:
        counts, repeat, byte_limit = [1, 4, 16], 1, 1008 * MiB
    per_connection, link, burst = parse_size(args.rate), parse_size(args.link_rate), parse_size(args.burst)

    work = tempfile.mkdtemp(prefix="braid-curve-")
    out = os.path.abspath(args.out or os.path.join(work, "results"))
    os.makedirs(out, exist_ok=True)
    www = os.path.join(work, "www")
    os.makedirs(www)
    # A sparse file: nginx reads its holes as zeros from the page cache, and no disk space is spent.
    with open(os.path.join(www, "file.bin"), "wb") as file:
        file.truncate(byte_limit)
    nginx = Nginx(os.path.join(work, "nginx"), www, per_connection, args.conn_limit)
    os.makedirs(nginx.directory)
    namespace = None
    try:
        log(f"braid: {braid}")
        log(f"{len(counts)} counts x {repeat} runs x {byte_limit / MiB:g} MiB per run; results in {out}")
        if {"capped", "limited"} & set(scenarios):
            nginx.start()
            log("measuring the machine's own ceiling (nginx unthrottled, no cap)")
            ceiling_counts = sorted({4, 16, max(counts)})
            ceiling_report = bench(braid, nginx.url("/file.bin"), ceiling_counts, 1, byte_limit, args.discard, None)
            ceiling = max(row["medianBytesPerSecond"] for row in ceiling_report["results"])
            log(f"ceiling: {rate(ceiling)}")
            if "capped" in scenarios:
                result = bench(braid, nginx.url("/capped/file.bin"), counts, repeat, byte_limit, args.discard,
                               os.path.join(out, "capped.svg"))
                with open(os.path.join(out, "capped.json"), "w") as file:
                    json.dump(result, file, indent=2)
                report(
                    f"capped: nginx limit_rate {rate(per_connection)} per connection, "
                    f"{byte_limit / MiB:g} MiB per run, machine ceiling {rate(ceiling)}",
                    result, lambda n: predicted(n, per_connection, byte_limit, ceiling, burst),
                    f"{ceiling / per_connection:.0f} connections (ceiling / rate)",
                )
            if "limited" in scenarios:
                result = bench(braid, nginx.url("/limited/file.bin"), counts, repeat, byte_limit, args.discard,
                               os.path.join(out, "limited.svg"))
                with open(os.path.join(out, "limited.json"), "w") as file:
                    json.dump(result, file, indent=2)
                report(
                    f"limited: {rate(per_connection)} per connection, at most {args.conn_limit} connections "
                    f"per client (limit_conn, 503 + Retry-After beyond)",
                    result,
                    lambda n: predicted(n, per_connection, byte_limit, ceiling, burst, conn_limit=args.conn_limit),
                    f"{args.conn_limit} connections (limit_conn)",
                )
            nginx.stop()
        if "netem" in scenarios:
            namespace = Namespace(args.delay_ms, link)
            reason = namespace.unavailable()
            if reason:
                log(f"netem: skipped: {reason}")
                print(f"## netem\n\nskipped: {reason}\n", flush=True)
            else:
                shaped = Nginx(os.path.join(work, "nginx-netem"), www, per_connection, args.conn_limit,
                               prefix=namespace.prefix)
                os.makedirs(shaped.directory)
                shaped.start()
                try:
                    result = bench(braid, shaped.url("/capped/file.bin"), counts, repeat, byte_limit,
                                   args.discard, os.path.join(out, "netem.svg"), prefix=namespace.prefix)
                finally:
                    shaped.stop()
                with open(os.path.join(out, "netem.json"), "w") as file:
                    json.dump(result, file, indent=2)
                report(
                    f"netem: {rate(per_connection)} per connection, {args.delay_ms:g} ms round trip, "
                    f"link {rate(link)}",
                    result,
                    lambda n: predicted(n, per_connection, byte_limit, link, burst, rtt=args.delay_ms / 1000),
                    f"{link / per_connection:.0f} connections (link / rate)",
                )
    finally:
        nginx.stop()
        if namespace:
            namespace.remove()
        shutil.rmtree(os.path.join(work, "www"), ignore_errors=True)
        if args.out:
            shutil.rmtree(work, ignore_errors=True)
        else:
            log(f"results kept in {out}")


if __name__ == "__main__":
    main()
