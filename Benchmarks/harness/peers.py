"""The downloaders a benchmark runs, each a label and a command line for (url, output file, CA certificate).

A new peer is one function returning a `Tool`; `tool.job(source)` makes the job a Runner runs. For example:

    def wget2(threads=16):
        return Tool(f"wget2 --max-threads={threads}", lambda url, output, cacert: [
            "wget2", "-q", f"--max-threads={threads}", "-O", output,
            *([f"--ca-certificate={cacert}"] if cacert else []), url])
"""

import json
import os
import shlex
import subprocess
from dataclasses import dataclass

from .processes import log, require_loopback
from .runs import Job


@dataclass
class Tool:
    """A downloader with its options: the label a table shows and how to download one URL into one file."""

    label: str
    command: object  # command(url, output, cacert) -> argv

    def job(self, source, label=None, **kwargs):
        require_loopback(source.url)
        return Job(label or self.label, lambda output: self.command(source.url, output, source.cacert), source,
                   **kwargs)


def braid(binary, *arguments, label=None):
    """`braid URL -o FILE ARGUMENTS`; the label is `braid ARGUMENTS` without -q unless given."""
    shown = " ".join(argument for argument in arguments if argument != "-q")
    return Tool(label or f"braid {shown}".strip(), lambda url, output, cacert: [
        binary, url, "-o", output, *arguments, *(["--cacert", cacert] if cacert else [])])


def curl(*arguments):
    # -q first: ignore ~/.curlrc.
    return Tool(" ".join(["curl", *arguments]), lambda url, output, cacert: [
        "curl", "-q", "-sS", "-f", *arguments, "-o", output, *(["--cacert", cacert] if cacert else []), url])


def axel(connections):
    return Tool(f"axel -n {connections}", lambda url, output, cacert: [
        "axel", "-q", "-N", "-n", str(connections), "-o", output, url])


def aria2c(*arguments, label=None):
    """aria2c without its config file, writing FILE in place, with ARGUMENTS (none: aria2's defaults)."""
    return Tool(label or " ".join(["aria2c", *arguments]), lambda url, output, cacert: [
        "aria2c", "--no-conf=true", *arguments, "--allow-overwrite=true", "--auto-file-renaming=false",
        "--file-allocation=none", "-d", os.path.dirname(output), "-o", os.path.basename(output),
        "--console-log-level=warn", "--summary-interval=0",
        *([f"--ca-certificate={cacert}"] if cacert else []), url])


class BenchFailed(Exception):
    """`braid bench` exited with an error; the message says how."""


def braid_bench(children, binary, url, counts, repeat, byte_limit="all", extra=(), prefix=(), quiet=True):
    """`braid bench URL -n COUNTS --repeat R --bytes B --json EXTRA`: its JSON report.

    With `quiet`, braid's progress and errors are captured (and the last of them put in BenchFailed); otherwise
    they go to this terminal. `prefix` runs it through a command (a network namespace).
    """
    argv = [*prefix, binary, "bench", url, "-n", ",".join(map(str, counts)), "--repeat", str(repeat),
            "--bytes", str(byte_limit), "--json", *(["-q"] if quiet else []), *extra]
    log("$ " + shlex.join(argv))
    process = children.popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE if quiet else None)
    stdout, stderr = process.communicate()
    children.forget(process)
    if process.returncode != 0:
        detail = f": {stderr.decode(errors='replace')[-300:]}" if stderr else ""
        raise BenchFailed(f"braid bench exited {process.returncode}{detail}")
    return json.loads(stdout)
