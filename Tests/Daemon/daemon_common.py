"""Plumbing shared by the daemon client scripts and Benchmarks/daemon_rpc.py.

Starts the daemon under test (braid's or aria2's, chosen by ``--daemon``) and Braid's test server as child
processes on free loopback ports, speaks raw aria2 JSON-RPC over one keep-alive HTTP connection, computes the
bytes the test server serves, and polls conditions against deadlines instead of sleeping.
"""

import argparse
import hashlib
import http.client
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time
import urllib.parse
import urllib.request

DAEMONS = ("braid", "aria2c")


class Failure(Exception):
    """A check that did not hold; the scripts print its message and exit 1."""


# With --keep-going, failed checks are collected here and the script carries on, to list every difference at once.
_failures = None


def check(condition, message):
    """Like ``assert`` but survives ``python3 -O`` and says what was expected."""
    if not condition:
        if _failures is None:
            raise Failure(message)
        _failures.append(message)
        print(f"FAILED CHECK: {message}", file=sys.stderr, flush=True)


def wait_until(what, timeout, predicate, interval=0.05):
    """Polls ``predicate`` until it returns a truthy value, which is returned; raises Failure after ``timeout``.

    ``what`` describes the wait in the failure message; a callable is asked then, to describe the state at the end.
    """
    deadline = time.monotonic() + timeout
    last_error = None
    while True:
        try:
            value = predicate()
            if value:
                return value
        except (OSError, http.client.HTTPException) as error:
            last_error = error
        if time.monotonic() > deadline:
            suffix = f" (last error: {last_error})" if last_error else ""
            description = what() if callable(what) else what
            raise Failure(f"timed out after {timeout} s waiting for {description}{suffix}")
        time.sleep(interval)


