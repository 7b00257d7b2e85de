#!/usr/bin/env python3
"""Does `braid -n auto` choose as well as the best fixed count? The profiles of issue 13, side by side in one run.

For profiles 1 to 5 the script finds the best fixed count with `braid bench --json` on the same URL, then runs
`braid -n auto` three times (median), counting the requests and refusals each run cost the server from the
server's own log. Profile 6 compares `braid -n auto` with aria2c on two servers where every request is expensive
(moto's S3 and RangeHTTPServer), alternating the two tools.

1. nginx, `limit_rate` per connection, strictly paced (`sendfile_max_chunk 64k`): >= 0.90 of the best fixed count.
2. nginx, the same cap and `limit_conn 8` answering 503 beyond: <= 8 connections, >= 0.90 of fixed 8, at most
   a handful of refusals per download.
3. nginx unthrottled: >= 0.95 of the best fixed count with <= 8 connections.
4. the test server with one rate for all connections together: <= 4 connections, >= 0.95 of that rate.
5. the test server with a per-connection rate and latency before every response: >= 0.90 of the best fixed count.
6. moto's S3 and RangeHTTPServer: >= 0.90 of aria2c's throughput, requests counted.

Each profile's auto runs come twice. Cold: every run starts with an empty `--server-stats` file, so it knows
nothing of the server (it is the issue's measurement). Warm: the same number of runs after them, with the file the
last cold run left, as a user's next download from the same server starts (`-n auto` remembers the count each
server settled on). The targets are judged on the cold runs and, separately, on the warm ones.

The auto invocation is `--auto-args` (default `-n auto`), so that the script can be tried with a fixed count
(`--auto-args '-n 8'`) where braid has no auto mode. The settled count comes from the `done` event's
`connections` field ('-' when braid does not report one); the peak is the largest `connections` (active) of
the `progress` events.

Usage: Benchmarks/auto_connections.py [--quick] [--only 1,3] [--cold-only] [--braid PATH] [--test-server PATH]
       [--workdir DIR]
All traffic stays on 127.0.0.1; every server and child is stopped on exit. Exit status 1 when a target fails.
"""

import argparse
import importlib.util
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
from dataclasses import dataclass, field

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Location, MiB, Source, format_size, log, peers  # noqa: E402

# "At most a handful of refusals per download" (profile 2).
HANDFUL = 5
# One seed for every test-server profile, so that one reference download gives the digest of all of them.
TEST_SERVER_SEED = 7
# A request line as Python's http.server (RangeHTTPServer) and werkzeug (moto) log it on stderr.
PYTHON_REQUEST = re.compile(rb'"(GET|HEAD) [^"]*" (\d{3})')


def mib(rate):
    return f"{rate / MiB:.1f}" if rate is not None else "-"


# MARK: Servers


def python_status(line):
    match = PYTHON_REQUEST.search(line)
    return int(match.group(2)) if match else None


