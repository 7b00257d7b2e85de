"""What a run downloads: a URL with its size and digest, and the server's log of the requests it answered."""

import os
import time
from dataclasses import dataclass


@dataclass
class RequestLog:
    """A server's log with one line per answered request; `status_of(line)` gives a line's status or None."""

    path: str
    status_of: object

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

    def requests_since(self, offset):
        """(requests, refusals: 429 or 5xx) logged after byte `offset`."""
        if not os.path.exists(self.path):
            return 0, 0
        self.settle()
        with open(self.path, "rb") as file:
            file.seek(offset)
            statuses = [status for line in file if (status := self.status_of(line)) is not None]
        return len(statuses), sum(1 for status in statuses if status == 429 or status >= 500)


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
