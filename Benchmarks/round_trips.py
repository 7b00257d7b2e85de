#!/usr/bin/env python3
"""Every round trip counts (issue 29): `braid -n auto` against `-n 8`, braid's default, aria2c and axel, on near and
far servers, with what each download cost the server in requests, connections and waiting for first bytes.

Eight profiles, each side by side in one run, the tools alternating, `--no-fsync` for braid, median of 5:

1. paced:       nginx, `limit_rate 25m` per connection, strictly paced (`sendfile_max_chunk 64k`), 1 GiB;
2. limited:     nginx, `limit_conn 8` (503 with `Retry-After: 1` beyond) and the same paced 25m, 256 MiB;
3. unthrottled: nginx, 1 GiB;
4. capped:      the test server, 40 MiB/s for all connections together, 256 MiB;
5. far40:       the test server, 25 MiB/s per connection and 40 ms before every response's first byte, 1 GiB;
6. far150:      the same with 150 ms;
7. moto:        moto's S3 server (PyPI), 64 MiB;
8. rangehttp:   RangeHTTPServer (PyPI), 64 MiB.

Tools: `braid -n auto --no-server-stats` (cold), `braid -n 8`, `braid` with its default count (cold too: a fresh
XDG_STATE_HOME each run), `aria2c -x16 -s16`, `axel -n 16`. Every run is verified against the source's MD5.

What the server logged is the measurement: requests and refusals (429, 5xx), connections open at once (a connection
is open from its first request read to its last response's end), the time to the download's first byte (the first
GET answered 200 or 206 sent its first byte) from the command's start, and the share of connection time spent
waiting for first bytes (per connection, its requests' time from read to first byte over its time open; all
connections together). All clocks are CLOCK_REALTIME on this machine. nginx logs no first-byte time; serving a file
it answers at once, so its waiting share is 0 by construction.

Verdicts (issue 29's rule for making auto the default, and its far-server goals): on every profile auto >= 0.95 x
`-n 8`'s throughput, >= 1.5 x where a per-connection cap makes more connections pay (paced, far40, far150); auto
refused no more often than `-n 8`; auto above 4 connections for at most 1 s against the capped server; auto's and the
default's time to first byte no later than aria2c's; waiting share under 0.1 on far40 and far150 (auto, -n 8, the
default); there, the default's wall time <= 0.9 x the best of axel's and aria2c's, with at most twice axel's requests.

Usage: Benchmarks/round_trips.py [--quick] [--only paced,far150|1,6] [--repeat 5] [--tools ...] [--markdown]
All traffic stays on 127.0.0.1; every server and child is stopped on exit. Exit status 1 when a verdict fails.
"""

import argparse
import json
import os
import shlex
import shutil
import statistics
import sys
from dataclasses import dataclass, field

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import GiB, Location, MiB, Verdict, format_size, log, peers, python_servers  # noqa: E402

TOOLS = ("auto", "n8", "default", "aria2c", "axel")
PEERS = ("aria2c", "axel")
EXECUTABLES = {"aria2c": "aria2c", "axel": "axel"}
# One seed for every test-server profile, so that one reference download per size gives the digest.
TEST_SERVER_SEED = 7


@dataclass
class Profile:
    number: int
    key: str
    size_option: str  # which size option sets its size
    per_connection_cap: bool = False  # more connections pay: auto must reach 1.5 x -n 8
    capped: bool = False  # the server's total rate is capped: auto at most 4 connections
    far: bool = False  # far-server goals: waiting share, the default against axel and aria2c


PROFILES = [
    Profile(1, "paced", "size", per_connection_cap=True),
    Profile(2, "limited", "limited_size"),
    Profile(3, "unthrottled", "size"),
    Profile(4, "capped", "capped_size", capped=True),
    Profile(5, "far40", "size", per_connection_cap=True, far=True),
    Profile(6, "far150", "size", per_connection_cap=True, far=True),
    Profile(7, "moto", "expensive_size"),
    Profile(8, "rangehttp", "expensive_size"),
]
CAPPED_CONNECTIONS = 4  # auto's most against the capped server ...
CAPPED_GRACE = 1.0  # ... for more than this many seconds in all


