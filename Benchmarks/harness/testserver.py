"""The project's fault-injecting server (`braid-test-server`, Sources/braid-test-server) as a fixture.

It serves `size` deterministic bytes (seeded) at one path on a free 127.0.0.1 port and prints its URL on its
first line of stdout. `--rate BPS` throttles each connection; faults add the rest (see `braid-test-server --help`):
`throttle=BPS`, `total-throttle=BPS` (all connections together), `latency=SECONDS` before every response,
`slow-connection=N:BPS`, `limit-connections=N[:RETRY_AFTER]`, `content-digest=sha-256`, ... A far server is
`faults=["latency=0.1"]`; a capped one `faults=["total-throttle=40000000"]`.
"""

import os
import re
import shlex
import subprocess

from .files import digest_of
from .processes import child_environment, log, require_loopback, wait_for_line
from .source import RequestLog, Source
from .timing import RequestTiming


# `--log-requests` logs `connection N "GET /file" range "..." STATUS BYTES times READ FIRST_BYTE END` on stderr,
# the times in seconds since the epoch, FIRST_BYTE `-` when none was sent (older builds log no times).
LOG_LINE = re.compile(rb'^connection (\d+) "(\S+) [^"]*" range "[^"]*" (\d{3}) \d+(?: times (\S+) (\S+) (\S+))?')


def test_server_status(line):
    """The status of a `--log-requests` line, or None."""
    match = LOG_LINE.match(line)
    return int(match.group(3)) if match else None


def test_server_timing(line):
    """The RequestTiming of a `--log-requests` line, or None (a line without times, from an older build)."""
    match = LOG_LINE.match(line)
    if not match or match.group(4) is None:
        return None
    connection, method, status, received, first_byte, finished = match.groups()
    return RequestTiming(int(connection), method.decode(errors="replace"), int(status), float(received),
                         None if first_byte == b"-" else float(first_byte), float(finished))


class TestServer:
    """One running braid-test-server; `start()` returns it with `url` set, `stop()` stops it."""

    # The digest of each (binary, size, seed, algorithm), fetched once from an unthrottled instance.
    digests = {}

    def __init__(self, children, binary, size, directory, seed=1, path="/file", rate=None, faults=(), name=None):
        """`binary` is the server's path, or a command line (a list) to which the options are appended."""
        self.children = children
        self.command = list(binary) if isinstance(binary, (list, tuple)) else [os.path.abspath(binary)]
        self.size = size
        self.seed = seed
        self.path = path
        self.rate = rate
        self.faults = list(faults)
        self.name = name or "test server" + "".join(f" {fault}" for fault in self.faults)
        os.makedirs(directory, exist_ok=True)
        number = sum(1 for entry in os.listdir(directory) if entry.startswith("test-server-")) + 1
        self.log_path = os.path.join(directory, f"test-server-{number}.log")
        self.log = RequestLog(self.log_path, test_server_status, timing_of=test_server_timing)
        self.process = None
        self.url = None

    def argv(self, log_requests=True, faults=True):
        argv = [*self.command, "--port", "0", "--size", str(self.size), "--seed", str(self.seed), "--path", self.path]
        if faults:
            argv += (["--rate", str(self.rate)] if self.rate else [])
            argv += [argument for fault in self.faults for argument in ("--fault", fault)]
        return argv + (["--log-requests"] if log_requests else [])

    def start(self):
        argv = self.argv()
        with open(self.log_path, "wb") as stderr:
            self.process = self.children.popen(argv, stdout=subprocess.PIPE, stderr=stderr)
        self.url = self.first_url(self.process, argv)
        log(f"{shlex.join(argv)}: {self.url}")
        return self

    def first_url(self, process, argv):
        try:
            url = wait_for_line(process, r"^(http://\S+)", 15, shlex.join(argv)).group(1)
        except SystemExit:
            self.children.stop(process)
            with open(self.log_path, errors="replace") as stderr:
                raise SystemExit(f"{shlex.join(argv)} printed no URL\n{stderr.read()[-500:]}") from None
        require_loopback(url)
        return url

    def stop(self):
        if self.process:
            self.children.stop(self.process)

    def digest(self, algorithm="md5"):
        """The digest of the content, fetched once (per size and seed) with curl from an instance without faults."""
        key = (tuple(self.command), self.size, self.seed, algorithm)
        if key not in TestServer.digests:
            argv = self.argv(log_requests=False, faults=False)
            process = self.children.popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            reference = self.log_path + ".reference"
            try:
                url = self.first_url(process, argv)
                fetched = subprocess.run(["curl", "-q", "-sS", "-f", "-o", reference, url], capture_output=True,
                                         env=child_environment())
                if fetched.returncode != 0:
                    raise SystemExit(f"could not fetch the test server's content: {fetched.stderr.decode()}")
                TestServer.digests[key] = digest_of(reference, algorithm)
            finally:
                self.children.stop(process)
                if os.path.exists(reference):
                    os.remove(reference)
        return TestServer.digests[key]

    def source(self, algorithm="md5"):
        return Source(self.name, self.url, self.size, self.digest(algorithm), self.log, algorithm)
