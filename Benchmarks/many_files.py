#!/usr/bin/env python3
"""Many files at line rate (issue 28): a list of many small files and a few shards, braid against its peers.

Three variants, each side by side in one run, 16 downloads at a time for every tool:

1. 1,000 files of 64 KiB and four 64 MiB shards over HTTPS from a local nginx that offers HTTP/2;
2. the same over plain HTTP (HTTP/1.1);
3. 10,000 files of 4 KiB and the four shards over HTTPS.

Tools: `braid -i list -j 16 --no-fsync`, braid with its default -j, `aria2c -i list -j 16 -x 16`, `wget2 -i list
--max-threads 16`, `curl --parallel --parallel-max 16 -K config`, and `floor`, which is not a peer but a reference:
`floor/list_floor.c`, built here with the system's C compiler, a list downloader of braid's shape (two threads with
a multi handle each, as braid's two lanes, -j shared between them; bodies held in memory and written to
files made without a name, then linked) with none of braid's own code, no probe, option or check but the status and
the length: what libcurl and the kernel charge a client of braid's shape, the rest of braid's row being its own
code. Every run downloads into an empty directory beside the served files and is verified file by file (every
digest, nothing missing, nothing extra); a tool that fails is marked FAILED, never timed. The server counts what
each run cost it: requests, connections (distinct `$connection` serial numbers in nginx's access log, and the
connections its stub_status accepted), TLS sessions new or resumed (`$ssl_session_reused`), and the requests'
protocols.

Goal, for each braid row: wall at most 0.9 of the best peer's (aria2c, wget2, curl: never the floor), connections
opened at most the cap (`--max-connections-per-host`, 16 by default), CPU at most the best peer's. The exit status
is 1 when a goal fails. All traffic stays on 127.0.0.1; nginx and every child are stopped on exit.

Usage: Benchmarks/many_files.py [--quick] [--only 1,3] [--repeat 3] [--tools ...] [--markdown] (see --help).
"""

import argparse
import os
import shlex
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import MiB, Report, Verdict, format_size, log, median, peers, ratio, ratio_verdict  # noqa: E402
from harness.runs import measured_median  # noqa: E402

TOOLS = ("braid", "braid-default", "aria2c", "wget2", "curl", "floor")
PEERS = ("aria2c", "wget2", "curl")
EXECUTABLES = {"aria2c": "aria2c", "wget2": "wget2", "curl": "curl"}
BRAID_DEFAULT_CAP = 16  # braid's --max-connections-per-host when not given
FLOOR_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "floor", "list_floor.c")
C_COMPILERS = ("cc", "clang", "gcc")