class Servers:
    """Starts every server a profile needs, on free 127.0.0.1 ports, in `work` (stopped on exit)."""

    def __init__(self, options, work):
        self.options = options
        self.work = work
        self.nginx = None
        self.nginx_md5 = None

    def nginx_server(self, profile):
        """nginx with /paced/ (profile 1), /limited/ (2) and / unthrottled (3), serving one generated file."""
        size, rate, root = self.options.size, self.options.rate, self.work.document_root
        if self.nginx is None:
            self.nginx_md5 = self.work.file("file.bin", size)
            self.nginx = self.work.nginx([
                Location.directory("paced", root, rate=rate, paced=True),
                Location.conn_limited("limited", root, self.options.conn_limit, rate=rate, paced=True),
            ])
            log(f"nginx on 127.0.0.1:{self.nginx.port}, serving {format_size(size)}")
        path = {1: "/paced/file.bin", 2: "/limited/file.bin", 3: "/file.bin"}[profile]
        return self.nginx.source(path, size, self.nginx_md5)

    def test_server(self, name, size, faults):
        """braid-test-server with `faults`, logging every response."""
        server = self.work.test_server(self.options.test_server, size, seed=TEST_SERVER_SEED, faults=faults,
                                       name=name)
        return server, server.source()

    def python_server(self, name, argv, url, size, md5, cwd=None):
        """A Python server (one thread and one connection per request) that logs its requests on stderr."""
        log_path = self.work.path(f"{name}.log")
        with open(log_path, "wb") as stderr:
            self.work.children.popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=stderr)
        harness.wait_for_http(url)
        return log_path

    def range_http_server(self, size):
        """`python3 -m RangeHTTPServer` serving a generated file; one thread and one connection per request."""
        if importlib.util.find_spec("RangeHTTPServer") is None:
            raise ImportError("No module named 'RangeHTTPServer'")
        directory = self.work.path("range-http")
        os.makedirs(directory, exist_ok=True)
        md5 = harness.generate_file(os.path.join(directory, "file.bin"), size)
        port = harness.free_port()
        url = f"http://127.0.0.1:{port}/file.bin"
        log_path = self.python_server("range-http", [sys.executable, "-u", "-m", "RangeHTTPServer", str(port),
                                                     "--bind", "127.0.0.1"], url, size, md5, cwd=directory)
        log(f"RangeHTTPServer: {url}")
        return Source("RangeHTTPServer", url, size, md5, harness.RequestLog(log_path, python_status))

    def moto(self, size):
        """moto's S3 server (`python3 -m moto.server`) with one public object of `size` bytes put by boto3."""
        import boto3  # noqa: PLC0415  (only profile 6 needs it; scripts/install-deps installs it)

        source = self.work.path("moto-object.bin")
        md5 = harness.generate_file(source, size)
        port = harness.free_port()
        endpoint = f"http://127.0.0.1:{port}"
        log_path = self.python_server("moto", [sys.executable, "-u", "-m", "moto.server", "-H", "127.0.0.1", "-p",
                                               str(port)], endpoint + "/", size, md5)
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id="test", aws_secret_access_key="test")
        s3.create_bucket(Bucket="braid")
        with open(source, "rb") as body:
            s3.put_object(Bucket="braid", Key="file.bin", Body=body, ACL="public-read")
        url = f"{endpoint}/braid/file.bin"
        log(f"moto S3: {url}")
        return Source("moto S3", url, size, md5, harness.RequestLog(log_path, python_status))


# MARK: Runs


@dataclass
class Run(harness.Run):
    """A braid download's run, with what its --json events said."""

    settled: object = None  # the done event's `connections`, or None when braid reports none
    peak: int = 0
    reason: str = ""  # the last `reason` of a progress event: why auto last changed its count

    @property
    def connections(self):
        """The settled count when braid reports it, else the peak of active connections."""
        return self.settled if self.settled is not None else self.peak


class Runner:
    def __init__(self, options, work):
        self.options = options
        self.work = work
        # Two minutes, and four more seconds per MiB: a download slower than 256 KiB/s here is broken.
        self.runner = work.runner(timeout=lambda size: 120 + 4 * size / MiB, rss=False)
        self.temp = work.scratch("bench-temp")
        # What auto remembers of the servers: emptied before each cold run, kept for the warm ones.
        self.stats = work.path("server-stats.json")

    def forget_servers(self):
        if os.path.exists(self.stats):
            os.unlink(self.stats)

    def braid_auto(self, server, own_clock=True, count_args=None, warm=False):
        """`braid URL -n auto` (or `count_args`), timed by its `done` event's `seconds` when `own_clock` (from its
        first request to the verified file, as braid bench times its runs in-process), else by the process's wall
        time. Auto runs cold (what it remembers of servers emptied first) unless `warm`."""
        remembers = []
        if count_args is None and self.options.remembers:
            if not warm:
                self.forget_servers()
            remembers = ["--server-stats", self.stats]
        tool = peers.braid(self.options.braid, *(count_args or self.options.auto_args), *remembers,
                           *self.options.braid_args, "--json")
        run = Run(**vars(self.runner.measure(tool.job(server))))
        for line in run.stdout.splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("event") == "progress":
                run.peak = max(run.peak, event.get("connections", 0))
                run.reason = event.get("reason") or run.reason
            elif event.get("event") == "done":
                run.settled = event.get("connections")
                if own_clock:
                    run.wall = event.get("seconds") or run.wall
        return run

    def aria2c(self, server):
        return self.runner.measure(peers.aria2c(*self.options.aria2_args).job(server))

    def bench(self, server, counts):
        """`braid bench --json` over the whole file: {connections: median bytes/s}, and its recommendation."""
        os.makedirs(self.temp, exist_ok=True)
        offset = server.log.size()
        report = harness.braid_bench(self.work.children, self.options.braid, server.url, counts, self.options.repeat,
                                     "all", ["--temp-dir", self.temp])
        medians = {entry["connections"]: entry["medianBytesPerSecond"] for entry in report["results"]}
        requests, refusals = server.log.requests_since(offset)
        return medians, report.get("recommendedConnections"), requests, refusals


