"""Timed, verified runs of several commands, alternating, and what is said about them: medians, ratios, verdicts.

Commands alternate (A B C A B C ...) so that drift in the machine's state hits all of them alike. Each run
downloads into an empty directory, after an untimed `sync` so that one run's write-back is not charged to the
next, and a run whose exit status is not 0 or whose file does not match the source's digest (for a FileSet: any
file missing, different or unexpected) is FAILED and left out of the statistics.
"""

import os
import shutil
import statistics
import tempfile
import time
import urllib.parse
from dataclasses import dataclass, field

from .files import MiB, digest_of
from .processes import log
from .sockets import ConnectionSampler


@dataclass
class Run:
    """One run of a job: what it cost, what the server saw, and why it failed (`ok` False) if it did."""

    ok: bool
    wall: float = 0.0
    cpu: float = 0.0  # user + system seconds, the tool and its children (wait4)
    rss_kib: int = 0  # the tool's peak RSS (GNU time)
    requests: int = 0  # requests the server logged during the run
    refusals: int = 0  # of which 429 or 5xx
    connections: int = None  # distinct connections the logged requests came on, where the server logs them
    tls_new: int = None  # of those, connections with a new TLS session (a full handshake)
    tls_resumed: int = None  # ... with a resumed one
    accepted: int = None  # connections the server accepted during the run, requests or not (nginx stub_status)
    server_cpu: float = None  # user + system seconds the server's processes used during the run, where known
    protocols: str = ""  # the protocols of the logged requests: "HTTP/1.1", "HTTP/2.0"
    error: str = ""
    stdout: bytes = b""
    started: float = 0.0  # when the command was started, on the wall clock (time.time()), as the servers log
    timings: list = None  # the run's requests as harness.RequestTiming, where the server logs their times
    sockets: object = None  # a stopped harness.ConnectionSampler: the server's open connections during the run


@dataclass
class Job:
    """One command's invocation on one source: `argv(output_path)` builds the command line of a run.

    A command that names its file itself (a Metalink) may ignore `output_path`: the run then checks the only file
    in its empty directory. A command that prints a digest instead of writing a file (`openssl md5 FILE`) sets
    `checks_stdout`.
    """

    label: str
    argv: object
    source: object  # harness.Source
    checks_stdout: bool = False
    runs: list = field(default_factory=list)

    @property
    def size(self):
        return self.source.size

    def successes(self):
        return [run for run in self.runs if run.ok]


def values(job, metric="wall"):
    return [getattr(run, metric) for run in job.successes()] if job else []


def median(job, metric="wall"):
    """The median of `metric` over `job`'s verified runs; None without any (or without a job)."""
    measured = values(job, metric)
    return statistics.median(measured) if measured else None


# Where earlier runs' outputs wait to be removed when the workspace closes (`set_aside`).
TRASH = "trash"
# How long after a large removal ext4 without a journal may charge the files made near it (`wait_after_removal`):
# its 60 and 300 seconds, and some to spare.
REMOVAL_COOLDOWN = 370
# Fewer entries than this removed at once leave nothing to wait for.
LARGE_REMOVAL = 1000


def mount_of(path):
    """(device, type) of the file system `path` is on, from /proc/self/mounts; (None, None) if unknown."""
    path = os.path.realpath(path)
    best, found = "", (None, None)
    try:
        with open("/proc/self/mounts") as mounts:
            for line in mounts:
                fields = line.split()
                if len(fields) < 3:
                    continue
                point = fields[1].replace("\\040", " ")
                inside = path == point or path.startswith(point.rstrip("/") + "/")
                if inside and len(point) >= len(best):
                    best, found = point, (fields[0], fields[2])
    except OSError:
        pass
    return found


def charges_recent_removals(path):
    """Whether `path` is on an ext2/3/4 file system without a journal, whose inode allocator passes over the inodes
    freed in the last minutes (`wait_after_removal`); a journal shows as its device's entry in /proc/fs/jbd2."""
    device, kind = mount_of(path)
    if kind not in ("ext2", "ext3", "ext4") or not device:
        return False
    name = os.path.basename(os.path.realpath(device))
    try:
        journals = os.listdir("/proc/fs/jbd2")
    except OSError:
        journals = []
    return not any(journal.startswith(name + "-") for journal in journals)


