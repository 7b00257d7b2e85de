#!/usr/bin/env python3
"""What the file system alone charges for many small files made durable one by one, against one sync at the end.

No network and no braid: `--workers` processes write `--count` files of `--size` (10,000 x 4 KiB, 16 workers, as
`many_files.py`'s variant 3 with `-j 16`) into a fresh directory under `--workdir`, three ways:

1. `peers`: each file created at its name, written and closed; one `syncfs` when all are written. What `curl
   --parallel`, `wget2` or `aria2c` followed by `sync -f DIR` do (the peers of `many_files.py`'s flushed rows).
2. `unnamed`: each file written without a name (`O_TMPFILE`) and then linked to its name, one `syncfs` at the end:
   braid's small-file path with `--no-fsync`, but synced once at the end.
3. `durable`: the same, with the file's data flushed (`fdatasync`) before it is linked, and its directory synced
   (`fsync`) after: braid's default, which never names a file whose bytes may not be on disk and reports each file
   only once its name is durable too.

The table gives each way's median wall time and the process's CPU (user and system), and `durable`'s ratio to
`peers`: the least a tool that keeps braid's rule pays over one that flushes at the end, before any download. Python
adds the same few microseconds a file to every way. Run it on the file system the downloads go to: on tmpfs every
flush is free. Earlier runs' outputs are set aside, not removed, as in `many_files.py` (`harness.set_aside`), and
removed when the script ends.
"""

import argparse
import ctypes
import os
import resource
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import KiB  # noqa: E402
from harness.runs import remove_tree, set_aside, wait_after_removal  # noqa: E402

WAYS = ("peers", "unnamed", "durable")
# syncfs(2), as `sync -f` calls it, and linkat(2) with AT_EMPTY_PATH: Python's os module binds neither.
LIBC = ctypes.CDLL(None, use_errno=True)
AT_EMPTY_PATH = 0x1000


def arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--size", type=harness.parse_size, default=4 * KiB)
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workdir", default=".", help="a directory on the file system to measure (default: here)")
    parser.add_argument("--markdown", action="store_true")
    return parser.parse_args(argv)


def link_unnamed(fd, directory_fd, name):
    """Links the unnamed file `fd` to `name` in the directory, as braid does (`UnnamedFile.name`): on the descriptor
    (`AT_EMPTY_PATH`, a right older kernels give root only), else through `/proc/self/fd` (open(2), `O_TMPFILE`)."""
    if LIBC.linkat(fd, b"", directory_fd, name.encode(), AT_EMPTY_PATH) == 0:
        return
    # With a directory descriptor, os.link calls linkat and passes AT_SYMLINK_FOLLOW; without, link(2), which would
    # link the /proc entry itself.
    os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=directory_fd, follow_symlinks=True)


def write_files(way, directory, count, data, workers):
    """Writes `count` files into `directory` the given way, from `workers` processes (threads would take turns at
    Python's lock between their system calls, and time that rather than the file system)."""
    directory_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    children = []
    for first in range(workers):
        pid = os.fork()
        if pid == 0:
            status = 0
            try:
                write_share(way, directory, directory_fd, range(first, count, workers), data)
            except OSError as error:
                print(f"flush_floor: {way}: {error}", file=sys.stderr)
                status = 1
            os._exit(status)
        children.append(pid)
    failed = [pid for pid in children if os.waitpid(pid, 0)[1] != 0]
    if way != "durable" and LIBC.syncfs(directory_fd) != 0:
        raise SystemExit(f"flush_floor: syncfs: {os.strerror(ctypes.get_errno())}")
    os.close(directory_fd)
    if failed:
        raise SystemExit(f"flush_floor: {way}: {len(failed)} of {workers} workers failed")


def write_share(way, directory, directory_fd, indices, data):
    """One worker's files."""
    for index in indices:
        path = os.path.join(directory, f"f-{index:05d}.bin")
        if way == "peers":
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
            os.write(fd, data)
            os.close(fd)
            continue
        fd = os.open(directory, os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, 0o600)
        os.pwrite(fd, data, 0)
        if way == "durable":
            os.fdatasync(fd)
        link_unnamed(fd, directory_fd, os.path.basename(path))
        if way == "durable":
            os.fsync(directory_fd)
        os.close(fd)


def measure(way, options, run):
    """One run of a way: (wall, user, system) seconds."""
    output = os.path.join(options.workdir, "flush-floor", "out")
    set_aside(output, os.path.join(options.workdir, "flush-floor", "trash"))
    os.makedirs(output)
    # Earlier runs' dirty pages would otherwise be written back during, and charged to, this run.
    os.sync()
    before = cpu_seconds()
    started = time.monotonic()
    write_files(way, output, options.count, os.urandom(options.size), options.workers)
    wall = time.monotonic() - started
    after = cpu_seconds()
    harness.log(f"{way} run {run}: {wall:.3f} s")
    return wall, after[0] - before[0], after[1] - before[1]


def cpu_seconds():
    """User and system seconds of this process and its waited-for children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + children.ru_utime, own.ru_stime + children.ru_stime


def main(argv):
    options = arguments(argv)
    os.makedirs(options.workdir, exist_ok=True)
    wait_after_removal(options.workdir)
    results = {way: [] for way in WAYS}
    try:
        for run in range(1, options.repeat + 1):
            # The ways alternate, so that a drift of the machine's speed reaches each alike.
            for way in WAYS:
                results[way].append(measure(way, options, run))
    finally:
        # After the last run: a removal charges the next run that creates files (`harness.set_aside`); the next
        # call waits for it (`wait_after_removal`).
        remove_tree(os.path.join(options.workdir, "flush-floor"))
    median = {way: tuple(statistics.median(run[i] for run in results[way]) for i in range(3)) for way in WAYS}
    rows = []
    for way in WAYS:
        wall, user, system = median[way]
        ratio = wall / median["peers"][0]
        cpu_ratio = (user + system) / (median["peers"][1] + median["peers"][2])
        rows.append([way, f"{wall:.3f} s", f"{user:.2f} s", f"{system:.2f} s", f"{ratio:.2f}", f"{cpu_ratio:.2f}"])
    title = (
        f"{options.count} files of {harness.format_size(options.size)}, {options.workers} workers, "
        f"median of {options.repeat}, in {os.path.abspath(options.workdir)}"
    )
    print(title)
    harness.print_table(["way", "wall", "user", "system", "wall / peers", "CPU / peers"], rows, markdown=options.markdown)
    extra_wall = median["durable"][0] - median["peers"][0]
    extra_cpu = sum(median["durable"][1:]) - sum(median["peers"][1:])
    print(
        f"durable over peers: {1e6 * extra_wall / options.count:.0f} us of wall and "
        f"{1e6 * extra_cpu / options.count:.0f} us of CPU a file"
    )


if __name__ == "__main__":
    harness.main(main)
