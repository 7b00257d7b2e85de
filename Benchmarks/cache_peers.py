#!/usr/bin/env python3
"""A fleet pulls once (issue 31): N clients fetch one file at the same moment, through cache peers or not.

For each client count, side by side in one run:

1. `braid --cache-peers` through three nginx caches (`proxy_cache` with the `slice` module, slices of
   `--slice-size`, `proxy_cache_lock`), started cold for every run, each slice given to the cache that
   rendezvous hashing picks, every file checked against `--checksum`;
2. braid from the origin directly (the same flags without peers);
3. `aria2c -x16 -s16 -k1M` from the origin directly.

Measured per run: the fleet's wall time (the first start to the last exit), the bytes of the file the origin sent
(body bytes in its access log: what egress and per-IP throttling count), and every client's file against the
source's MD5 (a run with a wrong file or a failed client is marked FAILED). The goal: with peers, the origin's
bytes stay flat (about one file, at most 1.1 files) however many clients pull; without, they grow with the
clients. The exit status is 1 when that goal fails.

`--origin-rate` throttles each origin connection (nginx `limit_rate`) and `--origin-connections` caps how many it
serves at once (503 with `Retry-After: 1` beyond): together, an origin whose egress is limited, as a far origin or
its per-IP throttling limits it. The caches are not throttled. All traffic stays on 127.0.0.1; nginx and every
child are stopped on exit.

Usage: Benchmarks/cache_peers.py [--size 1G] [--clients 1,8] [--origin-rate 4M --origin-connections 16]
       [--tools braid-peers,braid,aria2c] [--markdown] (see --help)
"""

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Location, format_rate, format_size, log, parse_size  # noqa: E402

TOOLS = ("braid-peers", "braid", "aria2c")


def origin_bytes(lines):
    """The body bytes of the file's responses among access log `lines` (`$status $body_bytes_sent ...`)."""
    total = 0
    for line in lines:
        fields = line.split(maxsplit=2)
        if len(fields) == 3 and fields[1].isdigit() and b"/file.bin " in fields[2]:
            total += int(fields[1])
    return total