# MARK: What a run says


@dataclass
class Measured:
    """One run's figures, from the server's log and braid's --json events."""

    ttfb: float = None  # seconds from the command's start to the download's first byte sent
    peak: int = 0  # connections open at once, at most
    above_cap: float = 0.0  # seconds with more than CAPPED_CONNECTIONS open
    waiting: float = None  # share of connection time spent waiting for first bytes
    settled: object = None  # braid's done event's `connections` (None for a fixed count)


def measured(run):
    """The figures of a verified run; requests the server read before the command started are not its own."""
    timings = [timing for timing in run.timings or [] if timing.received >= run.started]
    first = harness.first_body_byte(timings)
    figures = Measured(ttfb=None if first is None else first - run.started, waiting=harness.waiting_share(timings))
    if run.sockets is not None:  # the kernel's count of the server's connections
        figures.peak, figures.above_cap = run.sockets.peak(), run.sockets.seconds_above(CAPPED_CONNECTIONS)
    else:  # the log's: from each connection's first request (or accept) to its last response's end
        figures.peak = harness.peak_connections(timings)
        figures.above_cap = harness.seconds_above(timings, CAPPED_CONNECTIONS)
    for line in run.stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("event") == "done":
            figures.settled = event.get("connections")
    return figures


@dataclass
class Row:
    """A profile's outcome: its jobs by tool, and the verdicts."""

    profile: Profile
    title: str = ""
    size: int = 0
    jobs: dict = field(default_factory=dict)  # tool -> harness.Job
    verdicts: list = field(default_factory=list)
    skipped: str = ""

    def figures(self, tool):
        job = self.jobs.get(tool)
        return [measured(run) for run in job.successes()] if job else []

    def median(self, tool, metric="wall"):
        return harness.median(self.jobs.get(tool), metric)

    def median_figure(self, tool, name):
        values = [getattr(figure, name) for figure in self.figures(tool) if getattr(figure, name) is not None]
        return statistics.median(values) if values else None

    def worst_figure(self, tool, name):
        values = [getattr(figure, name) for figure in self.figures(tool) if getattr(figure, name) is not None]
        return max(values) if values else None

    def rate(self, tool):
        wall = self.median(tool)
        return self.size / wall if wall else None

    def refusals(self, tool):
        """Refusals over every run of `tool`, verified or not (a refused download may fail)."""
        job = self.jobs.get(tool)
        return sum(run.refusals for run in job.runs) if job else None


# MARK: The servers and the tools


