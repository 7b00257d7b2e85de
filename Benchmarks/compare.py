#!/usr/bin/env python3
"""End-to-end comparison of the braid CLI against curl, axel and aria2c on a local nginx.

Every number in a table comes from this run: tools alternate (A B C D A B C D ...) so that drift in the
machine's state hits all of them alike, each run downloads to an empty directory on the same filesystem as the
source, and a run whose file does not match the source's MD5 is reported as FAILED and never timed.

All traffic stays on 127.0.0.1. nginx, the optional test server and every child are stopped on exit,
including on Ctrl-C.

Usage: Benchmarks/compare.py [--quick] [--only 1,4] [--tools braid,curl,axel,aria2c] [--markdown] ...
(see --help, and Benchmarks/README.md).
"""

import argparse
import base64
import hashlib
import os
import platform
import select
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from dataclasses import dataclass, field

MiB = 1 << 20
GiB = 1 << 30

NGINX = "/usr/sbin/nginx"
# GNU time reports the tool's own peak RSS. wait4's ru_maxrss of a child spawned from Python is useless: the
# kernel keeps the high-water mark across exec, so it includes the Python interpreter the child was forked from
# (about 14 MiB for /bin/true). GNU time forks the tool from its own ~1 MiB process.
GNU_TIME = "/usr/bin/time"
ALL_TOOLS = ("braid", "curl", "axel", "aria2c")
PEERS = ("curl", "axel", "aria2c")
# Proxy variables are dropped from every child's environment: nothing may leave 127.0.0.1.
PROXY_VARIABLES = {"http_proxy", "https_proxy", "all_proxy", "no_proxy", "ftp_proxy"}


def parse_size(text):
    """'64M', '1G', '512K' or a plain byte count."""
    units = {"K": 1 << 10, "M": MiB, "G": GiB}
    text = text.strip().upper().removesuffix("IB").removesuffix("B")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def format_size(size):
    for unit, name in ((GiB, "GiB"), (MiB, "MiB"), (1 << 10, "KiB")):
        if size >= unit:
            return f"{size // unit} {name}" if size % unit == 0 else f"{size / unit:.1f} {name}"
    return f"{size} B"


def log(message):
    print(message, file=sys.stderr, flush=True)


