#!/usr/bin/env python3
"""Use the bytes while they arrive (issue 30): `braid --extract` against downloading then unpacking, and
`braid -o - | sha256sum` against the plain download, side by side in one run.

One archive: a tar of many files (`--size`, 2 GiB by default: files of `--file-size` and a directory of small
ones), served by nginx at `--rate` per connection (25 MiB/s, `limit_rate 25m`, paced by `sendfile_max_chunk 64k`).
Tools, alternating, `--no-fsync` for braid (the peers do not flush either), every tree checked file by file against
the source's MD5s:

- `braid --extract DIR -n 8`: unpacks while it downloads, the archive's bytes freed as they are unpacked;
- `braid --extract DIR -n 8 --keep-archive`: the same, the archive kept;
- `braid -o FILE -n 8` then `tar -xf FILE`: the plain download (the reference), then the unpacking;
- `curl URL | tar -x`: one connection, unpacked as it arrives (what `pget` does, without a crash to survive);
- `aria2c -x8 -s8 -k1M` then `tar -xf FILE`;
- `braid -o - -n 8 | sha256sum`: the file in order to a pipe, its digest checked against the archive's.

Measured per run: the time to the unpacked tree (for two-step tools, the download's and the unpacking's), and the
peak disk use of the run's directory, sampled every `--sample` seconds (allocated blocks, so that the holes braid
punches in its partial file count as freed).

Goals (issue 30): `braid --extract`'s time at most 1.1 x the plain download's; its peak disk at most the tree
plus one window (`--window`, braid's default 256 MiB) without `--keep-archive`; `-o - | sha256sum` at most 1.1 x
the plain download.

Usage: Benchmarks/stream_extract.py [--size 2G] [--quick] [--repeat 3] [--only extract,stdout] [--markdown]
       [--workdir DIR]
All traffic stays on 127.0.0.1; every server and child is stopped on exit. Exit status 1 when a goal fails.
"""

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import GiB, KiB, Location, MiB, Verdict, format_size, log  # noqa: E402

SMALL_FILES = 256  # in a directory of their own, besides the large ones
SMALL_SIZE = 16 * KiB


# MARK: The archive and its tree


@dataclass
class Tree:
    """The archive's contents: each file's path below the tree, size and MD5; what they take on disk."""

    files: dict  # relative path -> (size, md5)
    allocated: int  # the source tree's disk use, in bytes (allocated blocks)


def make_archive(work, size, file_size):
    """A tree of `size` bytes in files of `file_size` and SMALL_FILES small ones, and its tar in the document root.

    Returns (Tree, the archive's size, its SHA-256). A kept work directory reuses both.
    """
    tree_root = work.path("tree")
    small = harness.generate_files(os.path.join(tree_root, "small"), "s", SMALL_FILES, SMALL_SIZE, seed=2)
    count = max(1, (size - SMALL_FILES * SMALL_SIZE) // file_size)
    large = harness.generate_files(os.path.join(tree_root, "data"), "d", count, file_size, seed=1)
    files = {f"small/{name}": (length, digest) for name, length, digest in small}
    files.update({f"data/{name}": (length, digest) for name, length, digest in large})
    os.makedirs(work.document_root, exist_ok=True)
    archive = os.path.join(work.document_root, "tree.tar")
    stamp = archive + ".sha256"
    expected = sum(length for length, _ in files.values())
    if not (os.path.exists(stamp) and os.path.exists(archive) and os.path.getsize(archive) > expected):
        log(f"archiving {len(files)} files ({format_size(expected)}) into {archive}")
        subprocess.run(["tar", "-cf", archive, "--exclude=*.md5sums", "-C", tree_root, "data", "small"], check=True)
        with open(stamp, "w") as written:
            written.write(harness.digest_of(archive, "sha256") + "\n")
    with open(stamp) as cached:
        digest = cached.read().strip()
    return Tree(files, allocated(tree_root, skip=".md5sums")), os.path.getsize(archive), digest


def allocated(root, skip=None):
    """The disk blocks of every file below `root` (holes not counted), in bytes; files vanishing meanwhile skipped."""
    total = 0
    stack = [root]
    while stack:
        directory = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif not (skip and entry.name.endswith(skip)):
                    total += entry.stat(follow_symlinks=False).st_blocks * 512
            except OSError:
                continue
    return total


def check_tree(root, tree):
    """"" when `root` holds exactly the tree's files with their MD5s; otherwise what differs."""
    found = {}
    for directory, _, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            found[os.path.relpath(path, root)] = path
    missing = sorted(set(tree.files) - set(found))
    extra = sorted(set(found) - set(tree.files))
    if missing or extra:
        return f"{len(missing)} files missing ({missing[:2]}), {len(extra)} unexpected ({extra[:2]})"
    for relative, (size, digest) in tree.files.items():
        if os.path.getsize(found[relative]) != size or harness.digest_of(found[relative]) != digest:
            return f"{relative} differs from the source"
    return ""


class DiskSampler:
    """The peak of `allocated(root)` while a run lasts, sampled every `interval` seconds on a thread."""

    def __init__(self, root, interval):
        self.root = root
        self.interval = interval
        self.peak = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.sample, daemon=True)

    def sample(self):
        while True:
            self.peak = max(self.peak, allocated(self.root))
            if self.stopping.wait(self.interval):
                return

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exception):
        self.stopping.set()
        self.thread.join()
        self.peak = max(self.peak, allocated(self.root))


