#!/usr/bin/env python3
"""What does `braid daemon` cost while it waits, and how fast does it answer? Idle CPU and RPC latency, in one run.

Starts the test server, throttled to --rate bytes/s per connection (1 KiB/s by default: the active downloads move
next to nothing, so what is measured is the daemon's own overhead), and the daemon with `-j 2` and one connection
per host. Queues --downloads (100) downloads of one large file: 2 active, 98 waiting. Opens --clients (20)
WebSocket clients on /jsonrpc that stay connected and read every notification. Then measures:

1. idle CPU: utime + stime of the daemon from /proc/PID/stat over --idle-seconds (10) in which nobody asks it
   anything, as a percentage of one core; with the peak resident set size (VmHWM) and thread count beside it;
2. `aria2.tellActive` latency (full status objects of the 2 active downloads) for --calls (1000) calls over one
   HTTP keep-alive connection, then over one WebSocket: median and p99 in ms. Target: both under 10 ms.

`--daemon aria2c` measures aria2c the same way (same flags in aria2's spelling) for comparison.

Usage: Benchmarks/daemon_rpc.py [--daemon braid|aria2c] [--braid PATH] [--test-server PATH] [--downloads 100]
       [--clients 20] [--idle-seconds 10] [--calls 1000] [--rate 1024] [--markdown]
Build first: `swift build -c release --product braid`, then `swift build -c release --product braid-test-server`.
All traffic stays on 127.0.0.1; the daemon and the server are stopped on exit. Exits 1 when a target fails.
"""

import argparse
import json
import os
import secrets
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness.processes import cpu_seconds, proc_status  # noqa: E402

# The daemon tests' JSON-RPC client (appended, so that `harness` above stays this folder's package).
sys.path.append(os.path.join(harness.ROOT, "Tests", "Daemon"))
import websocket  # noqa: E402  (websocket-client, from PyPI: scripts/install-deps)

from daemon_common import RPC, Failure, check, wait_for_daemon, wait_until  # noqa: E402

TARGET_MS = 10.0


def start_daemon(work, options, secret):
    """braid daemon or aria2c with RPC on a free 127.0.0.1 port, -j CONCURRENT, one connection per download.

    braid's --max-connections-per-host caps all downloads together (a second download from the same host would
    get none), so braid is told -n 1; aria2's cap is per download. Returns (process, RPC URL).
    """
    downloads, session = work.path("downloads"), work.path("session")
    os.makedirs(downloads, exist_ok=True)
    if options.daemon == "braid":
        argv = [options.braid, "daemon", "--listen", "127.0.0.1:0", "--dir", downloads, "--session", session,
                "--rpc-secret", secret, f"-j={options.concurrent}", "--connections=1"]
    else:
        port = harness.free_port()
        argv = [options.aria2c, "--enable-rpc", f"--rpc-listen-port={port}", "--rpc-listen-all=false",
                f"--rpc-secret={secret}", f"--dir={downloads}", "--daemon=false", f"--save-session={session}",
                "--no-conf", "--quiet=false", "--console-log-level=warn", "--summary-interval=0",
                f"--max-concurrent-downloads={options.concurrent}", "--max-connection-per-server=1", "--split=1"]
    stdout_path = work.path("daemon.stdout")
    with open(stdout_path, "wb") as stdout, open(work.path("daemon.stderr"), "wb") as stderr:
        process = work.children.popen(argv, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL)
    if options.daemon == "braid":
        url = harness.wait_for_line(process, r"^braid daemon listening on (\S+)", 30, "braid daemon",
                                    path=stdout_path).group(1).rstrip("/")
    else:
        url = f"http://127.0.0.1:{port}"
    harness.require_loopback(url)
    wait_for_daemon(url + "/jsonrpc", secret)
    return process, url + "/jsonrpc"


class Listener:
    """A WebSocket client on /jsonrpc that stays connected and counts the notifications it is sent."""

    def __init__(self, url):
        self.socket = websocket.create_connection(url, timeout=30)
        self.notifications = 0
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        while True:
            try:
                message = self.socket.recv()
            except (websocket.WebSocketException, OSError):
                return
            if message and '"method"' in message:
                self.notifications += 1

    def close(self):
        self.socket.close()
        self.thread.join(10)


class WebSocketRPC:
    """JSON-RPC over one WebSocket, skipping notifications while it waits for its answer."""

    def __init__(self, url, secret):
        self.socket = websocket.create_connection(url, timeout=30)
        self.secret = secret
        self.next_id = 0

    def call(self, method, *params):
        self.next_id += 1
        request_id = str(self.next_id)
        self.socket.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method,
                                     "params": [f"token:{self.secret}", *params]}))
        while True:
            answer = json.loads(self.socket.recv())
            if answer.get("id") == request_id:
                check("result" in answer, f"{method} over WebSocket answered {answer}")
                return answer["result"]

    def close(self):
        self.socket.close()