class Bench:
    def __init__(self, options, work):
        self.options = options
        self.work = work
        self.nginx = None
        self.nginx_files = {}
        self.state = work.scratch("braid-state")  # braid's XDG_STATE_HOME, emptied before each braid run

    def nginx_source(self, profile, size):
        options, root = self.options, self.work.document_root
        if self.nginx is None:
            self.nginx = self.work.nginx([
                Location.directory("paced", root, rate=options.rate, paced=True),
                Location.conn_limited("limited", root, options.conn_limit, rate=options.rate, paced=True),
            ])
        name = f"file-{size}.bin"
        if name not in self.nginx_files:
            self.nginx_files[name] = self.work.file(name, size)
        path = {"paced": f"/paced/{name}", "limited": f"/limited/{name}", "unthrottled": f"/{name}"}[profile.key]
        return self.nginx.source(path, size, self.nginx_files[name])

    def source(self, profile, size):
        """The profile's server, started; returns (Source, its title, a function that stops it or None)."""
        options = self.options
        rate = format_size(options.rate)
        if profile.key in ("paced", "limited", "unthrottled"):
            title = {"paced": f"nginx limit_rate {rate}/s per connection, paced",
                     "limited": f"nginx limit_conn {options.conn_limit} (503, Retry-After 1), {rate}/s per "
                                "connection, paced",
                     "unthrottled": "nginx unthrottled"}[profile.key]
            return self.nginx_source(profile, size), title, None
        if profile.key in ("capped", "far40", "far150"):
            if profile.key == "capped":
                faults = [f"total-throttle={options.total_rate}"]
                title = f"test server, {format_size(options.total_rate)}/s for all connections together"
            else:
                latency = options.latency if profile.key == "far40" else options.far_latency
                faults = [f"throttle={options.rate}", f"latency={latency}"]
                title = f"test server, {rate}/s per connection, {latency * 1000:.0f} ms before every first byte"
            server = self.work.test_server(options.test_server, size, seed=TEST_SERVER_SEED, faults=faults)
            return server.source(), title, server.stop
        if profile.key == "moto":
            return python_servers.moto_s3(self.work, size), "moto S3 (Python, a thread per connection)", None
        return python_servers.range_http_server(self.work, size), "RangeHTTPServer (Python, HTTP/1.0)", None

    def braid(self, label, *arguments):
        """braid with `arguments`, --json and --braid-args, in an empty XDG_STATE_HOME (it remembers nothing)."""
        options, state = self.options, self.state

        def command(url, output, cacert):
            harness.empty_directory(state)
            return ["env", f"XDG_STATE_HOME={state}", options.braid, url, "-o", output, *arguments,
                    *options.braid_args, "--json", *(["--cacert", cacert] if cacert else [])]

        return peers.Tool(label, command)

    def tools(self):
        made = {
            "auto": lambda: self.braid("braid -n auto (cold)", "-n", "auto", "--no-server-stats"),
            "n8": lambda: self.braid("braid -n 8", "-n", "8"),
            "default": lambda: self.braid("braid (default)"),
            "aria2c": lambda: peers.aria2c("-x16", "-s16"),
            "axel": lambda: peers.axel(16),
        }
        return {tool: made[tool]() for tool in self.options.tools}

    def profile(self, profile):
        size = getattr(self.options, profile.size_option)
        row = Row(profile, size=size)
        try:
            source, row.title, stop = self.source(profile, size)
        except ModuleNotFoundError as error:
            row.title, row.skipped = profile.key, f"{error}; run scripts/install-deps"
            return row
        row.title += f", {format_size(size)}"
        try:
            tools = self.tools()
            row.jobs = {tool: made.job(source) for tool, made in tools.items()}
            runner = self.work.runner(timeout=lambda size: 60 + 4 * size / MiB, rss=False,
                                      sample_connections=self.options.sample_interval)
            runner.alternate(list(row.jobs.values()), self.options.repeat, profile.key)
        finally:
            if stop:
                stop()
        row.verdicts = verdicts(row)
        return row


# MARK: Verdicts


def verdicts(row):
    profile, found = row.profile, []
    auto, fixed = row.rate("auto"), row.rate("n8")
    if "auto" in row.jobs and "n8" in row.jobs:
        minimum = 1.5 if profile.per_connection_cap else 0.95
        found.append(harness.ratio_verdict("auto / -n 8 throughput", harness.ratio(auto, fixed), minimum, ">="))
        auto_refused, fixed_refused = row.refusals("auto"), row.refusals("n8")
        found.append(Verdict(f"auto refused {auto_refused} times, -n 8 {fixed_refused} (target: no more)",
                             "PASS" if auto_refused <= fixed_refused else "FAIL"))
    if profile.capped and "auto" in row.jobs:
        found.append(harness.ratio_verdict(f"auto: seconds above {CAPPED_CONNECTIONS} connections, worst run",
                                           row.worst_figure("auto", "above_cap"), CAPPED_GRACE))
    if "aria2c" in row.jobs:
        peer_ttfb = row.median_figure("aria2c", "ttfb")
        for tool in ("auto", "default"):
            if tool in row.jobs:
                value, label = row.median_figure(tool, "ttfb"), row.jobs[tool].label
                found.append(milliseconds_verdict(f"{label}: time to first byte", value, peer_ttfb, "aria2c's"))
    if profile.far:
        for tool in ("auto", "n8", "default"):
            if tool in row.jobs:
                share = row.median_figure(tool, "waiting")
                found.append(Verdict(f"{row.jobs[tool].label}: waiting share = {share:.3f} (target <= 0.100)",
                                     "PASS" if share <= 0.1 else "FAIL") if share is not None
                             else Verdict(f"{row.jobs[tool].label}: waiting share: not measured", "N/A"))
        peer_jobs = [row.jobs[tool] for tool in PEERS if tool in row.jobs]
        peer, peer_wall = harness.best(peer_jobs)
        if "default" in row.jobs and peer_jobs:
            found.append(harness.ratio_verdict(f"braid (default) wall / best peer's ({peer.label if peer else '-'})",
                                               harness.ratio(row.median("default"), peer_wall), 0.9))
        if "default" in row.jobs and "axel" in row.jobs:
            found.append(harness.ratio_verdict("braid (default) requests / axel's",
                                               harness.ratio(row.median("default", "requests"),
                                                             row.median("axel", "requests")), 2.0))
    return found