def free_port():
    """A port on 127.0.0.1 nothing listens on right now (not reserved: callers retry on bind failure)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def child_environment():
    return {
        key: value
        for key, value in os.environ.items()
        if key.lower() not in PROXY_VARIABLES
    } | {"LC_ALL": "C"}


def require_loopback(url):
    host = urllib.parse.urlsplit(url).hostname
    if host not in ("127.0.0.1", "localhost"):
        raise SystemExit(f"refusing to download from {url}: only 127.0.0.1 is allowed")


class Children:
    """Every process this script started, so that exit (normal, error or Ctrl-C) can stop them all."""

    def __init__(self):
        self.processes = set()

    def popen(self, argv, **kwargs):
        # A session of its own: a Ctrl-C at the terminal reaches only this script, which then stops the
        # children itself, and a timeout can kill a tool together with anything it spawned.
        process = subprocess.Popen(argv, start_new_session=True, env=child_environment(), **kwargs)
        self.processes.add(process)
        return process

    def forget(self, process):
        self.processes.discard(process)

    def stop(self, process, grace=5.0):
        """SIGTERM to the process group, then SIGKILL after `grace` seconds."""
        if process.returncode is None:
            for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 30.0)):
                try:
                    os.killpg(process.pid, sig)
                except ProcessLookupError:
                    pass
                try:
                    process.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        self.forget(process)

    def stop_all(self):
        for process in list(self.processes):
            self.stop(process)


# MARK: Test data


def generate_file(path, size):
    """Writes `size` deterministic, incompressible bytes (AES-128-CTR keystream) and returns their MD5 hex.

    A `.md5` file next to it lets a kept --workdir skip regeneration on the next run.
    """
    digest_path = path + ".md5"
    if os.path.exists(digest_path) and os.path.exists(path) and os.path.getsize(path) == size:
        with open(digest_path) as cached:
            return cached.read().strip()
    log(f"generating {format_size(size)} test file {path}")
    keystream = subprocess.Popen(
        [
            "openssl", "enc", "-aes-128-ctr", "-nosalt",
            "-K", f"{size:032x}", "-iv", "0" * 32, "-in", "/dev/zero",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    md5 = hashlib.md5()
    remaining = size
    try:
        with open(path, "wb") as output:
            while remaining:
                block = keystream.stdout.read(min(4 * MiB, remaining))
                if not block:
                    raise SystemExit("openssl enc stopped early while generating test data")
                output.write(block)
                md5.update(block)
                remaining -= len(block)
    finally:
        keystream.kill()
        keystream.wait()
    with open(digest_path, "w") as cached:
        cached.write(md5.hexdigest() + "\n")
    return md5.hexdigest()


def file_md5(path):
    md5 = hashlib.md5()
    with open(path, "rb") as source:
        while block := source.read(4 * MiB):
            md5.update(block)
    return md5.hexdigest()


# MARK: nginx


@dataclass
class Location:
    """An nginx location serving a file or the whole document root, maybe throttled, maybe with headers."""

    match: str  # "^~ /throttled/" or "= /md5/large.bin"
    alias: str
    limit_rate: int = 0
    headers: dict = field(default_factory=dict)
    # Further directives, written as given: "sendfile_max_chunk 64k;", "limit_conn perclient 8;".
    directives: list = field(default_factory=list)


class Nginx:
    """nginx on free 127.0.0.1 ports, plain and TLS, with everything it writes inside `directory`."""

    def __init__(self, children, directory, document_root, locations, http_directives=()):
        self.children = children
        self.directory = directory
        self.document_root = document_root
        self.locations = locations
        # Directives for the http block, written as given: "limit_conn_zone $binary_remote_addr zone=z:1m;".
        self.http_directives = list(http_directives)
        self.process = None
        self.port = None
        self.tls_port = None
        self.certificate = os.path.join(directory, "cert.pem")
        # One line per request, so that each run's request count shows how a tool splits the file.
        self.access_log = os.path.join(directory, "logs", "access.log")
        self.key = os.path.join(directory, "key.pem")

    def url(self, path, tls=False):
        if tls:
            return f"https://127.0.0.1:{self.tls_port}{path}"
        return f"http://127.0.0.1:{self.port}{path}"

    def start(self):
        for name in ("logs", "temp"):
            os.makedirs(os.path.join(self.directory, name), exist_ok=True)
        self.make_certificate()
        for _ in range(5):
            self.port, self.tls_port = free_port(), free_port()
            config = os.path.join(self.directory, "nginx.conf")
            with open(config, "w") as file:
                file.write(self.config_text())
            error_log = os.path.join(self.directory, "logs", "error.log")
            with open(os.path.join(self.directory, "logs", "stderr.log"), "wb") as stderr:
                self.process = self.children.popen(
                    [NGINX, "-p", self.directory, "-c", config, "-e", error_log],
                    stdout=subprocess.DEVNULL,
                    stderr=stderr,
                )
            if self.wait_until_ready():
                return
            self.children.stop(self.process)
            with open(error_log, errors="replace") as file:
                errors = file.read()
            if "Address already in use" not in errors:
                raise SystemExit(f"nginx failed to start:\n{errors}")
        raise SystemExit("nginx could not bind free ports after 5 attempts")

    def make_certificate(self):
        result = subprocess.run(
            [
                "openssl", "req", "-x509", "-nodes", "-days", "2",
                "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                "-keyout", self.key, "-out", self.certificate,
            ],
            capture_output=True,
        )
        if result.returncode != 0:
            raise SystemExit(f"openssl req failed:\n{result.stderr.decode(errors='replace')}")

    def wait_until_ready(self, timeout=15.0):
        """Polls with real HTTP requests until nginx answers, or returns False if it exits first."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=2) as connection:
                    connection.sendall(b"GET /.compare-ready HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
                    if connection.recv(64).startswith(b"HTTP/1.1 204"):
                        return True
            except OSError:
                pass
            time.sleep(0.01)
        raise SystemExit(f"nginx did not answer on 127.0.0.1:{self.port} within {timeout} s")

    def config_text(self):
        def quoted(value):
            return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'

        prefix = self.directory
        lines = [
            "daemon off;",
            "worker_processes auto;",
            f"pid {quoted(prefix + '/nginx.pid')};",
            f"lock_file {quoted(prefix + '/nginx.lock')};",
            f"error_log {quoted(prefix + '/logs/error.log')} notice;",
            "events { worker_connections 4096; }",
            "http {",
            "    default_type application/octet-stream;",
            "    types {}",
            "    sendfile on;",
            "    tcp_nopush on;",
            "    keepalive_requests 100000;",
            "    log_format requests '$status $body_bytes_sent \"$http_range\" \"$request\"';",
            f"    access_log {quoted(self.access_log)} requests;",
        ] + [f"    {directive}" for directive in self.http_directives]
        if os.geteuid() == 0:
            # Workers would otherwise run as nobody, who cannot enter the 0700 temporary directory.
            lines.insert(0, "user root;")
        for temp in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
            lines.append(f"    {temp}_temp_path {quoted(prefix + '/temp/' + temp)};")
        lines += [
            "    server {",
            f"        listen 127.0.0.1:{self.port};",
            f"        listen 127.0.0.1:{self.tls_port} ssl;",
            f"        ssl_certificate {quoted(self.certificate)};",
            f"        ssl_certificate_key {quoted(self.key)};",
            "        ssl_protocols TLSv1.2 TLSv1.3;",
            f"        root {quoted(self.document_root)};",
            "        location = /.compare-ready { access_log off; return 204; }",
        ]
        for location in self.locations:
            lines.append(f"        location {location.match} {{")
            lines.append(f"            alias {quoted(location.alias)};")
            if location.limit_rate:
                lines.append(f"            limit_rate {location.limit_rate};")
            for name, value in location.headers.items():
                lines.append(f"            add_header {name} {quoted(value)} always;")
            lines += [f"            {directive}" for directive in location.directives]
            lines.append("        }")
        lines += ["    }", "}"]
        return "\n".join(lines) + "\n"


# MARK: Measuring runs


def kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@dataclass
class Run:
    ok: bool
    wall: float = 0.0
    cpu: float = 0.0
    rss_kib: int = 0
    requests: int = 0
    error: str = ""


@dataclass
class Job:
    """One tool's invocation in a scenario: `argv(output_path)` builds the command for a run."""

    label: str
    argv: object
    expected_md5: str
    size: int
    # Tools that print a digest instead of writing a file (`openssl md5`) are checked on their stdout.
    checks_stdout: bool = False
    runs: list = field(default_factory=list)

    def successes(self):
        return [run for run in self.runs if run.ok]


class Runner:
    def __init__(self, children, output_directory, run_timeout):
        self.children = children
        self.output_directory = output_directory
        self.run_timeout = run_timeout
        self.access_log = None

    def requests_since(self, offset):
        """Requests nginx logged after `offset` in its access log (0 for runs against other servers)."""
        if not self.access_log or not os.path.exists(self.access_log):
            return 0
        with open(self.access_log, "rb") as log_file:
            log_file.seek(offset)
            return log_file.read().count(b"\n")

    def keep_failure(self, error_text):
        """Saves a failed run's whole stderr (a crash report is longer than the table can show); returns the path."""
        directory = os.path.join(os.path.dirname(self.output_directory), "failed-runs")
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, f"{len(os.listdir(directory)) + 1}.stderr.txt")
        with open(path, "w") as kept:
            kept.write(error_text)
        return path

    def access_log_size(self):
        return os.path.getsize(self.access_log) if self.access_log and os.path.exists(self.access_log) else 0

    def measure(self, job, timeout):
        """Runs `job` once into an empty output directory; wall, CPU and peak RSS only for a verified result.

        Wall time is measured here; CPU (user + system, the tool and anything it spawned) comes from wait4;
        peak RSS from GNU time, see GNU_TIME.
        """
        shutil.rmtree(self.output_directory, ignore_errors=True)
        os.makedirs(self.output_directory)
        output = os.path.join(self.output_directory, "download.bin")
        # Earlier runs' dirty pages would otherwise be written back during, and charged to, this run.
        os.sync()
        stdout_path = os.path.join(self.output_directory, "stdout.txt")
        stderr_path = os.path.join(self.output_directory, "stderr.txt")
        rss_path = os.path.join(self.output_directory, "rss.txt")
        argv = [GNU_TIME, "-f", "%M", "-o", rss_path] + job.argv(output)
        log_offset = self.access_log_size()
        with open(stdout_path, "wb") as stdout, open(stderr_path, "wb") as stderr:
            started = time.monotonic()
            process = self.children.popen(argv, stdout=stdout, stderr=stderr)
            timer = threading.Timer(timeout, kill_group, [process.pid])
            timer.start()
            try:
                _, status, usage = os.wait4(process.pid, 0)
            finally:
                timer.cancel()
            wall = time.monotonic() - started
            process.returncode = os.waitstatus_to_exitcode(status)
            self.children.forget(process)
        with open(stderr_path, "rb") as stderr:
            error_text = stderr.read().decode(errors="replace").strip()
        with open(rss_path, errors="replace") as rss:
            time_report = rss.read().split("\n")
        if process.returncode != 0:
            if wall >= timeout:
                return Run(ok=False, error=f"timed out after {timeout:.0f} s")
            # GNU time exits with the tool's status, or 128 + N and a "terminated by signal N" line.
            how = next((line for line in time_report if "terminated by signal" in line), f"exit {process.returncode}")
            kept = self.keep_failure(error_text)
            return Run(ok=False, error=f"{how}: {error_text[-300:]} (full stderr: {kept})")
        if job.checks_stdout:
            with open(stdout_path, "rb") as stdout:
                printed = stdout.read().decode(errors="replace")
            if job.expected_md5 not in printed:
                return Run(ok=False, error=f"printed digest does not match: {printed.strip()[:120]}")
        elif not os.path.exists(output):
            return Run(ok=False, error="exit 0 but no output file")
        elif (actual := file_md5(output)) != job.expected_md5:
            return Run(ok=False, error=f"wrong file: md5 {actual} != {job.expected_md5}")
        cpu = usage.ru_utime + usage.ru_stime
        rss_kib = int([line for line in time_report if line.strip()][-1])
        return Run(ok=True, wall=wall, cpu=cpu, rss_kib=rss_kib, requests=self.requests_since(log_offset))

    def run_alternating(self, scenario, jobs, repeat, size):
        """Runs every job `repeat` times, alternating A B C A B C ..., and stores the runs on the jobs."""
        timeout = self.run_timeout or 30 + size / (4 * MiB)
        total = repeat * len(jobs)
        for round_number in range(repeat):
            for index, job in enumerate(jobs):
                run = self.measure(job, timeout)
                job.runs.append(run)
                number = round_number * len(jobs) + index + 1
                result = f"{run.wall:.2f} s" if run.ok else f"FAILED ({run.error})"
                log(f"  [{scenario} {number}/{total}] {job.label}: {result}")


