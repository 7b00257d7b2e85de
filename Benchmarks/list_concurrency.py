#!/usr/bin/env python3
"""`braid -i` with `-j auto` (the default) against `-j 3` (the default before it), side by side in one run.

Scenarios, each a list from one local nginx, braid `-n 8 --no-fsync -q`:

1. many small files: `--small-count` files of `--small-size` (1000 x 64 KiB), unthrottled;
2. a few large files: `--large-count` files of `--large-size` (4 x 256 MiB), unthrottled;
3. a few large files from a server that caps each connection: 4 x `--capped-size` (64 MiB) at `--rate` (8 MiB/s)
   per connection (`limit_rate`, paced);
4. small files from a far server: `--far-count` (200) x `--small-size` from the test server (`braid-test-server`,
   the release build, else the debug one), `--latency` (20 ms) before every response.

The commands alternate (A B A B ...), each run into an empty directory after an untimed `sync`; every file is
checked against its source's MD5. The table gives the median wall time, CPU and requests per run, and auto's
ratio to `-j 3`. Targets for auto's wall against `-j 3`'s: at most 1.1 with large files (2, 3: it must not hurt
them), at most 0.5 with small files from a far server (4: what it is for). Scenario 1 has none: on loopback there
is no latency for more downloads at once to hide, and its figure says what they cost.
"""

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import KiB, MiB  # noqa: E402


def arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--braid", default=None, help="the braid to run (default: the release build)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--small-count", type=int, default=1000)
    parser.add_argument("--small-size", type=harness.parse_size, default=64 * KiB)
    parser.add_argument("--large-count", type=int, default=4)
    parser.add_argument("--large-size", type=harness.parse_size, default=256 * MiB)
    parser.add_argument("--capped-size", type=harness.parse_size, default=64 * MiB)
    parser.add_argument("--rate", type=harness.parse_size, default=8 * MiB, help="per connection, scenario 3")
    parser.add_argument("--far-count", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.02, help="seconds before every response, scenario 4")
    parser.add_argument("--only", default="1,2,3,4", help="scenarios to run, comma-separated")
    parser.add_argument("--also", default="", help="more -j values to run beside 3 and auto, comma-separated")
    parser.add_argument("--workdir", default=None, help="keep the generated files here for the next run")
    parser.add_argument("--markdown", action="store_true")
    return parser.parse_args(argv)


def run_list(work, braid, concurrency, list_path, sources, log):
    """One run of the list: wall, CPU and requests, or the reason it failed."""
    output = work.path("out")
    harness.empty_directory(output)
    os.sync()
    offset = log.size()
    argv = [braid, "-i", list_path, "-d", output, "-j", concurrency, "-n", "8", "--no-fsync", "-q"]
    with open(work.path("run.stderr"), "wb") as stderr:
        exited = work.children.run(argv, 30 + sum(size for _, size, _ in sources) / (4 * MiB), stderr=stderr)
    requests, _ = log.requests_since(offset)
    if exited.timed_out or exited.code != 0:
        with open(work.path("run.stderr"), errors="replace") as stderr:
            return None, f"exit {exited.code}: {stderr.read()[-300:]}"
    for name, _, digest in sources:
        if harness.digest_of(os.path.join(output, name)) != digest:
            return None, f"{name} differs from its source"
    return (exited.wall, exited.cpu, requests), None


