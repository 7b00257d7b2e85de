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
import os
import shlex
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import GiB, MiB, Location, Report, Verdict, format_size, log, median, peers, ratio  # noqa: E402
from harness import ratio_verdict  # noqa: E402

ALL_TOOLS = ("braid", "curl", "axel", "aria2c")
PEERS = ("curl", "axel", "aria2c")


def burst_bypass(job, size, rate):
    """Why nginx never throttled `job`, if its requests were small enough to fit in limit_rate's burst."""
    requests = median(job, "requests")
    if not requests or size / requests > rate:
        return None
    return (f"{job.label}'s requests average {format_size(int(size / requests))}, inside nginx's one-second "
            f"burst of {format_size(rate)}, so the throttle never applied to them")


def rss_mib(job):
    rss = median(job, "rss_kib")
    return rss / 1024 if rss is not None else None


class Bench:
    def __init__(self, options, work):
        self.options = options
        self.work = work
        self.runner = work.runner(timeout=options.run_timeout)
        self.digests = {}
        self.nginx = None

    # Files and server

    def file_name(self, size):
        return f"data-{size}.bin"

    def prepare(self, sizes):
        for size in sorted(set(sizes)):
            self.digests[size] = self.work.file(self.file_name(size), size)
        options, root = self.options, self.work.document_root
        large, medium = self.file_name(options.large_size), self.file_name(options.medium_size)
        self.nginx = self.work.nginx([
            Location.directory("throttled", root, rate=options.throttle_rate),
            Location(f"= /md5/{large}", f"{root}/{large}",
                     headers={"Content-MD5": self.content_md5(options.large_size)}),
            Location(f"= /throttled-md5/{medium}", f"{root}/{medium}", limit_rate=options.throttle_rate,
                     headers={"Content-MD5": self.content_md5(options.medium_size)}),
        ])

    def content_md5(self, size):
        if size not in self.digests:
            return ""
        return base64.b64encode(bytes.fromhex(self.digests[size])).decode()

    def source(self, size, location="", tls=False):
        return self.nginx.source(f"{location}/{self.file_name(size)}", size, self.digests.get(size), tls=tls)

    # Tool command lines

    def tool(self, tool, connections=16, checksum=None):
        """The peer `tool` with this comparison's options; `checksum` is the MD5 braid is told to check."""
        if tool == "braid":
            arguments = ["-n", str(connections), "-q", *(["--checksum", f"md5={checksum}"] if checksum else [])]
            label = f"braid -n {connections}" + (" --checksum" if checksum else "")
            return peers.braid(self.options.braid, *arguments, *shlex.split(self.options.braid_args), label=label)
        if tool == "curl":
            return peers.curl()
        if tool == "axel":
            return peers.axel(connections)
        return peers.aria2c(f"-x{connections}", f"-s{connections}", "-k1M")

    def jobs(self, tools, source):
        return [self.tool(tool).job(source) for tool in self.selected(tools)]

    def selected(self, tools):
        return [tool for tool in tools if tool in self.options.tools]

    def jobs_by_tool(self, report):
        return {job.label.split()[0]: job for job in report.jobs}

    # The scenarios

    def scenario_1(self):
        size = self.options.large_size
        report = Report(f"Scenario 1: unthrottled {format_size(size)}, 16 connections", size)
        report.jobs = self.jobs(ALL_TOOLS, self.source(size))
        self.runner.alternate(report.jobs, self.options.repeat, "1")
        jobs = self.jobs_by_tool(report)
        braid = jobs.get("braid")
        others = [jobs[tool] for tool in PEERS if tool in jobs]
        peer, peer_wall = harness.best(others)
        cpu_peer, peer_cpu = harness.best(others, "cpu")
        report.verdicts = [
            ratio_verdict(f"braid/best-peer wall ({peer.label if peer else '-'})", ratio(median(braid), peer_wall),
                          0.90),
            ratio_verdict(f"braid/best-peer CPU ({cpu_peer.label if cpu_peer else '-'})",
                          ratio(median(braid, "cpu"), peer_cpu), 0.80),
            ratio_verdict("braid peak RSS MiB", rss_mib(braid), 32.0),
        ]
        return report

    def scenario_2(self):
        options = self.options
        size, rate = options.medium_size, options.throttle_rate
        title = f"throttled {format_size(rate)}/s per connection, {format_size(size)}, 16 connections"
        report = Report(f"Scenario 2: {title}", size)
        report.jobs = self.jobs(("braid", "axel", "aria2c"), self.source(size, "/throttled"))
        self.runner.alternate(report.jobs, options.repeat, "2")
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
        peer, peer_wall = harness.best([jobs[tool] for tool in ("axel", "aria2c") if tool in jobs])
        ideal_verdict = ratio_verdict("braid/ideal wall", ratio(median(braid), ideal), 1.10)
        if unthrottled := burst_bypass(braid, size, rate):
            ideal_verdict = Verdict(f"{ideal_verdict.text}: {unthrottled}", "N/A")
        elif burst_share > 0.5:
            ideal_verdict = Verdict(f"{ideal_verdict.text}: the throttle does not bind (see note)", "N/A")
        report.verdicts = [
            ideal_verdict,
            ratio_verdict(f"braid/best-peer wall ({peer.label if peer else '-'})", ratio(median(braid), peer_wall),
                          0.95),
        ]
        return report

    def scenario_3(self):
        options = self.options
        size, rate = options.medium_size, options.throttle_rate
        slow_rate = rate // 10
        title = (f"one connection ten times slower ({format_size(rate)}/s per connection, connection "
                 f"#{options.slow_connection_number} at {slow_rate} B/s), {format_size(size)}, 16 connections")
        report = Report(f"Scenario 3: {title}", size)
        if not options.slow_server_cmd:
            report.skipped = ("needs --slow-server-cmd, e.g. --slow-server-cmd .build/release/braid-test-server "
                              "(the script appends --port 0 --size --seed --path --rate "
                              "[--fault slow-connection=N:BPS] --log-requests)")
            return report
        binary = shlex.split(options.slow_server_cmd)
        steady = self.work.test_server(binary, size, rate=rate, name="steady")
        slow = self.work.test_server(binary, size, rate=rate, name="one slow",
                                     faults=[f"slow-connection={options.slow_connection_number}:{slow_rate}"])
        tools = self.selected(("braid", "axel", "aria2c"))
        for tool in tools:
            for server in (steady, slow):
                report.jobs.append(self.tool(tool).job(server.source()))
                report.jobs[-1].label += f", {server.name}"
        self.runner.alternate(report.jobs, options.repeat, "3")
        ideal = size / (16 * rate)
        report.notes.append(f"ideal = size/(16 x rate) = {ideal:.3f} s; the test server paces every response "
                            "from its first byte, without nginx's one-second burst")
        for tool in tools:
            steady_job, slow_job = [job for job in report.jobs if job.label.startswith(tool)]
            steady_ratio = ratio(median(steady_job), ideal)
            if steady_ratio is not None:
                report.notes.append(f"{tool} steady/ideal wall = {steady_ratio:.2f}")
            verdict = ratio_verdict(f"{tool} slow/steady wall", ratio(median(slow_job), median(steady_job)), 1.20)
            if tool == "braid":
                report.verdicts.append(verdict)
            else:
                report.notes.append(f"{verdict.text} (peer, for context)")
        return report

    def scenario_4(self):
        options = self.options
        size, medium = options.large_size, options.medium_size
        report = Report(f"Scenario 4: verification hidden: Content-MD5 served, {format_size(size)}", size)
        if "braid" not in options.tools:
            report.skipped = "measures braid against itself; add braid to --tools"
            return report
        file = os.path.join(self.work.document_root, self.file_name(size))
        verified = self.tool("braid", checksum=self.digests[size]).job(
            self.source(size, "/md5"), label="braid --checksum (Content-MD5 served)")
        plain = self.tool("braid").job(self.source(size), label="braid, no digest")
        openssl = harness.Job("openssl md5 FILE", lambda output: ["openssl", "md5", file], self.source(size),
                              checks_stdout=True)
        throttled_verified = self.tool("braid", checksum=self.digests[medium]).job(
            self.source(medium, "/throttled-md5"), label=f"braid --checksum, throttled {format_size(medium)}")
        throttled_plain = self.tool("braid").job(self.source(medium, "/throttled"),
                                                 label=f"braid, no digest, throttled {format_size(medium)}")
        report.jobs = [verified, plain, openssl]
        self.runner.alternate(report.jobs, options.repeat, "4")
        throttled = [throttled_verified, throttled_plain]
        self.runner.alternate(throttled, options.repeat, "4")
        report.jobs += throttled
        bound = max((value for value in (median(plain), median(openssl)) if value is not None), default=None)
        overhead = ratio_verdict("throttled verified/no-digest wall",
                                 ratio(median(throttled_verified), median(throttled_plain)), 1.05)
        if unthrottled := burst_bypass(throttled_plain, medium, options.throttle_rate):
            overhead = Verdict(f"{overhead.text}: not network-bound, {unthrottled}", "N/A")
        report.verdicts = [
            ratio_verdict("verified/max(no-digest, openssl md5) wall", ratio(median(verified), bound), 1.15),
            overhead,
        ]
        return report

    def scenario_5(self):
        report = Report("Scenario 5: scale: cost per GiB for braid -n 16")
        if "braid" not in self.options.tools:
            report.skipped = "measures braid alone; add braid to --tools"
            return report
        for size in self.options.scale_sizes:
            job = self.tool("braid").job(self.source(size), label=f"braid -n 16, {format_size(size)}")
            self.runner.alternate([job], self.options.repeat, "5")
            report.jobs.append(job)
            wall, cpu = median(job), median(job, "cpu")
            if wall is not None:
                report.notes.append(
                    f"{format_size(size)}: {wall * GiB / size:.3f} wall s/GiB, {cpu * GiB / size:.3f} CPU s/GiB, "
                    f"{rss_mib(job):.1f} MiB peak RSS"
                )
        return report

    def scenario_6(self):
        size = self.options.large_size
        report = Report(f"Scenario 6: HTTPS {format_size(size)}, 16 connections", size)
        report.jobs = self.jobs(("braid", "aria2c", "curl"), self.source(size, tls=True))
        self.runner.alternate(report.jobs, self.options.repeat, "6")
        jobs = self.jobs_by_tool(report)
        report.verdicts = [
            ratio_verdict("braid/aria2c throughput", ratio(median(jobs.get("aria2c")), median(jobs.get("braid"))),
                          1.20, ">="),
        ]
        return report