# MARK: Profiles


@dataclass
class Row:
    number: str
    name: str
    target: str
    runs: list = field(default_factory=list)
    warm_runs: list = field(default_factory=list)  # after the cold runs, starting from what the last one learned
    reference_label: str = "-"
    reference_rate: float = None
    reference_requests: str = "-"
    ratio_base: float = None  # what auto's throughput is divided by (the best fixed count, fixed 8, the cap, aria2c)
    # The reference count, also downloaded with `braid -n COUNT` between auto's runs: the same code path as auto's,
    # where braid bench's runs write a sparse temporary file and make one request per connection.
    fixed_count: int = None
    fixed_runs: list = field(default_factory=list)
    checks: list = field(default_factory=list)  # (description, passed), of the cold runs
    warm_checks: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    error: str = ""
    skipped: str = ""

    def good_runs(self):
        return [run for run in self.runs if run.ok]

    def auto_rate(self, size):
        return median_rate(self.runs, size)

    def ratio(self, size, warm=False):
        rate = median_rate(self.warm_runs, size) if warm else self.auto_rate(size)
        return rate / self.ratio_base if rate is not None and self.ratio_base else None

    @property
    def verdict(self):
        return self.judged(self.checks)

    @property
    def warm_verdict(self):
        return self.judged(self.warm_checks) if self.warm_runs or self.skipped or self.error else "-"

    def judged(self, checks):
        if self.skipped:
            return "SKIP"
        if self.error or not checks:
            return "FAIL"
        return "PASS" if all(passed for _, passed in checks) else "FAIL"


def median_rate(runs, size):
    good = [run for run in runs if run.ok]
    return statistics.median(size / run.wall for run in good) if good else None