def free_port():
    """A TCP port on 127.0.0.1 nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


_content_cache = {}


def expected_content(size, seed=1):
    """The bytes Braid's test server serves for ``--size SIZE --seed SEED``.

    Word i (8 bytes, little-endian) is the i-th SplitMix64 output seeded with ``seed``, as in
    Sources/BraidTestServer/TestContent.swift.
    """
    key = (size, seed)
    if key not in _content_cache:
        mask = (1 << 64) - 1
        words = (size + 7) // 8
        buffer = bytearray(words * 8)
        for index in range(words):
            z = (seed + (index + 1) * 0x9E3779B97F4A7C15) & mask
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
            struct.pack_into("<Q", buffer, index * 8, z ^ (z >> 31))
        _content_cache[key] = bytes(buffer[:size])
    return _content_cache[key]


def content_length(url):
    """The Content-Length a HEAD request on ``url`` answers."""
    request = urllib.request.Request(url, method="HEAD")
    with urllib.request.urlopen(request, timeout=10) as response:
        return int(response.headers["Content-Length"])


def check_file(path, expected, what):
    """Fails unless the file at ``path`` holds exactly ``expected``."""
    check(os.path.isfile(path), f"{what}: {path} does not exist")
    actual = open(path, "rb").read()
    check(
        actual == expected,
        f"{what}: {path} has {len(actual)} bytes (sha-256 {hashlib.sha256(actual).hexdigest()}), expected "
        f"{len(expected)} bytes (sha-256 {hashlib.sha256(expected).hexdigest()})",
    )


class RPCError(Exception):
    """A JSON-RPC error object the daemon answered with."""

    def __init__(self, code, message):
        super().__init__(f"JSON-RPC error {code}: {message}")
        self.code = code
        self.message = message


class RPC:
    """aria2 JSON-RPC over one keep-alive HTTP connection, with the ``token:SECRET`` first parameter."""

    def __init__(self, url, secret, timeout=10):
        parts = urllib.parse.urlsplit(url)
        self.host, self.port, self.path = parts.hostname, parts.port, parts.path or "/jsonrpc"
        self.secret = secret
        self.timeout = timeout
        self.connection = None
        self.next_id = 0

    def call(self, method, *params):
        """Calls ``method`` and returns its result, raising RPCError for an error answer."""
        answer = self.raw({"jsonrpc": "2.0", "method": method, "params": self.with_token(method, params)})
        if "error" in answer:
            raise RPCError(answer["error"].get("code"), answer["error"].get("message"))
        return answer["result"]

    def with_token(self, method, params):
        # system.multicall and system.listMethods take no token in aria2; everything else does.
        if method.startswith("system."):
            return list(params)
        return [f"token:{self.secret}", *params]

    def raw(self, payload):
        """Posts ``payload`` (its id filled in) and returns the decoded answer, reconnecting once if dropped."""
        self.next_id += 1
        payload = dict(payload, id=str(self.next_id))
        body = json.dumps(payload).encode()
        for attempt in (1, 2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            try:
                self.connection.request("POST", self.path, body, {"Content-Type": "application/json"})
                response = self.connection.getresponse()
                data = response.read()
                break
            except (ConnectionError, http.client.HTTPException):
                self.close()
                if attempt == 2:
                    raise
        answer = json.loads(data)
        check(answer.get("id") == payload["id"], f"{payload['method']}: answer id {answer.get('id')!r}")
        return answer

    def close(self):
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def die_with_parent():
    """In the child before exec: ask Linux for SIGKILL when the script dies, even killed before its cleanup ran."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class Child:
    """A child process whose stdout and stderr go to files, killed on ``stop`` if SIGTERM is not enough, and by the
    kernel if the script itself is killed (a test's timeout), so no daemon outlives the script that started it."""

    def __init__(self, arguments, log_directory, name):
        os.makedirs(log_directory, exist_ok=True)
        self.name = name
        self.stdout_path = os.path.join(log_directory, f"{name}.stdout")
        self.stderr_path = os.path.join(log_directory, f"{name}.stderr")
        self.arguments = arguments
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.process = subprocess.Popen(
                arguments, stdout=out, stderr=err, stdin=subprocess.DEVNULL, preexec_fn=die_with_parent
            )

    @property
    def pid(self):
        return self.process.pid

    def output(self):
        return open(self.stdout_path, errors="replace").read()

    def errors(self):
        return open(self.stderr_path, errors="replace").read()

    def evidence(self):
        command = " ".join(self.arguments)
        return f"{self.name} ({command}):\nstdout: {self.output()[-2000:]}\nstderr: {self.errors()[-2000:]}"

    def check_running(self, what):
        code = self.process.poll()
        if code is not None:
            raise Failure(f"{self.name} exited with {code} while waiting for {what}\n{self.evidence()}")

    def kill(self):
        """SIGKILL, as a crash or the OOM killer would, and reap."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self, grace=10):
        """SIGTERM, then SIGKILL after ``grace`` seconds; returns the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(grace)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def first_stdout_line(child, what, timeout=30):
    """Waits for the child's first complete stdout line and returns it."""

    def line():
        child.check_running(what)
        text = child.output()
        return text.split("\n", 1)[0] if "\n" in text else None

    return wait_until(what, timeout, line)


def start_file_server(binary, size, rate, log_directory, seed=1, extra=()):
    """Starts Braid's test server serving ``size`` bytes at ``rate`` bytes/s per connection; returns (child, url)."""
    arguments = [binary, "--port", "0", "--size", str(size), "--seed", str(seed), "--rate", str(rate), *extra]
    child = Child(arguments, log_directory, "braid-test-server")
    try:
        url = first_stdout_line(child, "the test server's URL").strip()
    except BaseException:
        child.stop()
        raise
    return child, url


