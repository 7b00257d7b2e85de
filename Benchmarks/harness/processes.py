"""Child processes: each in a process group of its own, stopped on exit, timed and measured by wait4.

Every child gets the environment without proxy variables (nothing may leave 127.0.0.1) and `LC_ALL=C`.
A session of its own means a Ctrl-C at the terminal reaches only the script, which then stops the children itself,
and a timeout kills a tool together with anything it spawned.
"""

import os
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from dataclasses import dataclass

PROXY_VARIABLES = {"http_proxy", "https_proxy", "all_proxy", "no_proxy", "ftp_proxy"}
# GNU time reports the tool's own peak RSS. wait4's ru_maxrss of a child spawned from Python is useless: the
# kernel keeps the high-water mark across exec, so it includes the Python interpreter the child was forked from
# (about 14 MiB for /bin/true). GNU time forks the tool from its own ~1 MiB process.
GNU_TIME = "/usr/bin/time"


def log(message=""):
    """Progress for the person watching: stderr, so that stdout holds only the results."""
    print(message, file=sys.stderr, flush=True)


def child_environment():
    return {key: value for key, value in os.environ.items() if key.lower() not in PROXY_VARIABLES} | {"LC_ALL": "C"}


def require_loopback(url):
    host = urllib.parse.urlsplit(url).hostname
    if host not in ("127.0.0.1", "localhost"):
        raise SystemExit(f"refusing to download from {url}: only 127.0.0.1 is allowed")


def free_port():
    """A port on 127.0.0.1 nothing listens on right now (not reserved: callers retry on bind failure)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Exited:
    """How a measured child ended: exit code, wall and CPU seconds, and peak RSS when GNU time measured it."""

    code: int
    wall: float
    cpu: float  # user + system, the child and everything it waited for (wait4)
    started: float = 0.0  # when it was started, on the wall clock (time.time(): CLOCK_REALTIME), to line up with logs
    rss_kib: int = 0
    timed_out: bool = False
    signal_text: str = ""  # GNU time's "terminated by signal N" line, if any


class Children:
    """Every process a script started, so that exit (normal, error or Ctrl-C) can stop them all."""

    def __init__(self):
        self.processes = set()

    def popen(self, argv, **kwargs):
        kwargs.setdefault("env", child_environment())
        process = subprocess.Popen(argv, start_new_session=True, **kwargs)
        self.processes.add(process)
        return process

    def forget(self, process):
        self.processes.discard(process)

    def stop(self, process, grace=5.0):
        """SIGTERM to the process group, then SIGKILL after `grace` seconds."""
        if process.returncode is None:
            for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 30.0)):
                try:
                    os.killpg(process.pid, sig)
                except ProcessLookupError:
                    pass
                try:
                    process.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        self.forget(process)

    def stop_all(self):
        for process in list(self.processes):
            self.stop(process)

    def run(self, argv, timeout, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=None, rss=False):
        """Runs `argv` to its end and measures it: wall time here, CPU from wait4, peak RSS from GNU time if `rss`.

        A timer, not wait(timeout=), kills the group after `timeout` seconds: wait polls with sleeps of up to 50 ms,
        a third of a fast download.
        """
        rss_file = None
        if rss:
            rss_file = tempfile.NamedTemporaryFile(prefix="rss.", suffix=".txt", delete=False)
            rss_file.close()
            argv = [GNU_TIME, "-f", "%M", "-o", rss_file.name] + list(argv)
        timed_out = threading.Event()

        def kill(process_group):
            timed_out.set()
            try:
                os.killpg(process_group, signal.SIGKILL)
            except ProcessLookupError:
                pass

        try:
            started_at = time.time()
            started = time.monotonic()
            process = self.popen(argv, stdout=stdout, stderr=stderr, cwd=cwd)
            timer = threading.Timer(timeout, kill, [process.pid])
            timer.start()
            try:
                _, status, usage = os.wait4(process.pid, 0)
            finally:
                timer.cancel()
            wall = time.monotonic() - started
            process.returncode = os.waitstatus_to_exitcode(status)
            self.forget(process)
            exited = Exited(process.returncode, wall, usage.ru_utime + usage.ru_stime, started=started_at,
                            timed_out=timed_out.is_set())
            if rss_file:
                with open(rss_file.name, errors="replace") as report:
                    lines = [line for line in report.read().split("\n") if line.strip()]
                # GNU time exits with the tool's status, or 128 + N and a "terminated by signal N" line.
                exited.signal_text = next((line for line in lines if "terminated by signal" in line), "")
                if lines and lines[-1].strip().isdigit():
                    exited.rss_kib = int(lines[-1])
        finally:
            if rss_file:
                os.unlink(rss_file.name)
        return exited


def wait_for_line(process, pattern, timeout, what, path=None):
    """Reads the child's stdout until a line matches `pattern`; returns the match.

    The stdout is a pipe, or the file at `path` when the child writes it there (a child that goes on printing
    must not fill a pipe nobody reads).
    """
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        if path:
            with open(path, errors="replace") as file:
                seen = file.read().splitlines(keepends=True)
            if match := next((match for line in seen if (match := re.search(pattern, line))), None):
                return match
            if process.poll() is not None:
                break
            time.sleep(0.05)
            continue
        ready, _, _ = select.select([process.stdout], [], [], 0.5)
        if not ready:
            if process.poll() is not None:
                break
            continue
        line = process.stdout.readline()
        line = line.decode(errors="replace") if isinstance(line, bytes) else line
        if not line:
            break
        seen.append(line)
        if match := re.search(pattern, line):
            return match
    raise SystemExit(f"{what} did not start; it printed: {''.join(seen)[-500:]!r}")


def wait_for_http(url, timeout=30.0, prefix=(), expect=None, cacert=None):
    """Polls `url` with curl (run through `prefix`, e.g. in a network namespace) until it answers.

    Any status will do, or exactly `expect` ("204") when given. An https `url` is verified against `cacert`.
    """
    deadline = time.monotonic() + timeout
    trust = ["--cacert", cacert] if cacert else []
    while time.monotonic() < deadline:
        result = subprocess.run(
            [*prefix, "curl", "-q", "-s", *trust, "-o", "/dev/null", "-w", "%{http_code}", "-r", "0-0", url],
            capture_output=True, text=True, env=child_environment(),
        )
        if (result.stdout == expect) if expect else result.stdout not in ("", "000"):
            return
        time.sleep(0.05)
    raise SystemExit(f"{url} did not answer within {timeout} s")


def cpu_seconds(pid):
    """User + system CPU time a running process has used, from /proc/PID/stat (fields 14 and 15)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_status(pid, key):
    """A field of /proc/PID/status (VmHWM, Threads...), as written there, or "?"."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(key + ":"):
                return line.split()[1]
    return "?"


def main(function):
    """Runs `function(argv)` as the script's main and exits with its status; Ctrl-C and SIGTERM exit 130."""
    try:
        sys.exit(function(sys.argv[1:]))
    except KeyboardInterrupt:
        log("interrupted; children stopped")
        sys.exit(130)