class Profiles:
    def __init__(self, options, work):
        self.options = options
        self.servers = Servers(options, work)
        self.runner = Runner(options, work)

    def auto_runs(self, row, server, own_clock=True):
        """`braid -n auto` cold, alternating with `braid -n FIXED` when the row has a reference count; then warm."""
        for index in range(self.options.repeat):
            log(f"profile {row.number}: braid {' '.join(self.options.auto_args)}, run {index + 1}")
            row.runs.append(self.runner.braid_auto(server, own_clock=own_clock))
            if row.fixed_count:
                log(f"profile {row.number}: braid -n {row.fixed_count}, run {index + 1}")
                row.fixed_runs.append(self.runner.braid_auto(server, count_args=["-n", str(row.fixed_count)]))
        self.warm_runs(row, server, own_clock)

    def warm_runs(self, row, server, own_clock=True):
        """`braid -n auto` again, from what the last cold run remembered of the server."""
        if not self.options.remembers:
            return
        for index in range(self.options.repeat):
            log(f"profile {row.number}: braid {' '.join(self.options.auto_args)}, warm run {index + 1}")
            row.warm_runs.append(self.runner.braid_auto(server, own_clock=own_clock, warm=True))

    def benched(self, row, server, counts):
        """Runs `braid bench` and notes its medians; returns {count: median bytes/s}."""
        medians, recommended, requests, refusals = self.runner.bench(server, counts)
        curve = ", ".join(f"{count}: {mib(rate)}" for count, rate in sorted(medians.items()))
        row.notes.append(f"braid bench medians, MiB/s by count: {curve}; it recommends {recommended}")
        runs = len(counts) * self.options.repeat
        row.notes.append(f"bench: {requests} requests, {refusals} refused, over {runs} runs and the probe")
        best = max(medians, key=medians.get)
        row.reference_label = f"fixed {best}"
        row.reference_rate = medians[best]
        row.fixed_count = best
        return medians

    def judge_common(self, row, size, minimum, max_connections=None, max_refusals=None):
        """Judges the cold runs into `row.checks` and the warm ones into `row.warm_checks`."""
        for runs, checks, warm in ((row.runs, row.checks, False), (row.warm_runs, row.warm_checks, True)):
            if warm and not runs:
                continue
            ratio = row.ratio(size, warm=warm)
            checks.append((f"ratio >= {minimum:.2f}", ratio is not None and ratio >= minimum))
            if any(not run.ok for run in runs) or not runs:
                checks.append(("every run verified", False))
            if max_connections is not None:
                counts = [run.connections for run in runs]
                checks.append((f"<= {max_connections} connections", bool(counts) and max(counts) <= max_connections))
            if max_refusals is not None:
                worst = max((run.refusals for run in runs), default=0)
                checks.append((f"<= {max_refusals} refusals per download", worst <= max_refusals))

    def profile_1(self):
        rate = format_size(self.options.rate)
        row = Row("1", f"nginx limit_rate {rate}/s per conn, paced", ">= 0.90 of best fixed")
        server = self.servers.nginx_server(1)
        self.benched(row, server, self.options.counts)
        row.ratio_base = row.reference_rate
        self.auto_runs(row, server)
        self.judge_common(row, server.size, 0.90)
        return row, server.size

    def profile_2(self):
        limit = self.options.conn_limit
        rate = format_size(self.options.rate)
        row = Row("2", f"nginx limit_conn {limit} (503), {rate}/s per conn",
                  f">= 0.90 of fixed {limit}, <= {limit} conns, <= {HANDFUL} refusals")
        server = self.servers.nginx_server(2)
        medians = self.benched(row, server, self.options.counts)
        if limit in medians:
            row.reference_label = f"fixed {limit}"
            row.reference_rate = medians[limit]
            row.fixed_count = limit
        else:
            row.notes.append(f"{limit} is not among the counts benched; judged against the best fixed count")
        row.ratio_base = row.reference_rate
        self.auto_runs(row, server)
        self.judge_common(row, server.size, 0.90, max_connections=limit, max_refusals=HANDFUL)
        return row, server.size

    def profile_3(self):
        row = Row("3", "nginx unthrottled", ">= 0.95 of best fixed, <= 8 conns")
        server = self.servers.nginx_server(3)
        self.benched(row, server, self.options.counts)
        row.ratio_base = row.reference_rate
        self.auto_runs(row, server)
        self.judge_common(row, server.size, 0.95, max_connections=8)
        return row, server.size

    def profile_4(self):
        cap = self.options.total_rate
        row = Row("4", f"test server, {format_size(cap)}/s in all", "<= 4 conns, >= 0.95 of the cap")
        process, server = self.servers.test_server("total-throttle", self.options.capped_size,
                                                   [f"total-throttle={cap}"])
        try:
            self.benched(row, server, self.options.capped_counts)
            row.notes.append(f"ratio is auto / the cap ({mib(cap)} MiB/s), not / the best fixed count")
            row.ratio_base = cap
            self.auto_runs(row, server)
            self.judge_common(row, server.size, 0.95, max_connections=4)
        finally:
            process.stop()
        return row, server.size

    def profile_5(self):
        rate, latency = self.options.rate, self.options.latency
        row = Row("5", f"test server, {format_size(rate)}/s per conn, {latency * 1000:.0f} ms per request",
                  ">= 0.90 of best fixed")
        process, server = self.servers.test_server("latency", self.options.size,
                                                   [f"throttle={rate}", f"latency={latency}"])
        try:
            self.benched(row, server, self.options.counts)
            row.ratio_base = row.reference_rate
            self.auto_runs(row, server)
            self.judge_common(row, server.size, 0.90)
        finally:
            process.stop()
        return row, server.size

    def profile_6(self):
        """Two rows: moto and RangeHTTPServer, braid auto and aria2c alternating."""
        size = self.options.expensive_size
        aria2 = "aria2c " + (" ".join(self.options.aria2_args) or "(defaults)")
        rows = []
        for number, start in (("6a", self.servers.moto), ("6b", self.servers.range_http_server)):
            row = Row(number, "", ">= 0.90 of aria2c")
            rows.append((row, size))
            try:
                server = start(size)
            except ImportError as error:
                row.name = "moto S3" if number == "6a" else "RangeHTTPServer"
                row.skipped = f"{error}; run scripts/install-deps"
                continue
            row.name = f"{server.name}, {format_size(size)}"
            aria2_runs = []
            for index in range(self.options.repeat):
                log(f"profile {number}: {aria2}, run {index + 1}")
                aria2_runs.append(self.runner.aria2c(server))
                log(f"profile {number}: braid {' '.join(self.options.auto_args)}, run {index + 1}")
                # Against another process, process against process.
                row.runs.append(self.runner.braid_auto(server, own_clock=False))
            self.warm_runs(row, server, own_clock=False)
            good = [run for run in aria2_runs if run.ok]
            for index, run in enumerate(aria2_runs):
                if not run.ok:
                    row.notes.append(f"aria2c run {index + 1} failed: {run.error}")
            row.reference_label = aria2
            if good:
                row.reference_rate = statistics.median(size / run.wall for run in good)
                row.reference_requests = str(statistics.median_low(run.requests for run in good))
            row.ratio_base = row.reference_rate
            self.judge_common(row, size, 0.90)
        return rows