# MARK: Reporting


@dataclass
class Verdict:
    text: str
    status: str  # PASS, FAIL or N/A


def ratio_verdict(name, value, limit, comparison="<="):
    if value is None:
        return Verdict(f"{name}: not measured", "N/A")
    passed = value <= limit if comparison == "<=" else value >= limit
    return Verdict(f"{name} = {value:.2f} (target {comparison} {limit:.2f})", "PASS" if passed else "FAIL")


def median_wall(job):
    runs = job.successes() if job else []
    return statistics.median(run.wall for run in runs) if runs else None


def median_cpu(job):
    runs = job.successes() if job else []
    return statistics.median(run.cpu for run in runs) if runs else None


def median_rss_mib(job):
    runs = job.successes() if job else []
    return statistics.median(run.rss_kib for run in runs) / 1024 if runs else None


def median_requests(job):
    runs = job.successes() if job else []
    return statistics.median(run.requests for run in runs) if runs else None


def burst_bypass(job, size, rate):
    """Why nginx never throttled `job`, if its requests were small enough to fit in limit_rate's burst."""
    requests = median_requests(job)
    if not requests or size / requests > rate:
        return None
    return (f"{job.label}'s requests average {format_size(int(size / requests))}, inside nginx's one-second "
            f"burst of {format_size(rate)}, so the throttle never applied to them")


