"""When a server read each request, sent its first byte and ended it, and what a run's requests say together:
how many connections were open at once, how long past a count, when the download's first byte left, and how much
of the connections' time went to waiting for first bytes.

Every time is on the wall clock (CLOCK_REALTIME, seconds since the epoch), as `time.time()` reads it, so that a
server's log lines up with a command's start measured in this process on the same machine. A connection counts as
open from the moment it was accepted (where the server logs it, as nginx does) or else its first request was read,
to the end of its last response: a connection idle in a client's pool after its last request, or one that never
sent a request, is not counted. A server logs a response's end when it has handed the last byte to the kernel,
which may be a socket buffer (a few MiB on loopback) before the client has read it.
"""

from dataclasses import dataclass


@dataclass
class RequestTiming:
    """One request as the server logged it."""

    connection: object  # the server's name for the connection it came on (a serial number)
    method: str
    status: int
    received: float  # the request had been read
    first_byte: float  # the response's first byte was sent (None: never, the client left first)
    finished: float  # the response ended
    connection_start: float = None  # the connection was accepted, where the server logs it
    first_byte_logged: bool = True  # False: the server logs no first-byte time, `first_byte` is `received`

    @property
    def waited(self):
        """Seconds from the request to the response's first byte (to its end if none was sent)."""
        return (self.first_byte if self.first_byte is not None else self.finished) - self.received


@dataclass
class Span:
    """A connection's time open: from its first request read to its last response's end, and its waiting in it."""

    connection: object
    start: float
    end: float
    waited: float = 0.0
    requests: int = 0


def spans(timings):
    """The connections of `timings`, each with its span and the seconds its requests waited for first bytes."""
    found = {}
    for timing in timings:
        span = found.get(timing.connection)
        if span is None:
            span = found[timing.connection] = Span(timing.connection, timing.received, timing.finished)
        span.start = min(span.start, timing.received, timing.connection_start or timing.received)
        span.end = max(span.end, timing.finished)
        span.waited += max(0.0, timing.waited)
        span.requests += 1
    return list(found.values())


def open_counts(timings):
    """[(time, connections open from then on)], one entry per instant at which the count changes, in time order."""
    changes = {}
    for span in spans(timings):
        changes[span.start] = changes.get(span.start, 0) + 1
        changes[span.end] = changes.get(span.end, 0) - 1
    counts, open_now = [], 0
    for when in sorted(changes):
        open_now += changes[when]
        counts.append((when, open_now))
    return counts


def peak_connections(timings):
    """The most connections open at once, 0 without requests."""
    return max((count for _, count in open_counts(timings)), default=0)


def seconds_above(timings, limit):
    """Seconds, in all, during which more than `limit` connections were open."""
    total, since = 0.0, None
    for when, count in open_counts(timings):
        if count > limit and since is None:
            since = when
        elif count <= limit and since is not None:
            total += when - since
            since = None
    return total


def first_body_byte(timings):
    """When the first response carrying the content (a GET answered 200 or 206) sent its first byte, or None."""
    times = [timing.first_byte for timing in timings
             if timing.method == "GET" and timing.status in (200, 206) and timing.first_byte is not None]
    return min(times, default=None)


def waiting_share(timings):
    """Seconds the connections waited for first bytes over the seconds they were open, all together; None without
    requests, or when the server logs no first-byte times."""
    if not any(timing.first_byte_logged for timing in timings):
        return None
    found = spans(timings)
    open_seconds = sum(span.end - span.start for span in found)
    return sum(span.waited for span in found) / open_seconds if open_seconds > 0 else None
