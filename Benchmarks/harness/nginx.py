"""nginx on free 127.0.0.1 ports, plain and TLS (HTTP/2 optional), with everything it writes in one directory.

Locations say how a path is served: whole files, throttled per connection (`limit_rate`, strictly paced with
`sendfile_max_chunk 64k` if asked), limited in connections per client (503 with `Retry-After` beyond), with
extra headers or directives. Each request is one line of the access log, with the serial number of the
connection it came on and whether that connection's TLS session was resumed, so a run's requests, connections and
TLS handshakes can be counted; nginx's stub_status counts the connections it accepted, requests or not.
"""

import os
import re
import socket
import subprocess
import time
from dataclasses import dataclass, field

from .processes import cpu_seconds, free_port, wait_for_http
from .source import Entry, FileSet, RequestLog, Source
from .timing import RequestTiming

NGINX = "/usr/sbin/nginx"
READY = "/.harness-ready"
STATUS = "/.harness-status"


@dataclass
class Location:
    """An nginx location serving a file or a directory, maybe throttled, maybe with headers."""

    match: str  # "^~ /throttled/" or "= /md5/large.bin"
    alias: str  # None for a location that serves nothing from disk (a proxy)
    limit_rate: int = 0
    headers: dict = field(default_factory=dict)
    # Further directives, written as given: "sendfile_max_chunk 64k;", "limit_conn perclient 8;".
    directives: list = field(default_factory=list)

    @classmethod
    def directory(cls, prefix, root, rate=0, paced=False, **kwargs):
        """`root`'s files under `/prefix/`, at `rate` bytes/s per connection if given.

        nginx sends up to `sendfile_max_chunk` (2 MiB by default) ahead of its rate; `paced` makes that 64 KiB.
        """
        directives = kwargs.pop("directives", [])
        return cls(f"^~ /{prefix.strip('/')}/", root.rstrip("/") + "/", limit_rate=rate,
                   directives=(["sendfile_max_chunk 64k;"] if paced else []) + directives, **kwargs)

    @classmethod
    def slice_cache(cls, prefix, origin, slice_size="16m"):
        """A cache peer as a fleet deploys one: `/prefix/PATH` is `origin` + `PATH` through `proxy_cache` and the
        `slice` module (aligned slices of `slice_size`, each fetched once with `Range` and stored under its URI and
        slice; concurrent misses of one slice wait for the first, `proxy_cache_lock`). No alias: nothing is served
        from the document root."""
        return cls(f"^~ /{prefix.strip('/')}/", None, directives=[
            f"slice {slice_size};", "proxy_cache peer;", "proxy_cache_key $uri$slice_range;",
            "proxy_set_header Range $slice_range;", "proxy_cache_valid 200 206 1h;", "proxy_cache_lock on;",
            "proxy_cache_lock_timeout 10m;", "proxy_cache_lock_age 10m;", "proxy_http_version 1.1;",
            'proxy_set_header Connection "";', f"proxy_pass {quoted(origin)};"])

    @classmethod
    def conn_limited(cls, prefix, root, limit, rate=0, paced=False, retry_after=1):
        """At most `limit` connections per client; beyond, 503 with `Retry-After: retry_after`."""
        return cls.directory(prefix, root, rate=rate, paced=paced, headers={"Retry-After": str(retry_after)},
                             directives=[f"limit_conn perclient {limit};"])


def nginx_status(line):
    """The status of an access log line (`$status $body_bytes_sent $msec $request_time $connection_time
    "$http_range" "$request" $connection $ssl_session_reused`)."""
    fields = line.split(maxsplit=1)
    return int(fields[0]) if fields and fields[0].isdigit() else None


def nginx_connection(line):
    """(connection serial number, "r" | "." | "", protocol) of an access log line: its last two fields, and the
    last word of its quoted request line."""
    line = line.decode(errors="replace") if isinstance(line, bytes) else line
    fields = line.rsplit(maxsplit=2)
    if len(fields) < 3 or not fields[1].isdigit():
        return None
    request = fields[0].rstrip().removesuffix('"').split()
    return int(fields[1]), fields[2] if fields[2] in ("r", ".") else "", request[-1] if request else ""


NGINX_TIMES = re.compile(rb'^(\d+) \d+ (\d+\.\d+) (\d+\.\d+) (\d+\.\d+) "[^"]*" "(\S*)[^"]*" (\d+) ')