class Bench:
    def __init__(self, options, work):
        self.options = options
        self.work = work
        self.files = {}  # kind ("small", "tiny", "shards") -> [(path on the server, name, size, digest)]
        self.nginx = None

    # The files and the server

    def generate(self, kind, count, size):
        directory = os.path.join(self.work.document_root, kind)
        self.files[kind] = [(f"/{kind}/{name}", name, size, digest)
                            for name, size, digest in harness.generate_files(directory, kind, count, size)]

    def prepare(self):
        options = self.options
        shards = []
        os.makedirs(os.path.join(self.work.document_root, "shards"), exist_ok=True)
        for index in range(options.shards):
            name = f"shard-{index}.bin"
            digest = harness.generate_file(os.path.join(self.work.document_root, "shards", name), options.shard_size)
            shards.append((f"/shards/{name}", name, options.shard_size, digest))
        self.files["shards"] = shards
        if {1, 2} & set(options.only):
            self.generate("small", options.files, options.file_size)
        if 3 in options.only:
            self.generate("tiny", options.small_files, options.small_file_size)
        self.nginx = self.work.nginx(http2=True)
        if "floor" in options.tools:
            self.floor = self.work.path("list_floor")
            command = [options.compiler, "-O2", "-o", self.floor, FLOOR_SOURCE, "-lcurl", "-lpthread"]
            log("$ " + shlex.join(command))
            subprocess.run(command, check=True)

    def file_set(self, kind, tls):
        """The list: the small files with the shards spread through it, at 0, 1/4, 1/2 and 3/4 of the way."""
        small, shards = self.files[kind], self.files["shards"]
        entries = []
        for index, shard in enumerate(shards):
            entries.append(shard)
            entries += small[index * len(small) // len(shards):(index + 1) * len(small) // len(shards)]
        entries = entries or small
        name = f"{len(small)} x {format_size(small[0][2])} + {len(shards)} x {format_size(self.options.shard_size)}"
        return self.nginx.file_set(name, entries, tls=tls)

    # The tools

    def tools(self):
        options = self.options
        jobs = str(options.jobs)
        braid_args = shlex.split(options.braid_args)
        made = {
            "braid": lambda: peers.braid_list(options.braid, "-j", jobs, "-q", *braid_args),
            "braid-default": lambda: peers.braid_list(options.braid, "-q", *braid_args),
            "aria2c": lambda: peers.aria2c_list("-j", jobs, "-x", jobs),
            "wget2": lambda: peers.wget2_list("--max-threads", jobs),
            "curl": lambda: peers.curl_parallel("--parallel-max", jobs),
            "floor": lambda: peers.list_floor(self.floor, *floor_shape(options)),
        }
        # A braid that flushes (its default) is timed against peers whose files are flushed too: like with like.
        flushes = "--no-fsync" not in braid_args
        return [(tool, peers.then_sync(made[tool]()) if flushes and tool in (*PEERS, "floor") else made[tool]())
                for tool in options.tools]

    # A variant

    def variant(self, number):
        options = self.options
        kind, tls = {1: ("small", True), 2: ("small", False), 3: ("tiny", True)}[number]
        file_set = self.file_set(kind, tls)
        protocol = "HTTPS, HTTP/2 offered" if tls else "plain HTTP"
        report = Report(f"Variant {number}: {file_set.name} over {protocol}, {options.jobs} at a time", file_set.size,
                        connections=True)
        lists = self.work.path("lists", f"variant-{number}")
        tools = self.tools()
        report.jobs = [tool.job(file_set, lists) for _, tool in tools]
        count = len(file_set.entries)
        timeout = options.run_timeout or 120 + 0.1 * count + file_set.size / (4 * MiB)
        self.work.runner(timeout=timeout).alternate(report.jobs, options.repeat, str(number))
        jobs = dict(zip([name for name, _ in tools], report.jobs))
        others = [jobs[tool] for tool in PEERS if tool in jobs]
        peer, peer_wall = harness.best(others)
        cpu_peer, peer_cpu = harness.best(others, "cpu")
        report.columns = [("wall / best peer", lambda job: ratio_text(ratio(median(job), peer_wall))),
                          ("server CPU s", lambda job: seconds_text(measured_median(job, "server_cpu"))),
                          ("cores busy", lambda job: cores_busy_text(job))]
        if peer:
            report.notes.append(f"best peer by wall: {peer.label} ({peer_wall:.3f} s); by CPU: {cpu_peer.label} "
                                f"({peer_cpu:.3f} s)")
        report.notes.append(f"{count} files, {format_size(file_set.size)} in all; 'connections' are distinct "
                            "$connection numbers in the access log, 'accepted' nginx's stub_status count")
        report.notes.append(f"'server CPU' is what nginx's processes spent serving the run; 'cores busy' the tool's "
                            f"CPU and the server's over the wall, of this machine's {os.cpu_count()}: near all of "
                            "them, the tool's wall is bound by the CPU the two need together")
        if "floor" in jobs:
            report.notes.append("'floor' is not a peer: braid's shape in C with none of its code (floor/list_floor.c); "
                                "braid's row less the floor's is what braid's own code costs")
        for tool in ("braid", "braid-default"):
            if tool in jobs:
                report.verdicts += self.verdicts(jobs[tool], peer, peer_wall, cpu_peer, peer_cpu)
        return report

    def verdicts(self, braid, peer, peer_wall, cpu_peer, peer_cpu):
        cap = connection_cap(self.options.braid_args)
        connections = [value for value in (measured_median(braid, "accepted"),
                                           measured_median(braid, "connections")) if value is not None]
        opened = max(connections) if connections else None
        opened_verdict = ratio_verdict(f"{braid.label}: connections opened", opened, cap)
        if opened is not None:
            opened_verdict = Verdict(f"{braid.label}: connections opened = {opened:g} (target <= {cap})",
                                     opened_verdict.status)
        return [
            ratio_verdict(f"{braid.label}: wall / best peer's ({peer.label if peer else '-'})",
                          ratio(median(braid), peer_wall), 0.90),
            opened_verdict,
            ratio_verdict(f"{braid.label}: CPU / best peer's ({cpu_peer.label if cpu_peer else '-'})",
                          ratio(median(braid, "cpu"), peer_cpu), 1.00),
        ]


def ratio_text(value):
    return "-" if value is None else f"{value:.2f}"


def seconds_text(value):
    return "-" if value is None else f"{value:.3f}"


def cores_busy_text(job):
    """The cores the tool and the server kept busy together, the medians of their CPU over the median wall."""
    wall, cpu, server = median(job), median(job, "cpu"), measured_median(job, "server_cpu")
    if not wall or cpu is None or server is None:
        return "-"
    return f"{(cpu + server) / wall:.2f} of {os.cpu_count()}"


def floor_shape(options):
    """The floor's threads and transfers on each: braid's lanes (two where there are two cores and a per-host cap
    of at least 8, as `PoolLanes.defaultCount`), -j shared between them."""
    threads = 2 if (os.cpu_count() or 1) >= 2 and connection_cap(options.braid_args) >= 8 and options.jobs >= 2 else 1
    return threads, -(-options.jobs // threads)


def connection_cap(braid_args):
    """braid's --max-connections-per-host in `braid_args`, else its default."""
    arguments = shlex.split(braid_args)
    for index, argument in enumerate(arguments):
        if argument.startswith("--max-connections-per-host="):
            return int(argument.split("=", 1)[1])
        if argument == "--max-connections-per-host" and index + 1 < len(arguments):
            return int(arguments[index + 1])
    return BRAID_DEFAULT_CAP


# MARK: Command line


def parse_options(argv):
    parser = argparse.ArgumentParser(
        description="Many small files and a few shards in one list: braid against aria2c, wget2 and curl on a "
                    "local nginx (127.0.0.1 only).",
    )
    parser.add_argument("--braid", default=harness.built("braid"), help="the braid binary (default: %(default)s)")
    parser.add_argument("--braid-args", default="--no-fsync",
                        help="arguments for both braid rows (default: %(default)s); options whose value starts "
                             "with '-' take it after '='. Without --no-fsync braid flushes every file, and each "
                             "peer is then followed by `sync -f DIR`")
    parser.add_argument("--tools", default=",".join(TOOLS), help="comma-separated subset of %(default)s")
    parser.add_argument("--only", default="1,2,3", help="comma-separated variant numbers (default: all)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per tool and variant (default: 3)")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 100 files of 64 KiB, 1,000 of 4 KiB, 4 shards of 8 MiB")
    parser.add_argument("-j", "--jobs", type=int, default=16, help="downloads at a time, every tool (default: 16)")
    parser.add_argument("--files", type=int, help="files in variants 1 and 2 (default 1000, quick 100)")
    parser.add_argument("--file-size", type=harness.parse_size, default="64K",
                        help="their size (default: 64K)")
    parser.add_argument("--small-files", type=int, help="files in variant 3 (default 10000, quick 1000)")
    parser.add_argument("--small-file-size", type=harness.parse_size, default="4K",
                        help="their size (default: 4K)")
    parser.add_argument("--shards", type=int, default=4, help="large files in every variant (default: 4)")
    parser.add_argument("--shard-size", type=harness.parse_size, help="their size (default 64M, quick 8M)")
    parser.add_argument("--run-timeout", type=float,
                        help="seconds before a run is killed (default: 120 + 0.1 per file + 1 per 4 MiB)")
    parser.add_argument("--workdir", help="keep the test files and nginx here (reused next time) instead of a temp dir")
    parser.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    options = parser.parse_args(argv)

    options.tools = [tool.strip() for tool in options.tools.split(",") if tool.strip()]
    if unknown := set(options.tools) - set(TOOLS):
        parser.error(f"unknown tools {sorted(unknown)}; choose from {','.join(TOOLS)}")
    try:
        options.only = sorted({int(number) for number in options.only.split(",")})
    except ValueError:
        parser.error("--only takes variant numbers, e.g. 1,3")
    if not set(options.only) <= {1, 2, 3}:
        parser.error("variants are numbered 1 to 3")
    if options.repeat < 1 or options.jobs < 1 or options.shards < 0:
        parser.error("--repeat and -j must be at least 1, --shards at least 0")
    options.files = options.files or (100 if options.quick else 1000)
    options.small_files = options.small_files or (1000 if options.quick else 10000)
    options.shard_size = options.shard_size or (8 * MiB if options.quick else 64 * MiB)
    if options.files < 1 or options.small_files < 1:
        parser.error("--files and --small-files must be at least 1")
    return options


def check_tools(options):
    if {"braid", "braid-default"} & set(options.tools):
        options.braid = harness.require_executable(options.braid, "braid")
    if "floor" in options.tools:
        options.compiler = next(filter(None, map(shutil.which, C_COMPILERS)), None)
        if options.compiler is None:
            raise SystemExit("no C compiler (cc, clang or gcc) to build the floor; install one or leave floor out "
                             "of --tools")
    for tool in [EXECUTABLES[tool] for tool in options.tools if tool in EXECUTABLES] + [
            "openssl", harness.processes.GNU_TIME]:
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} not found; install it (scripts/install-deps) or leave it out of --tools")
    harness.require_executable(harness.nginx.NGINX)


def main(argv):
    options = parse_options(argv)
    check_tools(options)
    reports = []
    load_at_start = os.getloadavg()[0]
    with harness.Workspace("braid-many-files.", options.workdir) as work:
        bench = Bench(options, work)
        bench.prepare()
        for number in options.only:
            log(f"variant {number}")
            reports.append(bench.variant(number))
    versions = [[EXECUTABLES[tool], "--version"] for tool in PEERS if tool in options.tools]
    lines = harness.describe(versions + [[harness.nginx.NGINX, "-v"]]) + [
        f"repository at {harness.commit()}; braid: {options.braid}",
        f"tools: {','.join(options.tools)}; {options.repeat} runs per tool and variant, alternating; "
        f"braid arguments: {options.braid_args or '(none)'}",
        f"load average (1 min): {load_at_start:.2f} at the start, {os.getloadavg()[0]:.2f} at the end",
    ]
    harness.print_lines(lines, options.markdown)
    for report in reports:
        harness.print_report(report, options.markdown)
    return 1 if any(report.failed() for report in reports) else 0


if __name__ == "__main__":
    harness.main(main)