def best(jobs, metric):
    """The peer with the lowest median `metric`, as (job, value), ignoring peers without a successful run."""
    measured = [(job, metric(job)) for job in jobs if metric(job) is not None]
    return min(measured, key=lambda pair: pair[1]) if measured else (None, None)


def ratio(numerator, denominator):
    if numerator is None or not denominator:
        return None
    return numerator / denominator


@dataclass
class Report:
    number: int
    title: str
    size: int
    jobs: list = field(default_factory=list)
    verdicts: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    skipped: str = ""


def table_rows(report):
    header = ["tool", "ok", "median s", "min s", "max s", "MiB/s", "median CPU s", "median RSS MiB", "requests"]
    rows = []
    for job in report.jobs:
        runs = job.successes()
        ok = f"{len(runs)}/{len(job.runs)}"
        if not runs:
            rows.append([job.label, ok, "FAILED", "", "", "", "", "", ""])
            continue
        walls = [run.wall for run in runs]
        rows.append([
            job.label,
            ok,
            f"{statistics.median(walls):.3f}",
            f"{min(walls):.3f}",
            f"{max(walls):.3f}",
            f"{job.size / MiB / statistics.median(walls):.0f}",
            f"{median_cpu(job):.3f}",
            f"{median_rss_mib(job):.1f}",
            f"{median_requests(job):.0f}" if median_requests(job) else "-",
        ])
    return header, rows


def failures(report):
    lines = []
    for job in report.jobs:
        for number, run in enumerate(job.runs, 1):
            if not run.ok:
                lines.append(f"{job.label} run {number} FAILED: {run.error}")
    return lines


def print_plain(report):
    print(f"\n== Scenario {report.number}: {report.title} ==")
    if report.skipped:
        print(f"skipped: {report.skipped}")
        return
    header, rows = table_rows(report)
    widths = [max(len(str(row[column])) for row in [header] + rows) for column in range(len(header))]
    for row in [header] + rows:
        cells = [str(cell).ljust(width) if column == 0 else str(cell).rjust(width)
                 for column, (cell, width) in enumerate(zip(row, widths))]
        print("  ".join(cells).rstrip())
    for line in failures(report):
        print(line)
    for note in report.notes:
        print(f"note: {note}")
    for verdict in report.verdicts:
        print(f"{verdict.text} {verdict.status}")


def print_markdown(report):
    print(f"\n### Scenario {report.number}: {report.title}\n")
    if report.skipped:
        print(f"Skipped: {report.skipped}")
        return
    header, rows = table_rows(report)
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|")
    for row in rows:
        print("| " + " | ".join(str(cell) for cell in row) + " |")
    print()
    for line in failures(report):
        print(f"- {line}")
    for note in report.notes:
        print(f"- Note: {note}")
    for verdict in report.verdicts:
        print(f"- `{verdict.text}` **{verdict.status}**")