def milliseconds_verdict(name, value, limit, whose):
    """`value` seconds at most `limit` seconds (`whose`), shown in milliseconds."""
    if value is None or limit is None:
        return Verdict(f"{name}: not measured", "N/A")
    return Verdict(f"{name} = {value * 1000:.1f} ms (target <= {limit * 1000:.1f} ms, {whose})",
                   "PASS" if value <= limit else "FAIL")


# MARK: Tables


def number(value, digits=1):
    return "-" if value is None else f"{value:.{digits}f}"


def per_run(row, tool, text):
    job = row.jobs.get(tool)
    return "/".join(text(run) for run in job.runs) if job and job.runs else "-"


def summary_table(rows, markdown):
    header = ["#", "profile", "auto n", "auto req", "auto MiB/s", "-n 8 req", "-n 8 MiB/s", "auto / -n 8",
              "refusals auto", "refusals -n 8", "peak conns auto", "peak conns -n 8"]
    table = []
    for row in rows:
        if row.skipped:
            table.append([row.profile.number, row.profile.key, f"skipped: {row.skipped}"] + [""] * (len(header) - 3))
            continue
        settled = "/".join("-" if figure.settled is None else str(figure.settled) for figure in row.figures("auto"))
        ratio = harness.ratio(row.rate("auto"), row.rate("n8"))
        table.append([
            row.profile.number, row.profile.key, settled or "-",
            number(row.median("auto", "requests"), 0), number(mib(row.rate("auto"))),
            number(row.median("n8", "requests"), 0), number(mib(row.rate("n8"))), number(ratio, 2),
            per_run(row, "auto", lambda run: str(run.refusals)), per_run(row, "n8", lambda run: str(run.refusals)),
            number(row.worst_figure("auto", "peak"), 0), number(row.worst_figure("n8", "peak"), 0),
        ])
    harness.print_table(header, table, markdown, align="rl" + "r" * (len(header) - 2))


def tools_table(rows, markdown):
    header = ["#", "profile", "tool", "ok", "median s", "MiB/s", "requests", "req/GiB", "refused", "peak conns",
              f"s > {CAPPED_CONNECTIONS} conns", "TTFB ms", "waiting", "CPU s"]
    table = []
    for row in rows:
        for tool, job in row.jobs.items():
            wall = row.median(tool)
            requests = row.median(tool, "requests")
            table.append([
                row.profile.number, row.profile.key, job.label, f"{len(job.successes())}/{len(job.runs)}",
                number(wall, 2) if wall else "FAILED", number(mib(row.rate(tool))), number(requests, 0),
                number(requests * GiB / row.size if requests is not None else None, 0),
                number(harness.median(job, "refusals"), 0), number(row.worst_figure(tool, "peak"), 0),
                number(row.worst_figure(tool, "above_cap"), 2), number(milliseconds(row.median_figure(tool, "ttfb"))),
                number(row.median_figure(tool, "waiting"), 2), number(row.median(tool, "cpu"), 2),
            ])
    harness.print_table(header, table, markdown, align="rll" + "r" * (len(header) - 3))


