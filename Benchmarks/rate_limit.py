#!/usr/bin/env python3
"""Does braid's rate limit hold, second by second? Measured against an unthrottled local nginx.

Two scenarios, each run once:
1. one download, `--limit-rate RATE -n 8`, for about DURATION seconds;
2. a list of three downloads, `-i LIST -j 3 -n 8 --max-overall-limit RATE`, for about as long.

braid runs with `--json --progress-interval 0.25`: each download reports the bytes it has received four times
a second, stamped with braid's clock. The script interpolates them to whole seconds, sums the downloads, and
prints the per-second series with how many segments (one per connection) grew in each second: none may starve.
The rate is the application's, as curl's and aria2's limits are: the kernel's socket buffers, which fill while a
connection is paused, are not braid's to count. The average over the whole run, from the file's length and the
wall time, is printed too. Seconds after the first two must be within
+-TOLERANCE of the limit; the script exits 1 if any is not, or if a file does not match its source.

Usage: Benchmarks/rate_limit.py [--braid PATH] [--rate 4M] [--duration 20] [--tolerance 0.05] [--workdir DIR]
All traffic stays on 127.0.0.1; nginx and braid are stopped on exit.
"""

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import MiB, format_size, log  # noqa: E402

# Seconds at the start that are not judged: connections open and the first requests are sent.
WARM_UP = 2
# Seconds between two progress events of a download (the finest braid reports).
PROGRESS_INTERVAL = 0.25


def sample(children, argv, directory):
    """Runs braid with --json progress four times a second and returns (bytes received per whole second of
    braid's clock, connections that progressed in each second, bytes a second over the whole run, exit code).

    Each download's `downloaded` count is interpolated to whole seconds and the downloads are summed, so a list
    is judged as a whole. The last, partial second (the download ended within it) is left out.
    """
    with open(os.path.join(directory, "braid.log"), "wb") as log_file:
        process = children.popen(argv + ["--json", "--progress-interval", str(PROGRESS_INTERVAL)],
                                 cwd=directory, stdout=subprocess.PIPE, stderr=log_file)
    samples = {}  # download id -> [(time, downloaded bytes)]
    segments = {}  # download id -> {segment start: done bytes} at its previous progress event
    progressing = {}  # second -> {(download id, segment start)} of the segments that grew within it
    for line in process.stdout:
        event = json.loads(line)
        if event.get("event") == "done":
            samples.setdefault(event["id"], [(0.0, 0)]).append((event["time"], event["bytes"]))
        if event.get("event") != "progress":
            continue
        identifier, now = event["id"], event["time"]
        samples.setdefault(identifier, [(0.0, 0)]).append((now, event["downloaded"]))
        before = segments.get(identifier, {})
        grown = progressing.setdefault(int(now) + 1, set())
        for segment in event["segments"]:
            if segment["active"] and segment["done"] > before.get(segment["start"], segment["done"]):
                grown.add((identifier, segment["start"]))
        segments[identifier] = {segment["start"]: segment["done"] for segment in event["segments"]}
    process.wait()
    children.forget(process)

    def downloaded_at(points, when):
        for (t0, b0), (t1, b1) in zip(points, points[1:]):
            if t0 <= when <= t1:
                return b0 + (b1 - b0) * (when - t0) / (t1 - t0) if t1 > t0 else b1
        return points[-1][1] if when > points[-1][0] else 0

    # Whole seconds until the last download's last progress; a download that ended earlier counts its whole length.
    end = int(max(points[-1][0] for points in samples.values())) if samples else 0
    totals = [sum(downloaded_at(points, second) for points in samples.values()) for second in range(end + 1)]
    series = [totals[second] - totals[second - 1] for second in range(1, end + 1)]
    finished = max((points[-1][0] for points in samples.values()), default=0.0)
    received = sum(points[-1][1] for points in samples.values())
    average = received / finished if finished else 0.0
    return series, [len(progressing.get(second, ())) for second in range(1, end + 1)], average, process.returncode