# MARK: Output


def print_table(rows, options):
    header = ["#", "profile", "auto n", "peak", "requests", "auto MiB/s", "reference", "ref MiB/s", "ref req",
              "ratio", "refusals", "target", "verdict", "warm n", "warm req", "warm MiB/s", "warm ratio",
              "warm refusals", "warm verdict"]
    table = []
    for row, size in rows:
        runs = row.runs
        settled = "/".join("-" if run.settled is None else str(run.settled) for run in runs) or "-"
        peak = "/".join(str(run.peak) for run in runs) or "-"
        requests = "/".join(str(run.requests) for run in runs) or "-"
        refusals = "/".join(str(run.refusals) for run in runs) or "-"
        ratio, warm_ratio = row.ratio(size), row.ratio(size, warm=True)
        warm = row.warm_runs
        table.append([row.number, row.name, settled, peak, requests, mib(row.auto_rate(size)), row.reference_label,
                      mib(row.reference_rate), row.reference_requests, f"{ratio:.2f}" if ratio else "-", refusals,
                      row.target, row.verdict,
                      "/".join("-" if run.settled is None else str(run.settled) for run in warm) or "-",
                      "/".join(str(run.requests) for run in warm) or "-", mib(median_rate(warm, size)),
                      f"{warm_ratio:.2f}" if warm_ratio else "-",
                      "/".join(str(run.refusals) for run in warm) or "-", row.warm_verdict])
    harness.print_table(header, table, options.markdown, align="l" * len(header))
    print()
    for row, size in rows:
        for index, run in enumerate(row.runs, start=1):
            outcome = f"{size / run.wall / MiB:.1f} MiB/s" if run.ok else f"FAILED, {run.error}"
            reason = f"; last reason: {run.reason}" if run.reason else ""
            print(f"{row.number}: auto run {index}: {outcome}, {run.wall:.2f} s{reason}")
        for index, run in enumerate(row.warm_runs, start=1):
            outcome = f"{size / run.wall / MiB:.1f} MiB/s" if run.ok else f"FAILED, {run.error}"
            reason = f"; last reason: {run.reason}" if run.reason else ""
            print(f"{row.number}: warm auto run {index}: {outcome}, {run.wall:.2f} s, peak {run.peak}{reason}")
        if row.fixed_runs:
            rate, auto = median_rate(row.fixed_runs, size), row.auto_rate(size)
            versus = f"; auto / that = {auto / rate:.2f}" if rate and auto else ""
            requests = "/".join(str(run.requests) for run in row.fixed_runs)
            print(f"{row.number}: braid -n {row.fixed_count} downloads between auto's (the same code path): "
                  f"{mib(rate)} MiB/s, {requests} requests{versus}")
        if row.skipped:
            print(f"{row.number}: skipped: {row.skipped}")
        if row.error:
            print(f"{row.number}: {row.error}")
        for note in row.notes:
            print(f"{row.number}: {note}")
        failed = [description for description, passed in row.checks if not passed]
        if failed:
            print(f"{row.number}: FAIL: {', '.join(failed)}")
        failed = [description for description, passed in row.warm_checks if not passed]
        if failed:
            print(f"{row.number}: warm FAIL: {', '.join(failed)}")


# MARK: Command line