def scenario(work, braid, title, list_text, files, log, repeat, also, target):
    """Runs the list `list_text` of `files` (name, size, md5) with -j 3, `also` and -j auto, alternating."""
    list_path = work.path("list.txt")
    with open(list_path, "w") as listing:
        listing.write(list_text)
    runs = {concurrency: [] for concurrency in ["3", *also, "auto"]}
    for round_number in range(repeat):
        for concurrency in runs:
            measured, error = run_list(work, braid, concurrency, list_path, files, log)
            shown = f"{measured[0]:.2f} s, {measured[2]} requests" if measured else f"FAILED ({error})"
            harness.log(f"  [{title} {round_number + 1}/{repeat}] -j {concurrency}: {shown}")
            if measured:
                runs[concurrency].append(measured)
    rows = []
    for concurrency, measured in runs.items():
        if not measured:
            rows.append([title, f"-j {concurrency}", "FAILED", "", "", ""])
            continue
        wall = statistics.median(run[0] for run in measured)
        cpu = statistics.median(run[1] for run in measured)
        requests = statistics.median(run[2] for run in measured)
        rows.append([title, f"-j {concurrency}", f"{wall:.2f} s", f"{cpu:.2f} s", f"{requests:.0f}", ""])
    if runs["3"] and runs["auto"]:
        ratio = statistics.median(run[0] for run in runs["auto"]) / statistics.median(run[0] for run in runs["3"])
        if target is None:
            rows[-1][5] = f"{ratio:.2f} (no target)"
            return rows, True
        rows[-1][5] = f"{ratio:.2f} {'PASS' if ratio <= target else 'FAIL'} (<= {target})"
        return rows, ratio <= target
    return rows, False


def main(argv):
    options = arguments(argv)
    braid = options.braid or harness.built("braid")
    only = {int(number) for number in options.only.split(",")}
    print("\n".join(harness.describe() + [f"braid {harness.commit()}, {braid}"]))
    with harness.Workspace("braid-list-concurrency.", options.workdir) as work:
        files = {
            1: [(f"small/{index}.bin", options.small_size) for index in range(options.small_count)],
            2: [(f"large/{index}.bin", options.large_size) for index in range(options.large_count)],
            3: [(f"capped/{index}.bin", options.capped_size) for index in range(4)],
        }
        generated = {}
        for number in sorted(only & {1, 2, 3}):
            os.makedirs(os.path.join(work.document_root, files[number][0][0].split("/")[0]), exist_ok=True)
            generated[number] = [(name.split("/")[1], size, work.file(name, size)) for name, size in files[number]]
        # The document root serves small/ and large/ as they are; capped/ is throttled per connection.
        nginx = work.nginx([
            harness.Location.directory("/capped/", os.path.join(work.document_root, "capped"), rate=options.rate,
                                       paced=True),
        ])
        lists = {
            number: (
                "".join(nginx.url(f"/{name}") + "\n" for name, _ in files[number]),
                generated[number],
                nginx.log,
            )
            for number in generated
        }
        if 4 in only:
            far = work.test_server(harness.built("braid-test-server", debug_too=True), options.small_size,
                                   faults=[f"latency={options.latency}"])
            source = far.source()
            lists[4] = (
                "".join(f"{source.url}\n  out={index}.bin\n" for index in range(options.far_count)),
                [(f"{index}.bin", options.small_size, source.digest) for index in range(options.far_count)],
                source.log,
            )
        titles = {
            1: f"{options.small_count} x {harness.format_size(options.small_size)}",
            2: f"{options.large_count} x {harness.format_size(options.large_size)}",
            3: f"4 x {harness.format_size(options.capped_size)} at {harness.format_size(options.rate)}/s per conn",
            4: f"{options.far_count} x {harness.format_size(options.small_size)}, "
            f"{options.latency * 1000:.0f} ms per response",
        }
        rows, passed = [], True
        for number in sorted(only):
            list_text, sources, log = lists[number]
            also = [value for value in options.also.split(",") if value]
            target = {1: None, 2: 1.1, 3: 1.1, 4: 0.5}[number]
            scenario_rows, ok = scenario(work, braid, titles[number], list_text, sources, log, options.repeat, also,
                                         target)
            rows += scenario_rows
            passed = passed and ok
    harness.print_table(["list", "braid", "wall (median)", "CPU", "requests", "auto / -j 3"], rows,
                        markdown=options.markdown)
    return 0 if passed else 1


harness.main(main)