def judge(name, series, progressing, average, rate, tolerance):
    """Prints the series and returns True when every judged second is within tolerance of `rate`."""
    print(f"\n{name}: limit {format_size(rate)}/s, {len(series)} full seconds sampled")
    rows, judged = [], []
    for index, (count, moving) in enumerate(zip(series, progressing), start=1):
        deviation = count / rate - 1
        mark = ""
        if index > WARM_UP:
            judged.append(deviation)
            if abs(deviation) > tolerance:
                mark = "OUT OF TOLERANCE"
        else:
            mark = "(warm-up, not judged)"
        rows.append([index, f"{count / MiB:7.3f}", f"{deviation * 100:+7.2f}%", moving, mark])
    harness.print_table(["second", "MiB/s", "vs limit", "segments growing", ""], rows, align="rrrrl")
    if not judged:
        print("  no second after the warm-up: the download was too short")
        return False
    worst = max(judged, key=abs)
    mean = sum(judged) / len(judged)
    ok = abs(worst) <= tolerance
    print(f"  over the whole run, start to done: {average / MiB:.3f} MiB/s ({(average / rate - 1) * 100:+.2f}%)")
    print(f"  {len(judged)} seconds judged: mean {mean * 100:+.2f}%, worst {worst * 100:+.2f}% "
          f"(tolerance +-{tolerance * 100:.0f}%): {'PASS' if ok else 'FAIL'}")
    return ok


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--braid", default=harness.built("braid"), help="the braid binary (default %(default)s)")
    parser.add_argument("--rate", default="4M", help="the limit, as braid takes it (default %(default)s)")
    parser.add_argument("--duration", type=float, default=20, help="seconds each scenario should last")
    parser.add_argument("--tolerance", type=float, default=0.05, help="allowed deviation per second")
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--workdir", help="keep files and nginx here instead of a temporary directory")
    options = parser.parse_args(argv)

    braid = harness.require_executable(options.braid, "braid")
    rate = harness.parse_size(options.rate)
    with harness.Workspace("braid-rate-", options.workdir) as work:
        # Enough bytes for `duration` seconds at the limit, plus the warm-up and a tail.
        single_size = int(rate * (options.duration + WARM_UP + 2)) // MiB * MiB
        list_size = single_size // 3 // MiB * MiB
        digests = {"single.bin": work.file("single.bin", single_size)}
        for index in range(3):
            digests[f"list{index}.bin"] = work.file(f"list{index}.bin", list_size)
        nginx = work.nginx()
        log(f"nginx (unthrottled) on 127.0.0.1:{nginx.port}; braid {braid}")

        results = []
        out = harness.empty_directory(work.path("out-single"))
        argv = [braid, "-n", str(options.connections), "--limit-rate", options.rate,
                nginx.url("/single.bin"), "-o", "single.bin"]
        log("running: " + " ".join(argv))
        series, progressing, average, code = sample(work.children, argv, out)
        ok = code == 0 and harness.digest_of(os.path.join(out, "single.bin")) == digests["single.bin"]
        if not ok:
            print(f"one download: braid exited {code} or the file differs (see {out}/braid.log)")
        results.append(judge(f"one download, -n {options.connections} --limit-rate {options.rate}",
                             series, progressing, average, rate, options.tolerance) and ok)

        out = harness.empty_directory(work.path("out-list"))
        list_path = os.path.join(out, "list.txt")
        with open(list_path, "w") as listing:
            for index in range(3):
                listing.write(nginx.url(f"/list{index}.bin") + "\n")
        argv = [braid, "-i", list_path, "-j", "3", "-n", str(options.connections),
                "--max-overall-limit", options.rate, "-d", out]
        log("running: " + " ".join(argv))
        series, progressing, average, code = sample(work.children, argv, out)
        ok = code == 0 and all(
            harness.digest_of(os.path.join(out, f"list{index}.bin")) == digests[f"list{index}.bin"]
            for index in range(3))
        if not ok:
            print(f"list: braid exited {code} or a file differs (see {out}/braid.log)")
        results.append(judge(f"a list of 3, -j 3 -n {options.connections} --max-overall-limit {options.rate}",
                             series, progressing, average, rate, options.tolerance) and ok)
        print("\nall PASS" if all(results) else "\nFAIL")
        return 0 if all(results) else 1


if __name__ == "__main__":
    harness.main(main)