# MARK: The tools


@dataclass
class Step:
    """One command of a tool's run: its label in the table and its argv (run through bash when a string)."""

    name: str
    argv: object


@dataclass
class Result:
    ok: bool
    wall: float = 0.0
    steps: list = field(default_factory=list)  # each step's wall time
    peak_disk: int = 0
    error: str = ""


@dataclass
class Tool:
    """A way to get from the URL to the tree (or to the digest): its steps, run in order in an empty directory."""

    label: str
    steps: object  # steps(url, out) -> [Step]
    digest_only: bool = False  # it prints the archive's SHA-256 rather than unpacking it
    plain: bool = False  # the plain download: its first step is the reference time
    key: str = ""  # its name for --only
    results: list = field(default_factory=list)

    def successes(self):
        return [result for result in self.results if result.ok]

    def median(self, metric="wall", step=None):
        values = [result.steps[step] if step is not None else getattr(result, metric) for result in self.successes()]
        return statistics.median(values) if values else None


def tools(braid, connections, window):
    n = ["-n", str(connections), "--no-fsync", "-q"] + (["--stream-window", window] if window else [])
    quoted = " ".join(n)

    def extract(*extra):
        return lambda url, out: [Step("braid --extract", [braid, url, "--extract", f"{out}/tree", "-d",
                                                          f"{out}/state", *n, *extra])]

    return [
        Tool(f"braid --extract -n {connections}", extract(), key="extract"),
        Tool(f"braid --extract -n {connections} --keep-archive", extract("--keep-archive"), key="keep"),
        Tool(f"braid -n {connections}, then tar -x", lambda url, out: [
            Step("braid", [braid, url, "-o", f"{out}/tree.tar", *n]),
            Step("tar -x", f"mkdir -p {out}/tree && tar -xf {out}/tree.tar -C {out}/tree"),
        ], plain=True, key="plain"),
        Tool("curl | tar -x", lambda url, out: [
            Step("curl | tar -x", f"set -o pipefail; mkdir -p {out}/tree && curl -q -sSf {url} | tar -xf - -C {out}/tree"),
        ], key="curl"),
        Tool(f"aria2c -x{connections} -s{connections} -k1M, then tar -x", lambda url, out: [
            Step("aria2c", ["aria2c", "--no-conf=true", f"-x{connections}", f"-s{connections}", "-k1M",
                            "--allow-overwrite=true", "--auto-file-renaming=false", "--file-allocation=none",
                            "-d", out, "-o", "tree.tar", "--console-log-level=warn", "--summary-interval=0", url]),
            Step("tar -x", f"mkdir -p {out}/tree && tar -xf {out}/tree.tar -C {out}/tree"),
        ], key="aria2c"),
        Tool(f"braid -o - -n {connections} | sha256sum", lambda url, out: [
            Step("braid -o - | sha256sum", f"set -o pipefail; {braid} {url} -o - -d {out}/state {quoted} | sha256sum"),
        ], digest_only=True, key="stdout"),
    ]


