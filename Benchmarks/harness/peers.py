"""The downloaders a benchmark runs, each a label and a command line for (url, output file, CA certificate).

A new peer is one function returning a `Tool`; `tool.job(source)` makes the job a Runner runs. For example:

    def axel(connections):
        return Tool(f"axel -n {connections}", lambda url, output, cacert: [
            "axel", "-q", "-N", "-n", str(connections), "-o", output, url])

A downloader of many files in one run is a `ListTool`: how it wants its list written, and its command line for
(list file, directory, CA certificate); `tool.job(file_set, directory)` writes the list there once and makes the
job. The makers are `braid_list`, `aria2c_list`, `wget2_list` and `curl_parallel`.
"""

import json
import os
import re
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


def wget2(*arguments):
    """wget2 without its config file, HSTS, HPKP or OCSP files, with ARGUMENTS (none: its defaults)."""
    return Tool(" ".join(["wget2", *arguments]), lambda url, output, cacert: [
        "wget2", *WGET2_QUIET, *arguments, "-O", output, *([f"--ca-certificate={cacert}"] if cacert else []), url])


# No ~/.wget2rc, no HSTS, HPKP, OCSP or TLS session files read or written; OCSP would ask a server on the
# Internet (the generated certificate names none, but nothing may leave 127.0.0.1).
WGET2_QUIET = ["-q", "--no-config", "--no-hsts", "--no-hpkp", "--no-ocsp", "--no-ocsp-stapling"]


# MARK: Many files in one run


@dataclass
class ListTool:
    """A downloader of a list: `write(entries, path)` writes its list file, `command(list_path, directory,
    cacert)` is its command line, saving every entry under its name in `directory`."""

    label: str
    write: object
    command: object

    def job(self, file_set, directory, label=None, **kwargs):
        for entry in file_set.entries:
            require_loopback(entry.url)
        label = label or self.label
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, re.sub(r"[^A-Za-z0-9]+", "-", label).strip("-") + ".list")
        self.write(file_set.entries, path)
        return Job(label, lambda output: self.command(path, os.path.dirname(output), file_set.cacert), file_set,
                   **kwargs)


def then_sync(tool):
    """`tool` followed by `sync -f DIR` (the file system's dirty data flushed, as `syncfs`): a peer timed against a
    braid that flushes its files, which the peers do not do on their own. Its exit status is the tool's."""
    return ListTool(f"{tool.label} + sync", tool.write, lambda path, directory, cacert: [
        "sh", "-c", shlex.join(tool.command(path, directory, cacert)) + " && sync -f " + shlex.quote(directory)])


def write_lines(path, lines):
    with open(path, "w") as file:
        file.writelines(line + "\n" for line in lines)


def write_url_out_list(entries, path):
    """A URL a line, its name on an indented `out=` line: the list format of braid and of aria2c."""
    write_lines(path, [line for entry in entries for line in (entry.url, f"  out={entry.name}")])


def braid_list(binary, *arguments, label=None):
    """`braid -i LIST -d DIR ARGUMENTS`; the label is `braid -i list ARGUMENTS` without -q unless given."""
    shown = " ".join(argument for argument in arguments if argument != "-q")
    return ListTool(label or f"braid -i list {shown}".strip(), write_url_out_list, lambda path, directory, cacert: [
        binary, "-i", path, "-d", directory, *arguments, *(["--cacert", cacert] if cacert else [])])


def aria2c_list(*arguments, label=None):
    """`aria2c -i LIST -d DIR ARGUMENTS` without its config file (the list names each file with `out=`)."""
    return ListTool(label or " ".join(["aria2c -i list", *arguments]), write_url_out_list,
                    lambda path, directory, cacert: [
                        "aria2c", "--no-conf=true", "-i", path, "-d", directory, *arguments,
                        "--allow-overwrite=true", "--auto-file-renaming=false", "--file-allocation=none",
                        "--console-log-level=warn", "--summary-interval=0", "--download-result=hide",
                        *([f"--ca-certificate={cacert}"] if cacert else [])])


def wget2_list(*arguments, label=None):
    """`wget2 -i LIST -P DIR ARGUMENTS`: a URL a line, each file saved under the URL's last segment."""
    return ListTool(label or " ".join(["wget2 -i list", *arguments]),
                    lambda entries, path: write_lines(path, [entry.url for entry in entries]),
                    lambda path, directory, cacert: [
                        "wget2", *WGET2_QUIET, "-i", path, "-P", directory, "--no-directories", *arguments,
                        *([f"--ca-certificate={cacert}"] if cacert else [])])


def list_floor(binary, threads, per_thread, label=None):
    """`list_floor LIST DIR THREADS PER-THREAD unnamed CACERT` (`Benchmarks/floor/list_floor.c`): not a peer, the
    least a list downloader of braid's shape spends on libcurl and the kernel, with none of braid's own code."""
    return ListTool(label or f"floor (C, {threads} x {per_thread})", write_url_out_list,
                    lambda path, directory, cacert: [
                        binary, path, directory, str(threads), str(per_thread), "unnamed", cacert or ""])


def write_curl_config(entries, path):
    """A curl config file (`-K`): a `url` and an `output` line per entry."""
    def quoted(text):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

    write_lines(path, [line for entry in entries
                       for line in (f"url = {quoted(entry.url)}", f"output = {quoted(entry.name)}")])


def curl_parallel(*arguments, label=None):
    """`curl --parallel -K CONFIG --output-dir DIR ARGUMENTS`, failing on HTTP errors (`-f`)."""
    return ListTool(label or " ".join(["curl --parallel", *arguments]), write_curl_config,
                    lambda path, directory, cacert: [
                        "curl", "-q", "-sS", "-f", "--parallel", *arguments, "--output-dir", directory, "-K", path,
                        *(["--cacert", cacert] if cacert else [])])


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