# MARK: Scenarios


class Bench:
    def __init__(self, options, children, workdir):
        self.options = options
        self.children = children
        self.workdir = workdir
        self.document_root = os.path.join(workdir, "www")
        os.makedirs(self.document_root, exist_ok=True)
        self.runner = Runner(children, os.path.join(workdir, "out"), options.run_timeout)
        self.digests = {}
        self.nginx = None

    # Files and server

    def file_name(self, size):
        return f"data-{size}.bin"

    def prepare(self, sizes):
        for size in sorted(set(sizes)):
            path = os.path.join(self.document_root, self.file_name(size))
            self.digests[size] = generate_file(path, size)
        options = self.options
        large, medium = self.file_name(options.large_size), self.file_name(options.medium_size)
        md5_header = {"Content-MD5": self.content_md5(options.large_size)}
        throttled_md5_header = {"Content-MD5": self.content_md5(options.medium_size)}
        locations = [
            Location("^~ /throttled/", self.document_root + "/", limit_rate=options.throttle_rate),
            Location(f"= /md5/{large}", f"{self.document_root}/{large}", headers=md5_header),
            Location(
                f"= /throttled-md5/{medium}",
                f"{self.document_root}/{medium}",
                limit_rate=options.throttle_rate,
                headers=throttled_md5_header,
            ),
        ]
        self.nginx = Nginx(self.children, os.path.join(self.workdir, "nginx"), self.document_root, locations)
        self.nginx.start()
        self.runner.access_log = self.nginx.access_log
        log(f"nginx on 127.0.0.1:{self.nginx.port} (TLS {self.nginx.tls_port}), files in {self.document_root}")

    def content_md5(self, size):
        if size not in self.digests:
            return ""
        return base64.b64encode(bytes.fromhex(self.digests[size])).decode()

    def url(self, size, location="", tls=False):
        return self.nginx.url(f"{location}/{self.file_name(size)}", tls=tls)

    # Tool command lines

    def tool_job(self, tool, url, size, connections=16, tls=False, label=None, checksum=False, md5=None):
        require_loopback(url)
        options = self.options
        md5 = md5 or self.digests[size]
        cacert = self.nginx.certificate if tls and self.nginx else None
        if tool == "braid":
            def argv(output):
                command = [options.braid, url, "-o", output, "-n", str(connections), "-q"]
                if checksum:
                    command += ["--checksum", f"md5={md5}"]
                if cacert:
                    command += ["--cacert", cacert]
                return command + shlex.split(options.braid_args)
            default_label = f"braid -n {connections}" + (" --checksum" if checksum else "")
        elif tool == "curl":
            def argv(output):
                # -q first: ignore ~/.curlrc.
                return ["curl", "-q", "-sS", "-f", "-o", output] + (["--cacert", cacert] if cacert else []) + [url]
            default_label = "curl"
        elif tool == "axel":
            def argv(output):
                return ["axel", "-q", "-N", "-n", str(connections), "-o", output, url]
            default_label = f"axel -n {connections}"
        elif tool == "aria2c":
            def argv(output):
                return [
                    "aria2c", "--no-conf=true", f"-x{connections}", f"-s{connections}", "-k1M",
                    "--allow-overwrite=true", "--auto-file-renaming=false", "--file-allocation=none",
                    "-d", os.path.dirname(output), "-o", os.path.basename(output),
                    "--console-log-level=warn", "--summary-interval=0",
                ] + ([f"--ca-certificate={cacert}"] if cacert else []) + [url]
            default_label = f"aria2c -x{connections} -s{connections} -k1M"
        else:
            raise ValueError(tool)
        return Job(label or default_label, argv, md5, size)

    def selected(self, tools):
        return [tool for tool in tools if tool in self.options.tools]

    def jobs_by_tool(self, report):
        return {job.label.split()[0]: job for job in report.jobs}

    # The scenarios

    def scenario_1(self):
        size = self.options.large_size
        report = Report(1, f"unthrottled {format_size(size)}, 16 connections", size)
        report.jobs = [self.tool_job(tool, self.url(size), size) for tool in self.selected(ALL_TOOLS)]
        self.runner.run_alternating(1, report.jobs, self.options.repeat, size)
        jobs = self.jobs_by_tool(report)
        braid = jobs.get("braid")
        peers = [jobs[tool] for tool in PEERS if tool in jobs]
        peer, peer_wall = best(peers, median_wall)
        cpu_peer, peer_cpu = best(peers, median_cpu)
        report.verdicts = [
            ratio_verdict(f"braid/best-peer wall ({peer.label if peer else '-'})",
                          ratio(median_wall(braid), peer_wall), 0.90),
            ratio_verdict(f"braid/best-peer CPU ({cpu_peer.label if cpu_peer else '-'})",
                          ratio(median_cpu(braid), peer_cpu), 0.80),
            ratio_verdict("braid peak RSS MiB", median_rss_mib(braid), 32.0),
        ]
        return report

    def scenario_2(self):
        options = self.options
        size, rate = options.medium_size, options.throttle_rate
        title = f"throttled {format_size(rate)}/s per connection, {format_size(size)}, 16 connections"
        report = Report(2, title, size)
        tools = self.selected(("braid", "axel", "aria2c"))
        report.jobs = [self.tool_job(tool, self.url(size, "/throttled"), size) for tool in tools]
        self.runner.run_alternating(2, report.jobs, options.repeat, size)
        ideal = size / (16 * rate)
        per_connection = size / 16
        report.notes.append(f"ideal = size/(16 x rate) = {ideal:.3f} s")
        # ngx_http_write_filter allows rate * (elapsed seconds + 1): each request's first second is unthrottled.
        burst_share = min(1.0, rate / per_connection)
        if burst_share > 0.1:
            report.notes.append(
                f"nginx's limit_rate lets every request send {format_size(rate)} (one second's worth) at full "
                f"speed; that is {burst_share:.0%} of a connection's {format_size(per_connection)} share, so "
                "the throttle binds only partly. Use a larger --medium-size or a lower --throttle-rate."
            )
        jobs = self.jobs_by_tool(report)
        braid = jobs.get("braid")
        peer, peer_wall = best([jobs[tool] for tool in ("axel", "aria2c") if tool in jobs], median_wall)
        ideal_verdict = ratio_verdict("braid/ideal wall", ratio(median_wall(braid), ideal), 1.10)
        if unthrottled := burst_bypass(braid, size, rate):
            ideal_verdict = Verdict(f"{ideal_verdict.text}: {unthrottled}", "N/A")
        elif burst_share > 0.5:
            ideal_verdict = Verdict(f"{ideal_verdict.text}: the throttle does not bind (see note)", "N/A")
        report.verdicts = [
            ideal_verdict,
            ratio_verdict(f"braid/best-peer wall ({peer.label if peer else '-'})",
                          ratio(median_wall(braid), peer_wall), 0.95),
        ]
        return report

    def scenario_3(self):
        options = self.options
        size, rate = options.medium_size, options.throttle_rate
        slow_rate = rate // 10
        title = (f"one connection ten times slower ({format_size(rate)}/s per connection, connection "
                 f"#{options.slow_connection_number} at {slow_rate} B/s), {format_size(size)}, 16 connections")
        report = Report(3, title, size)
        if not options.slow_server_cmd:
            report.skipped = ("needs --slow-server-cmd, e.g. --slow-server-cmd .build/release/braid-test-server "
                              "(the script appends --port 0 --size --rate [--fault slow-connection=N:BPS])")
            return report
        base = shlex.split(options.slow_server_cmd) + ["--port", "0", "--size", str(size)]
        reference_url = self.start_test_server(base)
        reference = os.path.join(self.workdir, "slow-reference.bin")
        fetched = subprocess.run(["curl", "-q", "-sS", "-f", "-o", reference, reference_url],
                                 env=child_environment(), capture_output=True)
        if fetched.returncode != 0:
            raise SystemExit(f"could not fetch the test server's reference content: {fetched.stderr.decode()}")
        md5 = file_md5(reference)
        os.remove(reference)
        steady_url = self.start_test_server(base + ["--rate", str(rate)])
        slow_url = self.start_test_server(
            base + ["--rate", str(rate), "--fault", f"slow-connection={options.slow_connection_number}:{slow_rate}"]
        )
        jobs = []
        for tool in self.selected(("braid", "axel", "aria2c")):
            for url, kind in ((steady_url, "steady"), (slow_url, "one slow")):
                job = self.tool_job(tool, url, size, md5=md5)
                job.label = f"{job.label}, {kind}"
                jobs.append(job)
        report.jobs = jobs
        self.runner.run_alternating(3, jobs, options.repeat, size)
        ideal = size / (16 * rate)
        report.notes.append(f"ideal = size/(16 x rate) = {ideal:.3f} s; the test server paces every response "
                            "from its first byte, without nginx's one-second burst")
        for tool in self.selected(("braid", "axel", "aria2c")):
            steady, slow = [job for job in jobs if job.label.startswith(tool)]
            steady_ratio = ratio(median_wall(steady), ideal)
            if steady_ratio is not None:
                report.notes.append(f"{tool} steady/ideal wall = {steady_ratio:.2f}")
            verdict = ratio_verdict(f"{tool} slow/steady wall", ratio(median_wall(slow), median_wall(steady)), 1.20)
            if tool == "braid":
                report.verdicts.append(verdict)
            else:
                report.notes.append(f"{verdict.text} (peer, for context)")
        return report

    def start_test_server(self, argv):
        """Starts the test server and returns the URL it prints on its first line of stdout."""
        stderr_path = os.path.join(self.workdir, f"test-server-{len(self.children.processes)}.log")
        with open(stderr_path, "wb") as stderr:
            process = self.children.popen(argv, stdout=subprocess.PIPE, stderr=stderr)
        ready, _, _ = select.select([process.stdout], [], [], 15)
        line = process.stdout.readline().decode().strip() if ready else ""
        if not line.startswith("http"):
            self.children.stop(process)
            with open(stderr_path, errors="replace") as stderr:
                raise SystemExit(f"{shlex.join(argv)} printed no URL: {line!r}\n{stderr.read()[-500:]}")
        require_loopback(line)
        return line

    def scenario_4(self):
        options = self.options
        size, medium = options.large_size, options.medium_size
        report = Report(4, f"verification hidden: Content-MD5 served, {format_size(size)}", size)
        if "braid" not in options.tools:
            report.skipped = "measures braid against itself; add braid to --tools"
            return report
        source = os.path.join(self.document_root, self.file_name(size))
        verified = self.tool_job("braid", self.url(size, "/md5"), size, checksum=True,
                                 label="braid --checksum (Content-MD5 served)")
        plain = self.tool_job("braid", self.url(size), size, label="braid, no digest")
        openssl = Job("openssl md5 FILE", lambda output: ["openssl", "md5", source], self.digests[size], size,
                      checks_stdout=True)
        throttled_verified = self.tool_job("braid", self.url(medium, "/throttled-md5"), medium, checksum=True,
                                           label=f"braid --checksum, throttled {format_size(medium)}")
        throttled_plain = self.tool_job("braid", self.url(medium, "/throttled"), medium,
                                        label=f"braid, no digest, throttled {format_size(medium)}")
        report.jobs = [verified, plain, openssl]
        self.runner.run_alternating(4, report.jobs, options.repeat, size)
        throttled = [throttled_verified, throttled_plain]
        self.runner.run_alternating(4, throttled, options.repeat, medium)
        report.jobs += throttled
        bound = max((value for value in (median_wall(plain), median_wall(openssl)) if value is not None),
                    default=None)
        overhead = ratio_verdict("throttled verified/no-digest wall",
                                 ratio(median_wall(throttled_verified), median_wall(throttled_plain)), 1.05)
        if unthrottled := burst_bypass(throttled_plain, medium, options.throttle_rate):
            overhead = Verdict(f"{overhead.text}: not network-bound, {unthrottled}", "N/A")
        report.verdicts = [
            ratio_verdict("verified/max(no-digest, openssl md5) wall", ratio(median_wall(verified), bound), 1.15),
            overhead,
        ]
        return report

    def scenario_5(self):
        report = Report(5, "scale: cost per GiB for braid -n 16", 0)
        if "braid" not in self.options.tools:
            report.skipped = "measures braid alone; add braid to --tools"
            return report
        for size in self.options.scale_sizes:
            job = self.tool_job("braid", self.url(size), size, label=f"braid -n 16, {format_size(size)}")
            self.runner.run_alternating(5, [job], self.options.repeat, size)
            report.jobs.append(job)
            wall, cpu = median_wall(job), median_cpu(job)
            if wall is not None:
                report.notes.append(
                    f"{format_size(size)}: {wall * GiB / size:.3f} wall s/GiB, {cpu * GiB / size:.3f} CPU s/GiB, "
                    f"{median_rss_mib(job):.1f} MiB peak RSS"
                )
        return report

    def scenario_6(self):
        size = self.options.large_size
        report = Report(6, f"HTTPS {format_size(size)}, 16 connections", size)
        tools = self.selected(("braid", "aria2c", "curl"))
        report.jobs = [self.tool_job(tool, self.url(size, tls=True), size, tls=True) for tool in tools]
        self.runner.run_alternating(6, report.jobs, self.options.repeat, size)
        jobs = self.jobs_by_tool(report)
        report.verdicts = [
            ratio_verdict("braid/aria2c throughput",
                          ratio(median_wall(jobs.get("aria2c")), median_wall(jobs.get("braid"))), 1.20, ">="),
        ]
        return report