def measure(work, tool, url, tree, digest, interval, timeout):
    """Runs `tool`'s steps in an empty directory, sampling its disk use; checks the tree, or the printed digest."""
    out = harness.empty_directory(work.path("out"))
    os.sync()
    result = Result(ok=False)
    stdout_path = work.path("run.stdout")
    stderr_path = work.path("run.stderr")
    with DiskSampler(out, interval) as sampler:
        for step in tool.steps(url, out):
            argv = ["bash", "-c", step.argv] if isinstance(step.argv, str) else step.argv
            with open(stdout_path, "wb") as stdout, open(stderr_path, "wb") as stderr:
                exited = work.children.run(argv, timeout, stdout, stderr, cwd=out)
            result.steps.append(exited.wall)
            if exited.timed_out or exited.code != 0:
                with open(stderr_path, errors="replace") as stderr:
                    text = stderr.read().strip()
                result.error = f"{step.name}: {'timed out' if exited.timed_out else f'exit {exited.code}'}: {text[-300:]}"
                break
    result.wall = sum(result.steps)
    result.peak_disk = sampler.peak
    if not result.error:
        if tool.digest_only:
            with open(stdout_path, errors="replace") as stdout:
                printed = stdout.read().strip()
            if not printed.startswith(digest):
                result.error = f"sha256sum printed {printed[:80]}, not the archive's {digest}"
        else:
            result.error = check_tree(os.path.join(out, "tree"), tree)
    result.ok = not result.error
    return result


# MARK: The report


def report(tools_run, tree, archive_size, window, markdown):
    plain = next(tool for tool in tools_run if tool.plain)
    plain_download = plain.median(step=0)
    extract = next((tool for tool in tools_run if tool.key == "extract"), None)
    pipe = next((tool for tool in tools_run if tool.digest_only), None)
    header = ["tool", "ok", "time to tree s", "steps (median s)", "MiB/s", "peak disk", "peak - tree",
              "x plain download"]
    rows = []
    for tool in tools_run:
        done = tool.successes()
        ok = f"{len(done)}/{len(tool.results)}"
        if not done:
            errors = "; ".join(result.error for result in tool.results)[:200]
            rows.append([tool.label, ok, "FAILED", errors, "", "", "", ""])
            continue
        wall = tool.median()
        steps = " + ".join(f"{tool.median(step=index):.2f}" for index in range(len(done[0].steps)))
        peak = max(result.peak_disk for result in done)
        beyond = "-" if tool.digest_only else format_size(max(0, peak - tree.allocated))
        rows.append([tool.label, ok, f"{wall:.2f}", steps, f"{archive_size / MiB / wall:.0f}", format_size(peak),
                     beyond, f"{wall / plain_download:.2f}" if plain_download else "-"])
    harness.print_table(header, rows, markdown=markdown)
    log(f"tree {format_size(tree.allocated)} on disk, archive {format_size(archive_size)}; time to tree for a "
        "two-step tool is the sum of its steps; 'x plain download' divides by braid's download alone (its first "
        "step); peak disk is the largest over the runs")

    verdicts = [
        harness.ratio_verdict("braid --extract time / plain download",
                              harness.ratio(extract and extract.median(), plain_download), 1.1),
        disk_verdict(extract, tree, window),
        harness.ratio_verdict("braid -o - | sha256sum / plain download",
                              harness.ratio(pipe and pipe.median(), plain_download), 1.1),
    ]
    for verdict in verdicts:
        print(f"{verdict.status:4}  {verdict.text}")
    return verdicts