def removal_stamp(path):
    """The file whose modification time says when a large removal last happened on `path`'s file system."""
    return os.path.join(tempfile.gettempdir(), f"braid-bench-removal-{os.stat(path).st_dev}")


def remove_tree(path):
    """Removes `path` and everything below it; a large removal on ext4 is stamped for `wait_after_removal`."""
    if not os.path.lexists(path):
        return
    entries = sum(len(names) + len(directories) for _, directories, names in os.walk(path))
    parent = os.path.dirname(os.path.abspath(path))
    shutil.rmtree(path, ignore_errors=True)
    if entries >= LARGE_REMOVAL and charges_recent_removals(parent):
        with open(removal_stamp(parent), "w"):
            pass


def wait_after_removal(path):
    """Waits, saying why, until `REMOVAL_COOLDOWN` seconds have passed since the last large removal on `path`'s
    file system (`remove_tree`), where that is an ext4 without a journal.

    There, ext4 makes a new inode only after passing over the free ones deleted recently, each looked up in the
    buffer cache (`recently_deleted` in its inode allocator, which a journal turns off): those deleted in the last 60
    seconds, or the last 360 while their inode table block is dirty, as the new files being made there make it. This
    machine's root file system is such an ext4: after a removal of 20,000 small files, `curl --parallel` took 6.8 to
    9.9 s, 5.7 to 6.9 s of it in the kernel (`perf`: `find_get_block_common`, `recently_deleted`, `find_inode_bit`),
    for 10,000 files of 4 KiB that it made in 1.6 s in a directory elsewhere on the same file system, still 70
    seconds after the removal and a `sync`, and two minutes after one. A script called twice in a row measured its
    second call in the first's wake, and printed ratios that meant nothing.
    """
    if not charges_recent_removals(path):
        return
    try:
        age = time.time() - os.stat(removal_stamp(path)).st_mtime
    except OSError:
        return
    if 0 <= age < REMOVAL_COOLDOWN:
        wait = REMOVAL_COOLDOWN - age
        log(f"waiting {wait:.0f} s: files were removed on this file system {age:.0f} s ago, and ext4 charges the "
            "files made next for the inodes it freed (see harness.runs.wait_after_removal)")
        time.sleep(wait)


def set_aside(path, trash):
    """Takes an earlier run's output out of the way without charging the next run for removing it.

    ext4 passes over the inodes freed recently when it allocates one (`recently_deleted` in its inode allocator; see
    `wait_after_removal`): removing 10,000 small files just before a run that creates 10,000 cost that run seconds
    of kernel CPU, whichever tool it was, by how many files the run before left. So the files of 1 MiB or more go
    at once (few inodes, much disk) and the rest is moved into `trash`, removed with the workspace, after which
    the next script's runs wait (`wait_after_removal`).
    """
    if not os.path.lexists(path):
        return
    for root, _, names in os.walk(path):
        for name in names:
            file = os.path.join(root, name)
            if os.lstat(file).st_size >= MiB:
                os.remove(file)
    os.makedirs(trash, exist_ok=True)
    os.rename(path, os.path.join(trash, str(len(os.listdir(trash)))))