def nginx_timing(line):
    """A line's RequestTiming. `$msec` is when nginx logged the response (its end), `$request_time` the seconds
    since it read the request's first bytes, `$connection_time` since it accepted the connection, all to the
    millisecond. nginx logs no first-byte time: serving a file it sends the head as soon as it has read the request,
    so the first byte is taken as the request's reading, and the timing says that it was not measured."""
    match = NGINX_TIMES.match(line if isinstance(line, bytes) else line.encode())
    if not match:
        return None
    status, finished, elapsed, connected, method, connection = match.groups()
    received = float(finished) - float(elapsed)
    return RequestTiming(int(connection), method.decode(errors="replace"), int(status), received, received,
                         float(finished), connection_start=float(finished) - float(connected),
                         first_byte_logged=False)


def quoted(value):
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


class Nginx:
    """nginx serving `document_root` at / and `locations`, on a plain port and a TLS port with a generated cert.

    `prefix` runs nginx (and the readiness check) through a command, e.g. `ip netns exec NAME`.
    """

    def __init__(self, children, directory, document_root, locations=(), http2=False, prefix=(),
                 http_directives=()):
        self.children = children
        self.directory = directory
        self.document_root = document_root
        self.locations = list(locations)
        self.http2 = http2
        self.prefix = list(prefix)
        self.http_directives = list(http_directives)
        if any("limit_conn " in directive for location in self.locations for directive in location.directives):
            self.http_directives += ["limit_conn_zone $binary_remote_addr zone=perclient:1m;", "limit_conn_status 503;"]
        directives = [directive for location in self.locations for directive in location.directives]
        if any(directive.startswith("proxy_cache ") for directive in directives):
            self.http_directives.append(
                f"proxy_cache_path {quoted(os.path.join(directory, 'cache'))} keys_zone=peer:64m max_size=256g "
                "inactive=1d use_temp_path=off;")
        self.process = None
        self.port = None
        self.tls_port = None
        self.certificate = os.path.join(directory, "cert.pem")
        self.key = os.path.join(directory, "key.pem")
        self.access_log = os.path.join(directory, "logs", "access.log")
        self.log = RequestLog(self.access_log, nginx_status, nginx_connection, nginx_timing)

    def url(self, path, tls=False):
        if tls:
            return f"https://127.0.0.1:{self.tls_port}{path}"
        return f"http://127.0.0.1:{self.port}{path}"

    def source(self, path, size, digest, tls=False, name=None, algorithm="md5"):
        """What a download of `path` fetches, for a runner to verify and count."""
        return Source(name or f"nginx {path}", self.url(path, tls), size, digest, self.log, algorithm,
                      self.certificate if tls else None, self.accepted, self.cpu_seconds)

    def file_set(self, name, files, tls=False, algorithm="md5"):
        """Many files to download in one run: `files` are (path on this server, saved name, size, digest)."""
        return FileSet(name, [Entry(saved, self.url(path, tls), size, digest) for path, saved, size, digest in files],
                       self.log, algorithm, self.certificate if tls else None, self.accepted, self.cpu_seconds)

    def accepted(self):
        """How many connections nginx has accepted since it started (stub_status), this question's included."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as connection:
            connection.sendall(f"GET {STATUS} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".encode())
            answer = b""
            while chunk := connection.recv(4096):
                answer += chunk
        # "Active connections: 1 \nserver accepts handled requests\n 5 5 9 \nReading: ..."
        lines = answer.split(b"\r\n\r\n", 1)[-1].decode(errors="replace").splitlines()
        index = next((number for number, line in enumerate(lines) if line.startswith("server accepts")), None)
        if index is None or index + 1 >= len(lines):
            raise SystemExit(f"nginx's {STATUS} answered without its counters: {answer[:200]!r}")
        return int(lines[index + 1].split()[0])

    def cpu_seconds(self):
        """The CPU seconds (user + system) nginx's master and workers have used so far, or None once it has stopped.

        As the kernel counts each process (`processes.cpu_seconds`): a worker's time shows in its master's only once
        it exits. On loopback the server shares the machine's cores with the tool it serves.
        """
        if not self.process or self.process.poll() is not None:
            return None
        master = self.process.pid
        with open(f"/proc/{master}/task/{master}/children") as children:
            workers = [int(pid) for pid in children.read().split()]
        total = 0.0
        for pid in [master, *workers]:
            try:
                total += cpu_seconds(pid)
            except OSError:
                pass  # a worker gone meanwhile
        return total

    def start(self):
        for name in ("logs", "temp"):
            os.makedirs(os.path.join(self.directory, name), exist_ok=True)
        self.make_certificate()
        error_log = os.path.join(self.directory, "logs", "error.log")
        for _ in range(5):
            self.port, self.tls_port = free_port(), free_port()
            config = os.path.join(self.directory, "nginx.conf")
            with open(config, "w") as file:
                file.write(self.config_text())
            with open(os.path.join(self.directory, "logs", "stderr.log"), "wb") as stderr:
                self.process = self.children.popen(
                    self.prefix + [NGINX, "-p", self.directory, "-c", config, "-e", error_log],
                    stdout=subprocess.DEVNULL,
                    stderr=stderr,
                )
            if self.wait_until_ready():
                return self
            self.children.stop(self.process)
            with open(error_log, errors="replace") as file:
                errors = file.read()
            if "Address already in use" not in errors:
                raise SystemExit(f"nginx failed to start:\n{errors}")
        raise SystemExit("nginx could not bind free ports after 5 attempts")

    def stop(self):
        if self.process:
            self.children.stop(self.process)

    def make_certificate(self):
        result = subprocess.run(
            [
                "openssl", "req", "-x509", "-nodes", "-days", "2",
                "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                "-keyout", self.key, "-out", self.certificate,
            ],
            capture_output=True,
        )
        if result.returncode != 0:
            raise SystemExit(f"openssl req failed:\n{result.stderr.decode(errors='replace')}")

    def wait_until_ready(self, timeout=15.0):
        """Polls with real HTTP requests until nginx answers, or returns False if it exits first."""
        if self.prefix:
            wait_for_http(self.url(READY), timeout, prefix=self.prefix, expect="204")
            return True
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=2) as connection:
                    connection.sendall(f"GET {READY} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".encode())
                    if connection.recv(64).startswith(b"HTTP/1.1 204"):
                        return True
            except OSError:
                pass
            time.sleep(0.01)
        raise SystemExit(f"nginx did not answer on 127.0.0.1:{self.port} within {timeout} s")

    def config_text(self):
        prefix = self.directory
        lines = [
            "daemon off;",
            "worker_processes auto;",
            f"pid {quoted(prefix + '/nginx.pid')};",
            f"lock_file {quoted(prefix + '/nginx.lock')};",
            f"error_log {quoted(prefix + '/logs/error.log')} notice;",
            "events { worker_connections 4096; }",
            "http {",
            "    default_type application/octet-stream;",
            "    types {}",
            "    sendfile on;",
            "    tcp_nopush on;",
            "    keepalive_requests 100000;",
            "    log_format requests '$status $body_bytes_sent $msec $request_time $connection_time "
            "\"$http_range\" \"$request\" $connection $ssl_session_reused';",
            f"    access_log {quoted(self.access_log)} requests;",
        ] + [f"    {directive}" for directive in self.http_directives]
        if os.geteuid() == 0:
            # Workers would otherwise run as nobody, who cannot enter the 0700 temporary directory.
            lines.insert(0, "user root;")
        for temp in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
            lines.append(f"    {temp}_temp_path {quoted(prefix + '/temp/' + temp)};")
        lines += [
            "    server {",
            f"        listen 127.0.0.1:{self.port};",
            f"        listen 127.0.0.1:{self.tls_port} ssl{' http2' if self.http2 else ''};",
            f"        ssl_certificate {quoted(self.certificate)};",
            f"        ssl_certificate_key {quoted(self.key)};",
            "        ssl_protocols TLSv1.2 TLSv1.3;",
            f"        root {quoted(self.document_root)};",
            f"        location = {READY} {{ access_log off; return 204; }}",
            f"        location = {STATUS} {{ access_log off; stub_status; }}",
        ]
        for location in self.locations:
            lines.append(f"        location {location.match} {{")
            if location.alias is not None:
                lines.append(f"            alias {quoted(location.alias)};")
            if location.limit_rate:
                lines.append(f"            limit_rate {location.limit_rate};")
            for name, value in location.headers.items():
                lines.append(f"            add_header {name} {quoted(value)} always;")
            lines += [f"            {directive}" for directive in location.directives]
            lines.append("        }")
        lines += ["    }", "}"]
        return "\n".join(lines) + "\n"
