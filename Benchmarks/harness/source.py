"""What a run downloads: a URL with its size and digest, or a set of files; and the server's log of the requests
it answered, with the connections they came on where the server logs those."""

import os
import time
from dataclasses import dataclass, field

from .files import digest_of


@dataclass
class RequestLog:
    """A server's log with one line per answered request; `status_of(line)` gives a line's status or None."""

    path: str
    status_of: object
    # connection_of(line) -> (the connection's serial number, its TLS session: "r" resumed, "." new, "" no TLS,
    # the request's protocol), or None when the line says nothing of it; None when the server logs no connections.
    connection_of: object = None
    # timing_of(line) -> a harness.RequestTiming (when the request was read, its first byte sent, its end), or None
    # when the line says nothing of it; None when the server logs no times.
    timing_of: object = None

    def size(self):
        return os.path.getsize(self.path) if os.path.exists(self.path) else 0

    def settle(self, timeout=3.0):
        """Waits until the log has stopped growing: a server logs a response once it has sent all of it."""
        deadline = time.monotonic() + timeout
        size = self.size()
        while time.monotonic() < deadline:
            time.sleep(0.25)
            now = self.size()
            if now == size:
                return
            size = now

    def lines_since(self, offset, settle=True):
        if not os.path.exists(self.path):
            return []
        if settle:
            self.settle()
        with open(self.path, "rb") as file:
            file.seek(offset)
            return file.readlines()

    def requests_since(self, offset, settle=True):
        """(requests, refusals: 429 or 5xx) logged after byte `offset`."""
        statuses = [status for line in self.lines_since(offset, settle) if (status := self.status_of(line)) is not None]
        return len(statuses), sum(1 for status in statuses if status == 429 or status >= 500)

    def timings_since(self, offset, settle=True):
        """The RequestTimings of the requests logged after `offset`, in log order; [] without `timing_of`."""
        if not self.timing_of:
            return []
        return [timing for line in self.lines_since(offset, settle) if (timing := self.timing_of(line)) is not None]

    def connections_since(self, offset, settle=True):
        """The Connections that carried the requests logged after `offset`, or None without `connection_of`."""
        if not self.connection_of:
            return None
        sessions, protocols = {}, set()
        for line in self.lines_since(offset, settle):
            if (connection := self.connection_of(line)) is not None:
                serial, session, protocol = connection
                sessions.setdefault(serial, session)
                protocols.add(protocol)
        return Connections(len(sessions), sum(1 for session in sessions.values() if session == "."),
                           sum(1 for session in sessions.values() if session == "r"),
                           ",".join(sorted(protocol for protocol in protocols if protocol)))


@dataclass
class Connections:
    """The connections a server's log shows: distinct serial numbers, each counted once with its TLS session."""

    count: int
    tls_new: int  # connections with a new TLS session: a full handshake
    tls_resumed: int  # connections with a resumed TLS session
    protocols: str  # the request lines' protocols: "HTTP/1.1", "HTTP/2.0", ...


@dataclass
class Source:
    """A file to download: where, how big, its digest (`algorithm` as hashlib names it), who logs the requests."""

    name: str
    url: str
    size: int
    digest: str
    log: RequestLog = None
    algorithm: str = "md5"
    cacert: str = None  # the CA certificate an https URL needs
    # A function giving how many connections the server has accepted so far (nginx's stub_status), or None.
    accepted: object = None
    # A function giving the CPU seconds (user + system) the server's processes have used so far, or None.
    server_cpu: object = None


@dataclass
class Entry:
    """One file of a FileSet: the name it is saved under, its URL, size and digest."""

    name: str
    url: str
    size: int
    digest: str


@dataclass
class FileSet:
    """Many files to download in one run (a list): each checked by name in the run's directory.

    A Runner treats it as a Source whose `size` is the total; `verify(directory)` says what is wrong, or "".
    """

    name: str
    entries: list = field(default_factory=list)
    log: RequestLog = None
    algorithm: str = "md5"
    cacert: str = None
    accepted: object = None
    server_cpu: object = None
    digest: str = None

    @property
    def size(self):
        return sum(entry.size for entry in self.entries)

    @property
    def url(self):
        return self.entries[0].url

    @property
    def urls(self):
        return [entry.url for entry in self.entries]

    def verify(self, directory):
        """"" when `directory` holds exactly the entries' files, each with its digest; otherwise what differs."""
        expected = {entry.name: entry for entry in self.entries}
        present = set(os.listdir(directory))
        missing = sorted(set(expected) - present)
        extra = sorted(present - set(expected))
        wrong = sorted(name for name in set(expected) & present
                       if digest_of(os.path.join(directory, name), self.algorithm) != expected[name].digest)
        problems = [f"{len(names)} {what} ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''})"
                    for names, what in ((missing, "missing"), (wrong, "with a wrong digest"), (extra, "unexpected"))
                    if names]
        return "; ".join(problems) + (f" of {len(expected)} files" if problems else "")