def parse_options(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--braid", default=harness.built("braid"),
                        help="the braid binary (default %(default)s)")
    parser.add_argument("--test-server", default=harness.built("braid-test-server"),
                        help="the braid-test-server binary, for profiles 4 and 5 (default %(default)s)")
    parser.add_argument("--auto-args", default="-n auto",
                        help="how braid is told to choose its count (default %(default)r); --auto-args='-n 8' to "
                             "try the script on a braid without auto")
    parser.add_argument("--braid-args", default="--no-fsync",
                        help="extra arguments for every braid download (default %(default)r: braid bench does "
                             "not flush its file either)")
    parser.add_argument("--aria2-args", default="",
                        help="aria2c's options in profile 6 (default none: aria2's own -x1 -s5 -k20M, one "
                             "connection and one or two requests, faster there than compare.py's -x16 -s16 -k1M); "
                             "give them with =, as in --aria2-args='-x16 -s16 -k1M'")
    parser.add_argument("--cold-only", action="store_true",
                        help="run auto only cold, knowing nothing of the server (no warm runs)")
    parser.add_argument("--only", default="1,2,3,4,5,6", help="comma-separated profile numbers (default: all)")
    parser.add_argument("--quick", action="store_true",
                        help="smaller files for a run of about 10 minutes: 256 MiB, 128 MiB for profile 4")
    parser.add_argument("--size", type=harness.parse_size,
                        help="file size for profiles 1, 2, 3 and 5; braid bench fetches all of it "
                             "(default 2016M, 256M with --quick)")
    parser.add_argument("--capped-size", type=harness.parse_size,
                        help="file size for profile 4, where every run takes size / total rate "
                             "(default 1008M, 128M with --quick)")
    parser.add_argument("--expensive-size", type=harness.parse_size, default="64M",
                        help="object size for profile 6 (default %(default)s)")
    parser.add_argument("--counts", default="1,2,4,8,16,32,64",
                        help="fixed counts braid bench measures in profiles 1, 2, 3, 5 (default %(default)s)")
    parser.add_argument("--capped-counts", default="1,2,4,8",
                        help="fixed counts braid bench measures in profile 4 (default %(default)s)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per count and per tool (default 3)")
    parser.add_argument("--rate", type=harness.parse_size, default="25M",
                        help="per-connection rate in profiles 1, 2 and 5 (default 25M)")
    parser.add_argument("--conn-limit", type=int, default=8, help="nginx's limit_conn in profile 2 (default 8)")
    parser.add_argument("--total-rate", type=harness.parse_size, default="40M",
                        help="the test server's rate for all connections together in profile 4 (default 40M)")
    parser.add_argument("--latency", type=float, default=0.04,
                        help="seconds the test server waits before every response in profile 5 (default 0.04)")
    parser.add_argument("--workdir", help="keep test files and logs here (reused next time) instead of a temp dir")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    options = parser.parse_args(argv)
    try:
        options.only = sorted({int(number) for number in options.only.split(",")})
        options.counts = [int(count) for count in options.counts.split(",")]
        options.capped_counts = [int(count) for count in options.capped_counts.split(",")]
    except ValueError:
        parser.error("--only, --counts and --capped-counts take comma-separated numbers")
    if not set(options.only) <= set(range(1, 7)):
        parser.error("profiles are numbered 1 to 6")
    options.size = options.size or (256 * MiB if options.quick else 2016 * MiB)
    options.capped_size = options.capped_size or (128 * MiB if options.quick else 1008 * MiB)
    options.auto_args = shlex.split(options.auto_args)
    # Only `-n auto` remembers servers (a braid given a fixed count, or without the option, is run cold only).
    options.remembers = "auto" in options.auto_args and not options.cold_only
    options.braid_args = shlex.split(options.braid_args)
    options.aria2_args = shlex.split(options.aria2_args)
    return options


def check_tools(options):
    options.braid = harness.require_executable(options.braid, "braid")
    options.test_server = os.path.abspath(options.test_server)
    if {4, 5} & set(options.only):
        harness.require_executable(options.test_server, "braid-test-server")
    for tool in ["curl", "openssl"] + (["aria2c"] if 6 in options.only else []):
        harness.require_executable(tool)
    if {1, 2, 3} & set(options.only):
        harness.require_executable(harness.nginx.NGINX)


def main(argv):
    options = parse_options(argv)
    check_tools(options)
    rows = []
    with harness.Workspace("braid-auto.", options.workdir) as work:
        profiles = Profiles(options, work)
        for number in options.only:
            log(f"profile {number}")
            try:
                result = getattr(profiles, f"profile_{number}")()
            except harness.BenchFailed as error:
                result = (Row(str(number), f"profile {number}", "-", error=str(error)), options.size)
            rows += result if isinstance(result, list) else [result]
    print(f"braid {options.braid} {' '.join(options.auto_args)} {' '.join(options.braid_args)}; "
          f"{options.repeat} runs each; {os.cpu_count()} CPUs; commit {harness.commit()}")
    print_table(rows, options)
    return 1 if any("FAIL" in (row.verdict, row.warm_verdict) for row, _ in rows) else 0


if __name__ == "__main__":
    harness.main(main)
