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
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (the nginx, child-process and test-data helpers of the comparison script)

LIMIT = 1.1


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while True:
            block = file.read(8 << 20)
            if not block:
                return digest.hexdigest()
            digest.update(block)


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


def timed(children, argv, directory):
    """Runs braid in an empty `directory`; returns (seconds, exit code, the last lines of stderr)."""
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    started = time.monotonic()
    with open(os.path.join(directory, "..", "braid.err"), "wb") as errors:
        process = children.popen(argv, cwd=directory, stdout=subprocess.DEVNULL, stderr=errors)
        process.wait()
    children.forget(process)
    seconds = time.monotonic() - started
    with open(os.path.join(directory, "..", "braid.err"), errors="replace") as errors:
        tail = errors.read().strip().splitlines()[-3:]
    return seconds, process.returncode, tail


def compare_pair(children, name, baseline, checked, workdir, repeat, expected):
    """Alternates the two commands `repeat` times; prints and returns the ratio of their median wall times."""
    times = {"without": [], "with": []}
    for run in range(repeat):
        for label, argv in (("without", baseline), ("with", checked)):
            directory = os.path.join(workdir, f"run-{label}")
            seconds, code, tail = timed(children, argv, directory)
            files = [os.path.join(directory, entry) for entry in os.listdir(directory)]
            if code != 0 or len(files) != 1 or sha256_of(files[0]) != expected:
                print(f"  {name} {label} run {run + 1} failed (exit {code}): {' | '.join(tail)}")
                return None
            times[label].append(seconds)
            compare.log(f"{name} {label} run {run + 1}: {seconds:.3f} s")
    without, with_checks = statistics.median(times["without"]), statistics.median(times["with"])
    result = with_checks / without
    verdict = "PASS" if result <= LIMIT else "FAIL"
    print(f"{name}: without piece checks {without:.3f} s, with {with_checks:.3f} s (medians of {repeat}): "
          f"ratio {result:.3f} (target <= {LIMIT}) {verdict}")
    print(f"  runs without: {', '.join(f'{t:.3f}' for t in times['without'])}; "
          f"with: {', '.join(f'{t:.3f}' for t in times['with'])}")
    return result


def start_test_server(children, binary, size, faults):
    argv = [binary, "--port", "0", "--size", str(size), "--path", "/big.bin"]
    for fault in faults:
        argv += ["--fault", fault]
    process = children.popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    url = process.stdout.readline().strip()
    compare.require_loopback(url)
    return process, url


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--braid", default=".build/release/braid")
    parser.add_argument("--test-server", default=".build/release/braid-test-server")
    parser.add_argument("--size", default="1G")
    parser.add_argument("--piece-length", default="256K")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--only", default="1,2")
    parser.add_argument("--workdir")
    options = parser.parse_args()
    size = compare.parse_size(options.size)
    piece_length = compare.parse_size(options.piece_length)
    braid = os.path.abspath(options.braid)
    scenarios = {int(number) for number in options.only.split(",")}
    workdir = options.workdir or tempfile.mkdtemp(prefix="braid-pieces-")
    os.makedirs(workdir, exist_ok=True)
    children = compare.Children()
    ratios = []
    try:
        common = [braid, "-n", str(options.connections), "--no-fsync", "-q"]
        if 1 in scenarios:
            root = os.path.join(workdir, "root")
            os.makedirs(root, exist_ok=True)
            source = os.path.join(root, "big.bin")
            compare.log(f"generating {compare.format_size(size)}")
            compare.generate_file(source, size)
            whole = sha256_of(source)
            nginx = compare.Nginx(children, os.path.join(workdir, "nginx"), root, [])
            nginx.start()
            url = nginx.url("/big.bin")
            document, count = metalink(source, [url], size, whole, piece_length)
            meta4 = os.path.join(workdir, "big.meta4")
            with open(meta4, "w") as file:
                file.write(document)
            print(f"1. nginx, {compare.format_size(size)}, Metalink with {count} SHA-256 pieces of "
                  f"{compare.format_size(piece_length)}, -n {options.connections}")
            ratios.append(compare_pair(
                children, "  metalink pieces", common + [url, "--checksum", f"sha-256={whole}"], common + [meta4],
                workdir, options.repeat, whole))
            children.stop(nginx.process)
        if 2 in scenarios:
            binary = os.path.abspath(options.test_server)
            plain, plain_url = start_test_server(children, binary, size, [])
            digesting, digest_url = start_test_server(children, binary, size, ["content-digest=sha-256"])
            warm = os.path.join(workdir, "warm")
            compare.log("warm-up: fetching the test server's content once from each server")
            timed(children, [braid, "-n", str(options.connections), "--no-fsync", "-q", plain_url], warm)
            whole = sha256_of(os.path.join(warm, "big.bin"))
            timed(children, common + [digest_url, "--checksum", f"sha-256={whole}"], warm)
            print(f"2. test server, {compare.format_size(size)}, Content-Digest: sha-256 on every 206, "
                  f"-n {options.connections}")
            ratios.append(compare_pair(
                children, "  content-digest", common + [plain_url, "--checksum", f"sha-256={whole}"],
                common + [digest_url, "--checksum", f"sha-256={whole}"], workdir, options.repeat, whole))
            children.stop(plain)
            children.stop(digesting)
    finally:
        children.stop_all()
        if not options.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0 if ratios and all(r is not None and r <= LIMIT for r in ratios) else 1


if __name__ == "__main__":
    sys.exit(main())