# MARK: Command line


def parse_options(argv):
    parser = argparse.ArgumentParser(
        description="Compare braid with curl, axel and aria2c on a local nginx (127.0.0.1 only).",
    )
    default_braid = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".build/release/braid")
    parser.add_argument("--braid", default=default_braid, help="the braid binary (default: %(default)s)")
    parser.add_argument("--braid-args", default="", help="extra arguments for every braid run, e.g. '--no-fsync'")
    parser.add_argument("--tools", default=",".join(ALL_TOOLS),
                        help="comma-separated subset of %(default)s (default: all)")
    parser.add_argument("--only", default="1,2,3,4,5,6", help="comma-separated scenario numbers (default: all)")
    parser.add_argument("--repeat", type=int, help="runs per tool and scenario (default 5, 3 with --quick)")
    parser.add_argument("--quick", action="store_true", help="small files (64 MiB) for a smoke run")
    parser.add_argument("--big", action="store_true", help="add 4 GiB to scenario 5")
    parser.add_argument("--large-size", type=parse_size, help="size for scenarios 1, 4, 6 (default 1G, quick 64M)")
    parser.add_argument("--medium-size", type=parse_size, help="size for scenarios 2, 3 (default 256M, quick 32M)")
    parser.add_argument("--throttle-rate", type=parse_size, default="25M",
                        help="per-connection bytes/s in scenarios 2 to 4 (default: 25M)")
    parser.add_argument("--slow-server-cmd", help="test server command for scenario 3 (skipped without it)")
    parser.add_argument("--slow-connection-number", type=int, default=2,
                        help="which accepted connection the test server slows down in scenario 3 (default: 2)")
    parser.add_argument("--run-timeout", type=float, help="seconds before a run is killed (default from size)")
    parser.add_argument("--workdir", help="keep test files and nginx here (reused next time) instead of a temp dir")
    parser.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    options = parser.parse_args(argv)

    options.tools = [tool.strip() for tool in options.tools.split(",") if tool.strip()]
    unknown = set(options.tools) - set(ALL_TOOLS)
    if unknown:
        parser.error(f"unknown tools {sorted(unknown)}; choose from {','.join(ALL_TOOLS)}")
    try:
        options.only = sorted({int(number) for number in options.only.split(",")})
    except ValueError:
        parser.error("--only takes scenario numbers, e.g. 1,4")
    if not set(options.only) <= set(range(1, 7)):
        parser.error("scenarios are numbered 1 to 6")
    options.repeat = options.repeat or (3 if options.quick else 5)
    options.large_size = options.large_size or (64 * MiB if options.quick else GiB)
    options.medium_size = options.medium_size or (32 * MiB if options.quick else 256 * MiB)
    options.scale_sizes = [16 * MiB, 32 * MiB, 64 * MiB] if options.quick else [64 * MiB, 256 * MiB, GiB]
    if options.big:
        options.scale_sizes.append(4 * GiB)
    return options