class Runner:
    """Runs jobs into `directory`/out, one at a time; failed runs' stderr is kept in `directory`/failed-runs."""

    def __init__(self, children, directory, timeout=None, rss=True, sample_connections=None):
        self.children = children
        self.directory = directory
        self.output_directory = os.path.join(directory, "out")
        # Seconds before a run is killed: a number, or a function of the size (default 30 s + 1 s per 4 MiB).
        self.timeout = timeout or (lambda size: 30 + size / (4 * MiB))
        self.rss = rss
        # Seconds between two counts of the server's open connections during a run (None: not counted).
        self.sample_connections = sample_connections

    def seconds_allowed(self, size):
        return self.timeout(size) if callable(self.timeout) else self.timeout

    def fresh_output(self):
        """An empty output directory, after a `sync`; returns the path a command should write."""
        set_aside(self.output_directory, os.path.join(self.directory, TRASH))
        os.makedirs(self.output_directory)
        # Earlier runs' dirty pages would otherwise be written back during, and charged to, this run.
        os.sync()
        return os.path.join(self.output_directory, "download.bin")

    def keep_failure(self, error_text):
        """Saves a failed run's whole stderr (a crash report is longer than a table can show); returns the path."""
        directory = os.path.join(self.directory, "failed-runs")
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, f"{len(os.listdir(directory)) + 1}.stderr.txt")
        with open(path, "w") as kept:
            kept.write(error_text)
        return path

    def measure(self, job):
        """Runs `job` once into an empty directory; wall, CPU, peak RSS and requests, and whether it verified."""
        output = self.fresh_output()
        source = job.source
        timeout = self.seconds_allowed(source.size)
        stdout_path = os.path.join(self.directory, "run.stdout")
        stderr_path = os.path.join(self.directory, "run.stderr")
        offset = source.log.size() if source.log else 0
        accepted_before = source.accepted() if getattr(source, "accepted", None) else None
        server_cpu = getattr(source, "server_cpu", None)
        server_cpu_before = server_cpu() if server_cpu else None
        sampler = None
        if self.sample_connections and (port := urllib.parse.urlsplit(getattr(source, "url", "")).port):
            sampler = ConnectionSampler(port, self.sample_connections).start()
        try:
            with open(stdout_path, "wb") as stdout, open(stderr_path, "wb") as stderr:
                exited = self.children.run(job.argv(output), timeout, stdout, stderr, cwd=self.output_directory,
                                           rss=self.rss)
        finally:
            if sampler:
                sampler.stop()
        requests, refusals = source.log.requests_since(offset) if source.log else (0, 0)
        connections = source.log.connections_since(offset, settle=False) if source.log else None
        with open(stdout_path, "rb") as stdout:
            printed = stdout.read()
        with open(stderr_path, "rb") as stderr:
            error_text = stderr.read().decode(errors="replace").strip()
        run = Run(ok=False, wall=exited.wall, cpu=exited.cpu, rss_kib=exited.rss_kib, requests=requests,
                  refusals=refusals, stdout=printed, started=exited.started)
        if source.log and source.log.timing_of:
            run.timings = source.log.timings_since(offset, settle=False)
        run.sockets = sampler
        if connections is not None:
            run.connections, run.tls_new, run.tls_resumed = connections.count, connections.tls_new, \
                connections.tls_resumed
            run.protocols = connections.protocols
        if accepted_before is not None:
            # The second question's own connection is in the count; the first's was already in accepted_before.
            run.accepted = source.accepted() - accepted_before - 1
        if server_cpu_before is not None and (server_cpu_after := server_cpu()) is not None:
            run.server_cpu = server_cpu_after - server_cpu_before
        if exited.timed_out:
            run.error = f"timed out after {timeout:.0f} s"
        elif exited.code != 0:
            how = exited.signal_text or f"exit {exited.code}"
            run.error = f"{how}: {error_text[-300:]} (full stderr: {self.keep_failure(error_text)})"
        elif job.checks_stdout:
            if source.digest not in printed.decode(errors="replace"):
                run.error = f"printed digest does not match: {printed.decode(errors='replace').strip()[:120]}"
        elif hasattr(source, "verify"):
            run.error = source.verify(self.output_directory)
        elif (written := self.written(output)) is None:
            run.error = "exit 0 but no output file"
        elif (actual := digest_of(written, source.algorithm)) != source.digest:
            run.error = f"wrong file: {source.algorithm} {actual} != {source.digest}"
        run.ok = not run.error
        return run

    def written(self, output):
        if os.path.exists(output):
            return output
        files = os.listdir(self.output_directory)
        return os.path.join(self.output_directory, files[0]) if len(files) == 1 else None

    def alternate(self, jobs, repeat, tag=""):
        """Runs every job `repeat` times, alternating A B C A B C ..., and stores the runs on the jobs."""
        total = repeat * len(jobs)
        for round_number in range(repeat):
            for index, job in enumerate(jobs):
                run = self.measure(job)
                job.runs.append(run)
                number = round_number * len(jobs) + index + 1
                result = f"{run.wall:.2f} s" if run.ok else f"FAILED ({run.error})"
                log(f"  [{tag}{' ' if tag else ''}{number}/{total}] {job.label}: {result}")


