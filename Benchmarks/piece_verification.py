#!/usr/bin/env python3
"""What does checking every piece cost? Time to a verified file, with piece checks and without, in one run.

Two scenarios on a FILE of --size bytes (1 GiB by default), unthrottled on loopback, braid with -n CONNECTIONS:
1. nginx and a Metalink (RFC 5854): `braid FILE.meta4`, whose file carries a whole-file SHA-256 and SHA-256
   piece hashes (--piece-length), against `braid URL --checksum sha-256=HEX` on the same nginx: the same
   whole-file check, without the pieces.
2. The project's test server with `--fault content-digest=sha-256` (a `Content-Digest` on every 206), against
   the same server without it; braid gets `--checksum sha-256=HEX` in both, so both end verified. The server
   computes each range's digest once and keeps it: an unmeasured warm-up run fills its cache, so what is
   measured is braid's checking, not the server's hashing.

Each command runs --repeat times, alternating with its baseline; the medians of wall time are compared.
The target (issue 14) is a ratio within 1.1. The script exits 1 if a ratio is above it or a run fails.

Usage: Benchmarks/piece_verification.py [--braid PATH] [--test-server PATH] [--size 1G] [--piece-length 256K]
       [--repeat 3] [--connections 8] [--only 1,2] [--workdir DIR]
Build first: `swift build -c release --product braid`, then `swift build -c release --product braid-test-server`.
All traffic stays on 127.0.0.1; every server is stopped on exit.
"""

import argparse
import hashlib
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import format_size, log  # noqa: E402

LIMIT = 1.1


def metalink(path, urls, size, whole, piece_length):
    """A Metalink v4 document for `path`, served at `urls`, with its whole-file and piece SHA-256s."""
    pieces = []
    with open(path, "rb") as file:
        while True:
            block = file.read(piece_length)
            if not block:
                break
            pieces.append(hashlib.sha256(block).hexdigest())
    hashes = "\n".join(f"        <hash>{piece}</hash>" for piece in pieces)
    locations = "\n".join(f'    <url priority="{number}">{url}</url>' for number, url in enumerate(urls, 1))
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<metalink xmlns="urn:ietf:params:xml:ns:metalink">
  <file name="{os.path.basename(path)}">
    <size>{size}</size>
    <hash type="sha-256">{whole}</hash>
    <pieces length="{piece_length}" type="sha-256">
{hashes}
    </pieces>
{locations}
  </file>
</metalink>
""", len(pieces)


def compare_pair(runner, name, baseline, checked, source, repeat):
    """Alternates the two commands (each writes its file in its empty directory) `repeat` times; prints and
    returns the ratio of their median wall times, or None at the first failed run."""
    times = {"without": [], "with": []}
    for run_number in range(repeat):
        for label, argv in (("without", baseline), ("with", checked)):
            run = runner.measure(harness.Job(label, lambda output, argv=argv: argv, source))
            if not run.ok:
                print(f"  {name} {label} run {run_number + 1} failed: {run.error}")
                return None
            times[label].append(run.wall)
            log(f"{name} {label} run {run_number + 1}: {run.wall:.3f} s")
    without, with_checks = statistics.median(times["without"]), statistics.median(times["with"])
    result = with_checks / without
    verdict = "PASS" if result <= LIMIT else "FAIL"
    print(f"{name}: without piece checks {without:.3f} s, with {with_checks:.3f} s (medians of {repeat}): "
          f"ratio {result:.3f} (target <= {LIMIT}) {verdict}")
    print(f"  runs without: {', '.join(f'{t:.3f}' for t in times['without'])}; "
          f"with: {', '.join(f'{t:.3f}' for t in times['with'])}")
    return result


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--braid", default=harness.built("braid"))
    parser.add_argument("--test-server", default=harness.built("braid-test-server"))
    parser.add_argument("--size", default="1G")
    parser.add_argument("--piece-length", default="256K")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--only", default="1,2")
    parser.add_argument("--workdir")
    options = parser.parse_args(argv)
    size = harness.parse_size(options.size)
    piece_length = harness.parse_size(options.piece_length)
    braid = harness.require_executable(options.braid, "braid")
    scenarios = {int(number) for number in options.only.split(",")}
    ratios = []
    with harness.Workspace("braid-pieces-", options.workdir) as work:
        runner = work.runner(rss=False)  # only wall times are compared
        common = [braid, "-n", str(options.connections), "--no-fsync", "-q"]
        if 1 in scenarios:
            work.file("big.bin", size)
            source_path = os.path.join(work.document_root, "big.bin")
            whole = harness.digest_of(source_path, "sha256")
            nginx = work.nginx()
            source = nginx.source("/big.bin", size, whole, algorithm="sha256")
            document, count = metalink(source_path, [source.url], size, whole, piece_length)
            meta4 = work.path("big.meta4")
            with open(meta4, "w") as file:
                file.write(document)
            print(f"1. nginx, {format_size(size)}, Metalink with {count} SHA-256 pieces of "
                  f"{format_size(piece_length)}, -n {options.connections}")
            ratios.append(compare_pair(runner, "  metalink pieces", common + [source.url, "--checksum",
                                       f"sha-256={whole}"], common + [meta4], source, options.repeat))
            nginx.stop()
        if 2 in scenarios:
            binary = harness.require_executable(options.test_server, "braid-test-server")
            plain = work.test_server(binary, size, path="/big.bin")
            digesting = work.test_server(binary, size, path="/big.bin", faults=["content-digest=sha-256"])
            whole = plain.digest("sha256")
            checksum = ["--checksum", f"sha-256={whole}"]
            log("warm-up: fetching the content once from the digesting server, which keeps each range's digest")
            runner.measure(harness.Job("warm-up", lambda output: common + [digesting.url] + checksum,
                                       digesting.source("sha256")))
            print(f"2. test server, {format_size(size)}, Content-Digest: sha-256 on every 206, "
                  f"-n {options.connections}")
            ratios.append(compare_pair(runner, "  content-digest", common + [plain.url] + checksum,
                                       common + [digesting.url] + checksum, plain.source("sha256"), options.repeat))
    return 0 if ratios and all(r is not None and r <= LIMIT for r in ratios) else 1


if __name__ == "__main__":
    harness.main(main)