def disk_verdict(tool, tree, window):
    done = tool.successes() if tool else []
    if not done:
        return Verdict("braid --extract peak disk: not measured", "N/A")
    peak = max(result.peak_disk for result in done)
    limit = tree.allocated + window
    return Verdict(f"braid --extract peak disk = {format_size(peak)} (target <= tree {format_size(tree.allocated)} "
                   f"+ window {format_size(window)} = {format_size(limit)})", "PASS" if peak <= limit else "FAIL")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="2G", help="the archive's contents (default 2G)")
    parser.add_argument("--file-size", default="4M", help="the size of its large files (default 4M)")
    parser.add_argument("--rate", default="25M", help="nginx's limit_rate per connection (default 25M)")
    parser.add_argument("--connections", type=int, default=8, help="braid's -n and aria2c's -x/-s (default 8)")
    parser.add_argument("--window", default=None,
                        help="braid's --stream-window (default: braid's own, 256M, which the disk goal assumes)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per tool (default 3; the median counts)")
    parser.add_argument("--only", default="",
                        help="some tools, by name: extract,keep,plain,curl,aria2c,stdout (plain always runs)")
    parser.add_argument("--quick", action="store_true", help="a 256M archive, one run per tool")
    parser.add_argument("--sample", type=float, default=0.1, help="seconds between two disk samples (default 0.1)")
    parser.add_argument("--braid", default=harness.built("braid"), help="the braid binary (default the release one)")
    parser.add_argument("--workdir", help="keep the generated tree and archive here for the next run")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    options = parser.parse_args(argv)
    if options.quick:
        options.size, options.repeat = "256M", 1
    braid = harness.require_executable(options.braid, "braid")
    for tool in ("curl", "aria2c", "tar", "sha256sum"):
        harness.require_executable(tool)
    size, file_size, rate = (harness.parse_size(text) for text in (options.size, options.file_size, options.rate))
    window = harness.parse_size(options.window) if options.window else 256 * MiB

    with harness.Workspace("braid-stream.", options.workdir) as work:
        tree, archive_size, digest = make_archive(work, size, file_size)
        nginx = work.nginx([Location.directory("paced", work.document_root, rate=rate, paced=True)])
        url = nginx.url("/paced/tree.tar")
        tools_run = tools(braid, options.connections, options.window)
        if options.only:
            chosen = set(options.only.split(",")) | {"plain"}
            unknown = chosen - {tool.key for tool in tools_run}
            if unknown:
                raise SystemExit(f"--only: no tool named {', '.join(sorted(unknown))}")
            tools_run = [tool for tool in tools_run if tool.key in chosen]
        # A run may take the archive at one connection's rate, twice over (download, then unpack), and then some.
        timeout = 60 + 3 * archive_size / rate
        log(f"{len(tree.files)} files, archive {format_size(archive_size)}, {harness.format_rate(rate)} per "
            f"connection, {options.repeat} runs per tool")
        for round_number in range(options.repeat):
            for index, tool in enumerate(tools_run):
                result = measure(work, tool, url, tree, digest, options.sample, timeout)
                tool.results.append(result)
                number = round_number * len(tools_run) + index + 1
                shown = f"{result.wall:.2f} s, peak disk {format_size(result.peak_disk)}" if result.ok \
                    else f"FAILED ({result.error})"
                log(f"  [{number}/{options.repeat * len(tools_run)}] {tool.label}: {shown}")
    print()
    print(f"stream_extract: {format_size(archive_size)} tar of {len(tree.files)} files, nginx limit_rate "
          f"{format_size(rate)}/s per connection (paced), {options.repeat} runs per tool, commit {harness.commit()}")
    for line in harness.describe([["curl", "--version"], ["aria2c", "--version"], ["tar", "--version"]]):
        print(f"  {line}")
    verdicts = report(tools_run, tree, archive_size, window, options.markdown)
    return 1 if any(verdict.status == "FAIL" for verdict in verdicts) else 0


harness.main(main)