def check_tools(options):
    if "braid" in options.tools:
        options.braid = os.path.abspath(options.braid)
        if not (os.path.isfile(options.braid) and os.access(options.braid, os.X_OK)):
            raise SystemExit(
                f"braid binary not found at {options.braid}.\n"
                "Build it with `swift build -c release --product braid`, pass --braid PATH, "
                "or compare the peers alone with --tools curl,axel,aria2c."
            )
    for tool in [tool for tool in options.tools if tool != "braid"] + ["openssl", GNU_TIME]:
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} not found on PATH; install it or leave it out of --tools")
    if not os.access(NGINX, os.X_OK):
        raise SystemExit(f"{NGINX} not found; install nginx-light")


def describe_machine(options):
    versions = []
    for command in (["curl", "--version"], ["axel", "--version"], ["aria2c", "--version"], [NGINX, "-v"]):
        if command[0] in options.tools or command[0] == NGINX:
            result = subprocess.run(command, capture_output=True, text=True)
            versions.append((result.stdout or result.stderr).splitlines()[0])
    return [
        f"{platform.system()} {platform.release()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        *versions,
        f"tools: {','.join(options.tools)}; runs per tool and scenario: {options.repeat}, alternating",
    ]


def needed_sizes(options):
    sizes = []
    if set(options.only) & {1, 4, 6}:
        sizes.append(options.large_size)
    if set(options.only) & {2, 4}:
        sizes.append(options.medium_size)
    if 5 in options.only and "braid" in options.tools:
        sizes += options.scale_sizes
    return sizes


def main(argv):
    options = parse_options(argv)
    check_tools(options)

    def terminate(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, terminate)
    children = Children()
    workdir = options.workdir or tempfile.mkdtemp(prefix="braid-compare.")
    os.makedirs(workdir, exist_ok=True)
    reports = []
    try:
        bench = Bench(options, children, workdir)
        bench.prepare(needed_sizes(options))
        for number in options.only:
            log(f"scenario {number}")
            reports.append(getattr(bench, f"scenario_{number}")())
    except KeyboardInterrupt:
        log("interrupted; stopping children")
        return 130
    finally:
        children.stop_all()
        if options.workdir:
            shutil.rmtree(os.path.join(workdir, "out"), ignore_errors=True)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    printer = print_markdown if options.markdown else print_plain
    for line in describe_machine(options):
        print(f"- {line}" if options.markdown else line)
    for report in reports:
        printer(report)
    return 1 if any(verdict.status == "FAIL" for report in reports for verdict in report.verdicts) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