# MARK: What the runs say


@dataclass
class Verdict:
    """A target's outcome, as a table prints it: `text` with the measured ratio and the target."""

    text: str
    status: str  # PASS, FAIL or N/A


def ratio(numerator, denominator):
    if numerator is None or not denominator:
        return None
    return numerator / denominator


def ratio_verdict(name, value, limit, comparison="<="):
    """PASS when `value` is within `limit` (`comparison` "<=" or ">="), N/A when it was not measured."""
    if value is None:
        return Verdict(f"{name}: not measured", "N/A")
    passed = value <= limit if comparison == "<=" else value >= limit
    return Verdict(f"{name} = {value:.2f} (target {comparison} {limit:.2f})", "PASS" if passed else "FAIL")


def best(jobs, metric="wall"):
    """The job with the lowest median `metric`, as (job, value), ignoring jobs without a verified run."""
    measured = [(job, median(job, metric)) for job in jobs if median(job, metric) is not None]
    return min(measured, key=lambda pair: pair[1]) if measured else (None, None)


def percentile(samples, fraction):
    """The sample at `fraction` (0.99 for p99) of the sorted samples, the nearest rank."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def summary(jobs, connections=False, columns=()):
    """(header, rows): each job's verified runs, median/min/max wall, throughput, CPU, RSS and requests.

    With `connections`, the medians of the connections the requests came on, of those the server accepted, and of
    new and resumed TLS sessions, and the protocols of the last verified run's requests. `columns` are more:
    (header, function(job) -> text).
    """
    header = ["tool", "ok", "median s", "min s", "max s", "MiB/s", "median CPU s", "median RSS MiB", "requests"]
    if connections:
        header += ["connections", "accepted", "TLS new/resumed", "protocol"]
    header += [name for name, _ in columns]
    rows = []
    for job in jobs:
        walls = values(job)
        ok = f"{len(walls)}/{len(job.runs)}"
        if not walls:
            rows.append([job.label, ok, "FAILED"] + [""] * (len(header) - 3))
            continue
        requests = median(job, "requests")
        row = [
            job.label,
            ok,
            f"{statistics.median(walls):.3f}",
            f"{min(walls):.3f}",
            f"{max(walls):.3f}",
            f"{job.size / MiB / statistics.median(walls):.0f}",
            f"{median(job, 'cpu'):.3f}",
            f"{median(job, 'rss_kib') / 1024:.1f}",
            f"{requests:.0f}" if requests else "-",
        ]
        if connections:
            new, resumed = measured_median(job, "tls_new"), measured_median(job, "tls_resumed")
            row += [
                count_text(measured_median(job, "connections")),
                count_text(measured_median(job, "accepted")),
                f"{count_text(new)}/{count_text(resumed)}" if new or resumed else "-",
                job.successes()[-1].protocols or "-",
            ]
        rows.append(row + [function(job) for _, function in columns])
    return header, rows


def measured_median(job, metric):
    """The median of `metric` over the verified runs that measured it (not None), or None."""
    measured = [value for value in values(job, metric) if value is not None]
    return statistics.median(measured) if measured else None


def count_text(value):
    return "-" if value is None else f"{value:g}"


def failures(jobs):
    """One line per failed run."""
    return [f"{job.label} run {number} FAILED: {run.error}"
            for job in jobs for number, run in enumerate(job.runs, 1) if not run.ok]


@dataclass
class Report:
    """A scenario's outcome: its jobs (a table), notes, verdicts; or why it was skipped."""

    title: str
    size: int = 0
    jobs: list = field(default_factory=list)
    verdicts: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    skipped: str = ""
    connections: bool = False  # the table shows connections and TLS sessions (see summary)
    columns: list = field(default_factory=list)  # more columns: (header, function(job) -> text)

    def failed(self):
        return any(verdict.status == "FAIL" for verdict in self.verdicts)