def milliseconds(seconds):
    return None if seconds is None else seconds * 1000


def run_line(job):
    """Each run of `job` in order: wall seconds, requests, TTFB in milliseconds, peak connections."""
    parts = []
    for run in job.runs:
        if not run.ok:
            parts.append("FAILED")
            continue
        figures = measured(run)
        parts.append(f"{run.wall:.2f} s {run.requests} req {number(milliseconds(figures.ttfb), 0)} ms "
                     f"{figures.peak} conns")
    return f"{job.label}, each run: " + "; ".join(parts)


def mib(rate):
    return None if rate is None else rate / MiB


def print_results(rows, options):
    markdown = options.markdown
    print("\n### Auto against -n 8\n" if markdown else "\n== auto against -n 8 ==")
    summary_table(rows, markdown)
    print("\n### Every tool\n" if markdown else "\n== every tool ==")
    tools_table(rows, markdown)
    for row in rows:
        print(f"\n#### {row.profile.number}. {row.profile.key}: {row.title}\n" if markdown
              else f"\n-- {row.profile.number}. {row.profile.key}: {row.title}")
        if row.skipped:
            print(f"skipped: {row.skipped}")
            continue
        harness.print_lines(harness.failures(row.jobs.values()), markdown)
        for tool, job in row.jobs.items():
            print(("- " if markdown else "") + run_line(job))
        for verdict in row.verdicts:
            print(f"- `{verdict.text}` **{verdict.status}**" if markdown else f"{verdict.text} {verdict.status}")


# MARK: Command line


def parse_options(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--braid", default=harness.built("braid"), help="the braid binary (default %(default)s)")
    parser.add_argument("--test-server", default=harness.built("braid-test-server"),
                        help="the braid-test-server binary, for capped, far40 and far150 (default %(default)s)")
    parser.add_argument("--braid-args", default="--no-fsync",
                        help="extra arguments for every braid run (default %(default)r); options whose value "
                             "starts with '-' take it after '='")
    parser.add_argument("--tools", default=",".join(TOOLS), help="comma-separated subset of %(default)s")
    parser.add_argument("--only", default="all",
                        help="profiles by name or number, comma-separated: " + ",".join(
                            f"{profile.number}={profile.key}" for profile in PROFILES) + " (default all)")
    parser.add_argument("--repeat", type=int, help="runs per tool and profile (default 5, 3 with --quick)")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 256 MiB in place of 1 GiB, 64 MiB in place of 256 MiB, 16 MiB for "
                             "moto and RangeHTTPServer, 3 runs")
    parser.add_argument("--size", type=harness.parse_size,
                        help="paced, unthrottled, far40 and far150 (default 1G, 256M with --quick)")
    parser.add_argument("--limited-size", type=harness.parse_size, help="limited (default 256M, 64M with --quick)")
    parser.add_argument("--capped-size", type=harness.parse_size, help="capped (default 256M, 64M with --quick)")
    parser.add_argument("--expensive-size", type=harness.parse_size,
                        help="moto and rangehttp (default 64M, 16M with --quick)")
    parser.add_argument("--rate", type=harness.parse_size, default="25M",
                        help="per-connection rate of paced, limited, far40 and far150 (default 25M)")
    parser.add_argument("--conn-limit", type=int, default=8, help="nginx's limit_conn in limited (default 8)")
    parser.add_argument("--total-rate", type=harness.parse_size, default="40M",
                        help="the test server's rate for all connections together in capped (default 40M)")
    parser.add_argument("--latency", type=float, default=0.04, help="seconds before a first byte in far40 (0.04)")
    parser.add_argument("--far-latency", type=float, default=0.15,
                        help="seconds before a first byte in far150 (0.15)")
    parser.add_argument("--sample-interval", type=float, default=0.005,
                        help="seconds between two counts of the server's open connections (default 0.005); 0 "
                             "counts them from the server's log instead")
    parser.add_argument("--workdir", help="keep the test files and logs here (reused next time) instead of a temp dir")
    parser.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    options = parser.parse_args(argv)

    options.tools = [tool.strip() for tool in options.tools.split(",") if tool.strip()]
    if unknown := set(options.tools) - set(TOOLS):
        parser.error(f"unknown tools {sorted(unknown)}; choose from {','.join(TOOLS)}")
    names = {profile.key: profile for profile in PROFILES} | {str(profile.number): profile for profile in PROFILES}
    wanted = [name.strip() for name in options.only.split(",") if name.strip()]
    if wanted == ["all"]:
        options.profiles = list(PROFILES)
    elif unknown := [name for name in wanted if name not in names]:
        parser.error(f"unknown profiles {unknown}; choose from "
                     + ", ".join(f"{profile.number}={profile.key}" for profile in PROFILES))
    else:
        options.profiles = sorted({names[name].number: names[name] for name in wanted}.values(),
                                  key=lambda profile: profile.number)
    quick = options.quick
    options.repeat = options.repeat or (3 if quick else 5)
    options.size = options.size or (256 * MiB if quick else GiB)
    options.limited_size = options.limited_size or (64 * MiB if quick else 256 * MiB)
    options.capped_size = options.capped_size or (64 * MiB if quick else 256 * MiB)
    options.expensive_size = options.expensive_size or (16 * MiB if quick else 64 * MiB)
    if options.repeat < 1:
        parser.error("--repeat must be at least 1")
    options.braid_args = shlex.split(options.braid_args)
    if options.sample_interval and not harness.sockets.available():
        log("this kernel answers no sock_diag questions: connections are counted from the servers' logs")
        options.sample_interval = 0
    options.sample_interval = options.sample_interval or None
    return options