def latencies(call, count):
    """Milliseconds per call of `call()`, after 20 unmeasured warm-up calls."""
    for _ in range(20):
        call()
    times = []
    for _ in range(count):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return times


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--daemon", choices=("braid", "aria2c"), default="braid")
    parser.add_argument("--braid", default=harness.built("braid", debug_too=True),
                        help="the braid binary (default: release, else debug)")
    parser.add_argument("--aria2c", default="aria2c")
    parser.add_argument("--test-server", default=harness.built("braid-test-server", debug_too=True))
    parser.add_argument("--downloads", type=int, default=100)
    parser.add_argument("--concurrent", type=int, default=2, help="-j: downloads active at once")
    parser.add_argument("--clients", type=int, default=20, help="WebSocket clients kept connected")
    parser.add_argument("--idle-seconds", type=float, default=10)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--rate", type=int, default=1024, help="bytes/s per connection the test server sends")
    parser.add_argument("--size", type=int, default=1 << 30, help="the file's size; it must outlast the run")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    options = parser.parse_args(argv)

    secret = secrets.token_hex(8)
    listeners = []
    with harness.Workspace("braid-daemon-rpc.") as work:
        url = work.test_server(options.test_server, options.size, rate=options.rate).url
        daemon, rpc_url = start_daemon(work, options, secret)
        try:
            rpc = RPC(rpc_url, secret)
            for number in range(options.downloads):
                rpc.call("aria2.addUri", [url], {"out": f"file{number:03}.bin"})
            expected_active = min(options.concurrent, options.downloads)

            def queued():
                stat = rpc.call("aria2.getGlobalStat")
                return stat["numActive"] == str(expected_active) and stat["numWaiting"] == str(
                    options.downloads - expected_active
                )

            wait_until(f"{expected_active} active and the rest waiting", 60, queued)
            active = rpc.call("aria2.tellActive", ["gid", "completedLength"])
            wait_until("the active downloads to receive bytes", 60,
                       lambda: all(int(s["completedLength"]) > 0
                                   for s in rpc.call("aria2.tellActive", ["completedLength"])))
            ws_url = rpc_url.replace("http://", "ws://", 1)
            listeners = [Listener(ws_url) for _ in range(options.clients)]

            before, started = cpu_seconds(daemon.pid), time.monotonic()
            time.sleep(options.idle_seconds)  # the measurement window itself: nobody talks to the daemon meanwhile
            used, elapsed = cpu_seconds(daemon.pid) - before, time.monotonic() - started
            idle_percent = 100 * used / elapsed

            # The daemon's own overhead: the same 100 downloads and 20 clients, with every transfer paused.
            rpc.call("aria2.pauseAll")
            wait_until("every download to be paused", 60,
                       lambda: rpc.call("aria2.getGlobalStat")["numActive"] == "0")
            paused_before, paused_started = cpu_seconds(daemon.pid), time.monotonic()
            time.sleep(options.idle_seconds)  # the measurement window itself, as above
            paused_used, paused_elapsed = cpu_seconds(daemon.pid) - paused_before, time.monotonic() - paused_started
            rpc.call("aria2.unpauseAll")
            wait_until(f"{expected_active} active again", 60, queued)

            http_times = latencies(lambda: rpc.call("aria2.tellActive"), options.calls)
            websocket_rpc = WebSocketRPC(ws_url, secret)
            websocket_times = latencies(lambda: websocket_rpc.call("aria2.tellActive"), options.calls)
            websocket_rpc.close()
            check(len(active) == expected_active, f"tellActive lists {len(active)} downloads, not {expected_active}")
            peak_rss = proc_status(daemon.pid, "VmHWM")
            threads = proc_status(daemon.pid, "Threads")
            notifications = sum(listener.notifications for listener in listeners)
        finally:
            for listener in listeners:
                listener.close()

    rows = [
        ("Idle CPU, 2 active at the trickle", f"{idle_percent:.2f} % of a core",
         f"{used * 1000:.0f} ms in {elapsed:.1f} s", "-", "-"),
        ("Idle CPU, all paused", f"{100 * paused_used / paused_elapsed:.2f} % of a core",
         f"{paused_used * 1000:.0f} ms in {paused_elapsed:.1f} s", "-", "-"),
        ("tellActive, HTTP keep-alive", f"{statistics.median(http_times):.2f} ms",
         f"p99 {harness.percentile(http_times, 0.99):.2f} ms", f"< {TARGET_MS:g} ms",
         verdict(http_times)),
        ("tellActive, WebSocket", f"{statistics.median(websocket_times):.2f} ms",
         f"p99 {harness.percentile(websocket_times, 0.99):.2f} ms", f"< {TARGET_MS:g} ms",
         verdict(websocket_times)),
    ]
    print(f"{options.daemon}: {options.downloads} queued ({expected_active} active at {options.rate} B/s per "
          f"connection, the rest waiting), {options.clients} WebSocket clients connected; peak RSS {peak_rss} kB, "
          f"{threads} threads, {notifications} notifications received by the clients")
    harness.print_table(("Measure", "Median / value", "Detail", "Target", "Verdict"), rows, options.markdown,
                        align="lllll")
    return 0 if all(row[4] != "FAIL" for row in rows) else 1


def verdict(times):
    """PASS when both the median and the p99 are under the target."""
    return "PASS" if statistics.median(times) < TARGET_MS and harness.percentile(times, 0.99) < TARGET_MS else "FAIL"


def reporting_failures(main):
    """`main(argv)` with a failed check (`Failure`) printed as one FAIL line and exit status 1: each daemon
    benchmark's entry point."""

    def run(argv):
        try:
            return main(argv)
        except Failure as failure:
            print(f"FAIL: {failure}", file=sys.stderr)
            return 1

    return run


if __name__ == "__main__":
    harness.main(reporting_failures(main))