class Bench:
    def __init__(self, options, work):
        self.options = options
        self.work = work
        self.braid = harness.built("braid")
        self.digest = work.file("file.bin", options.size)
        if options.origin_connections:
            locations = [Location.conn_limited("/origin/", work.document_root, options.origin_connections,
                                               rate=options.origin_rate)]
        else:
            locations = [Location.directory("/origin/", work.document_root, rate=options.origin_rate)]
        self.origin = work.nginx(locations, name="origin")
        self.url = self.origin.url("/origin/file.bin")
        self.runs = 0

    def braid_argv(self, output, peers):
        argv = [self.braid, self.url, "-o", output, "-q", "--checksum", f"md5={self.digest}",
                *shlex.split(self.options.braid_args)]
        if peers:
            argv += ["--cache-peers", ",".join(peers), "--slice-size", self.options.slice_size]
        return argv

    def aria2c_argv(self, output):
        return harness.peers.aria2c("-x16", "-s16", "-k1M").command(self.url, output, None)

    def caches(self):
        """Fresh, cold caches in front of the origin; their templates."""
        self.runs += 1
        slice_size = self.options.slice_size.lower()
        return [self.work.nginx([Location.slice_cache("/cache/", self.origin.url("/"), slice_size)],
                                name=f"cache-{self.runs}-{index}")
                for index in range(self.options.caches)]

    def fleet(self, tool, clients):
        """One run of `clients` copies of `tool` started together: (wall seconds, origin bytes, failure or None)."""
        out = self.work.scratch("out")
        harness.empty_directory(out)
        caches = self.caches() if tool == "braid-peers" else []
        peers = [f"http://127.0.0.1:{cache.port}/cache{{path}}" for cache in caches]
        outputs = [os.path.join(out, f"copy-{index}.bin") for index in range(clients)]
        subprocess.run(["sync"], check=False)
        offset = self.origin.log.size()
        started = time.monotonic()
        processes = []
        for index, output in enumerate(outputs):
            argv = self.aria2c_argv(output) if tool == "aria2c" else self.braid_argv(output, peers)
            stderr = open(os.path.join(out, f"stderr-{index}.txt"), "wb")
            processes.append((self.work.children.popen(argv, stdout=subprocess.DEVNULL, stderr=stderr), stderr))
        failure = None
        for process, stderr in processes:
            status = process.wait(timeout=self.options.timeout)
            stderr.close()
            self.work.children.forget(process)
            if status != 0 and failure is None:
                with open(stderr.name, errors="replace") as file:
                    last = (file.read().strip().splitlines() or [""])[-1]
                    failure = f"exit {status}: {last[:200]}"
        wall = time.monotonic() - started
        for output in outputs:
            if failure is None and (not os.path.exists(output) or harness.digest_of(output) != self.digest):
                failure = f"{output} differs from the source"
        served = origin_bytes(self.origin.log.lines_since(offset))
        for cache in caches:
            cache.stop()
            shutil.rmtree(cache.directory, ignore_errors=True)
        harness.empty_directory(out)
        return wall, served, failure


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=parse_size, default=parse_size("1G"), help="the file (default 1G)")
    parser.add_argument("--clients", default="1,8", help="client counts, comma-separated (default 1,8)")
    parser.add_argument("--caches", type=int, default=3, help="nginx caches (default 3)")
    parser.add_argument("--slice-size", default="16M", help="braid's --slice-size and the caches' slice (16M)")
    parser.add_argument("--origin-rate", type=parse_size, default=0, help="bytes/s per origin connection (none)")
    parser.add_argument("--origin-connections", type=int, default=0,
                        help="connections the origin serves at once, 503 beyond (none): loopback clients share one "
                        "address, so this caps the origin's egress as a per-IP limit caps each host")
    parser.add_argument("--tools", default=",".join(TOOLS), help=f"of {','.join(TOOLS)}")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each (tool, clients)")
    parser.add_argument("--braid-args", default="--no-fsync", help="extra flags for every braid run")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds a fleet may take")
    parser.add_argument("--workdir", help="keep the generated file here for the next run")
    parser.add_argument("--markdown", action="store_true")
    options = parser.parse_args(argv)
    tools = [tool for tool in options.tools.split(",") if tool]
    for tool in tools:
        if tool not in TOOLS:
            raise SystemExit(f"unknown tool {tool}; known: {', '.join(TOOLS)}")
    if "aria2c" in tools:
        harness.require_executable("aria2c")
    counts = [int(count) for count in options.clients.split(",")]

    versions = [["nginx", "-v"], ["aria2c", "--version"]]
    print("\n".join(harness.describe(versions) + [f"braid {harness.commit()}, {harness.built('braid')}"]))
    rows, goal_failed = [], False
    with harness.Workspace("braid-cache-peers.", options.workdir) as work:
        bench = Bench(options, work)
        rate = f", origin {format_rate(options.origin_rate)} per connection" if options.origin_rate else ""
        rate += f", at most {options.origin_connections} at once" if options.origin_connections else ""
        log(f"{format_size(options.size)} file, {options.caches} caches, slices of {options.slice_size}{rate}")
        for clients in counts:
            for _ in range(options.repeat):
                for tool in tools:
                    label = "braid --cache-peers" if tool == "braid-peers" else tool
                    log(f"{clients} x {label} ...")
                    wall, served, failure = bench.fleet(tool, clients)
                    files = served / options.size
                    verdict = ""
                    if tool == "braid-peers":
                        verdict = "ok" if files <= 1.1 else "FAIL (goal: at most 1.1 files)"
                        goal_failed |= files > 1.1 or failure is not None
                    rows.append([str(clients), label, "FAILED: " + failure if failure else f"{wall:.1f} s",
                                 format_rate(options.size * clients / wall) if not failure else "",
                                 format_size(served), f"{files:.2f}", verdict])
                    log(f"  {rows[-1]}")
    header = ["clients", "tool", "fleet wall", "fleet rate", "origin sent", "files' worth", "goal"]
    harness.print_table(header, rows, markdown=options.markdown, align="llrrrrl")
    return 1 if goal_failed else 0


harness.main(main)