class Daemon:
    """The daemon under test: braid's or aria2's, on a free loopback port, with a session file."""

    def __init__(self, kind, binary, directory, session, secret, log_directory, extra=(), name="daemon"):
        check(kind in DAEMONS, f"unknown daemon {kind!r}; one of {', '.join(DAEMONS)}")
        self.kind = kind
        if kind == "braid":
            arguments = [binary or "braid", "daemon", "--listen", "127.0.0.1:0", "--dir", directory]
            arguments += ["--session", session, "--rpc-secret", secret, *extra]
        else:
            port = free_port()
            arguments = [binary or "aria2c", "--enable-rpc", f"--rpc-listen-port={port}", "--rpc-listen-all=false"]
            arguments += [f"--rpc-secret={secret}", f"--dir={directory}", "--daemon=false", f"--save-session={session}"]
            arguments += ["--no-conf", "--quiet=false", "--console-log-level=warn", "--summary-interval=0"]
            if os.path.exists(session):
                arguments.append(f"--input-file={session}")
            arguments += [self.aria2_option(option) for option in extra]
        self.child = Child(arguments, log_directory, name)
        try:
            if kind == "braid":
                line = first_stdout_line(self.child, "braid daemon's first line")
                prefix = "braid daemon listening on "
                check(line.startswith(prefix), f"braid daemon's first line is {line!r}, not {prefix}URL")
                self.base_url = line[len(prefix) :].strip().rstrip("/")
            else:
                self.base_url = f"http://127.0.0.1:{port}"
            self.rpc_url = self.base_url + "/jsonrpc"
            wait_for_daemon(self.rpc_url, secret, self.child)
        except BaseException:
            self.child.stop()
            raise

    @staticmethod
    def aria2_option(option):
        """Maps braid daemon flags to aria2c's for the few the scripts use."""
        names = {"-j": "--max-concurrent-downloads", "--max-connections-per-host": "--max-connection-per-server"}
        name, _, value = option.partition("=")
        return f"{names.get(name, name)}={value}" if value else option

    @property
    def pid(self):
        return self.child.pid

    def stop(self):
        return self.child.stop()


def wait_for_daemon(rpc_url, secret, child=None, timeout=30):
    """Waits until the daemon at ``rpc_url`` answers aria2.getVersion (fails fast if ``child`` exits)."""
    probe = RPC(rpc_url, secret, timeout=2)

    def answers():
        if child is not None:
            child.check_running("the daemon to answer aria2.getVersion")
        try:
            return probe.call("aria2.getVersion")
        except OSError:
            probe.close()
            raise

    try:
        return wait_until(f"the daemon at {rpc_url} to answer aria2.getVersion", timeout, answers)
    finally:
        probe.close()


def common_arguments(description):
    """The command line every client script shares: which daemon, where, and the file server."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--daemon", choices=DAEMONS, default="braid", help="which daemon is under test")
    parser.add_argument("--secret", required=True, help="the daemon's --rpc-secret")
    parser.add_argument("--file-url", required=True, help="Braid's test server URL (throttled per connection)")
    parser.add_argument("--seed", type=int, default=1, help="the test server's --seed (default 1)")
    parser.add_argument("--dir", required=True, help="the daemon's download directory, to compare files")
    parser.add_argument(
        "--keep-going", action="store_true", help="report every failed check, not only the first (a diagnosis aid)"
    )
    return parser


def keep_going():
    """Collects failed checks from now on instead of stopping at the first; ``run`` reports them."""
    global _failures
    _failures = []


def run(main):
    """Runs ``main``; exits 0 when it returns, 1 with the reason when a check fails or anything raises."""
    try:
        main()
    except Failure as failure:
        print(f"FAIL: {failure}", file=sys.stderr, flush=True)
        sys.exit(1)
    except Exception as error:
        import traceback

        traceback.print_exc()
        print(f"FAIL: {type(error).__name__}: {error}", file=sys.stderr, flush=True)
        sys.exit(1)
    if _failures:
        print(f"FAIL: {len(_failures)} checks failed (each FAILED CHECK above)", file=sys.stderr, flush=True)
        sys.exit(1)
    print("PASS", flush=True)