def check_tools(options):
    keys = {profile.key for profile in options.profiles}
    if {"auto", "n8", "default"} & set(options.tools):
        options.braid = harness.require_executable(options.braid, "braid")
    if keys & {"capped", "far40", "far150"}:
        options.test_server = harness.require_executable(options.test_server, "braid-test-server")
    if keys & {"paced", "limited", "unthrottled"}:
        harness.require_executable(harness.nginx.NGINX)
    for tool in [EXECUTABLES[tool] for tool in options.tools if tool in EXECUTABLES] + ["curl", "openssl", "env"]:
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} not found; install it (scripts/install-deps) or leave it out of --tools")


def main(argv):
    options = parse_options(argv)
    check_tools(options)
    load_at_start = os.getloadavg()
    rows = []
    with harness.Workspace("braid-round-trips.", options.workdir) as work:
        bench = Bench(options, work)
        for profile in options.profiles:
            log(f"profile {profile.number}: {profile.key}")
            rows.append(bench.profile(profile))
    load_at_end = os.getloadavg()
    versions = [[EXECUTABLES[tool], "--version"] for tool in PEERS if tool in options.tools]
    lines = harness.describe(versions + [[harness.nginx.NGINX, "-v"]]) + [
        f"repository at {harness.commit()}; braid: {options.braid}; braid arguments: "
        f"{' '.join(options.braid_args) or '(none)'} --json",
        f"command: {shlex.join(['Benchmarks/round_trips.py', *argv])}",
        f"tools: {','.join(options.tools)}; {options.repeat} runs per tool and profile, alternating",
        "load average (1, 5, 15 min): " + " ".join(f"{value:.2f}" for value in load_at_start) + " at the start, "
        + " ".join(f"{value:.2f}" for value in load_at_end) + " at the end",
    ]
    harness.print_lines(lines, options.markdown)
    print_results(rows, options)
    return 1 if any(verdict.status == "FAIL" for row in rows for verdict in row.verdicts) else 0


if __name__ == "__main__":
    harness.main(main)