# MARK: Command line


def parse_options(argv):
    parser = argparse.ArgumentParser(
        description="Compare braid with curl, axel and aria2c on a local nginx (127.0.0.1 only).",
    )
    parser.add_argument("--braid", default=harness.built("braid"), help="the braid binary (default: %(default)s)")
    parser.add_argument("--braid-args", default="", help="extra arguments for every braid run, e.g. '--no-fsync'")
    parser.add_argument("--tools", default=",".join(ALL_TOOLS),
                        help="comma-separated subset of %(default)s (default: all)")
    parser.add_argument("--only", default="1,2,3,4,5,6", help="comma-separated scenario numbers (default: all)")
    parser.add_argument("--repeat", type=int, help="runs per tool and scenario (default 5, 3 with --quick)")
    parser.add_argument("--quick", action="store_true", help="small files (64 MiB) for a smoke run")
    parser.add_argument("--big", action="store_true", help="add 4 GiB to scenario 5")
    parser.add_argument("--large-size", type=harness.parse_size,
                        help="size for scenarios 1, 4, 6 (default 1G, quick 64M)")
    parser.add_argument("--medium-size", type=harness.parse_size,
                        help="size for scenarios 2, 3 (default 256M, quick 32M)")
    parser.add_argument("--throttle-rate", type=harness.parse_size, default="25M",
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
        if not os.access(options.braid, os.X_OK):
            raise SystemExit(
                f"braid binary not found at {os.path.abspath(options.braid)}.\n"
                "Build it with `swift build -c release --product braid`, pass --braid PATH, "
                "or compare the peers alone with --tools curl,axel,aria2c."
            )
        options.braid = os.path.abspath(options.braid)
    for tool in [tool for tool in options.tools if tool != "braid"] + ["openssl", harness.processes.GNU_TIME]:
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} not found on PATH; install it or leave it out of --tools")
    harness.require_executable(harness.nginx.NGINX)


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
    reports = []
    with harness.Workspace("braid-compare.", options.workdir) as work:
        bench = Bench(options, work)
        bench.prepare(needed_sizes(options))
        for number in options.only:
            log(f"scenario {number}")
            reports.append(getattr(bench, f"scenario_{number}")())
    versions = [[tool, "--version"] for tool in PEERS if tool in options.tools] + [[harness.nginx.NGINX, "-v"]]
    lines = harness.describe(versions) + [
        f"braid at commit {harness.commit()}",
        f"tools: {','.join(options.tools)}; runs per tool and scenario: {options.repeat}, alternating",
    ]
    harness.print_lines(lines, options.markdown)
    for report in reports:
        harness.print_report(report, options.markdown)
    return 1 if any(report.failed() for report in reports) else 0


if __name__ == "__main__":
    harness.main(main)
