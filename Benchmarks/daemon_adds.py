#!/usr/bin/env python3
"""How does a daemon take many downloads at once? `braid daemon` against `aria2c --enable-rpc`, side by side.

For each daemon, in one run: start it (`-j 16`, one connection a download) with a WebSocket client on /jsonrpc that
reads every notification, then add --downloads (1000) downloads of a small file from the test server (4 KiB each,
unthrottled, each its own `out`) in ONE `system.multicall`, as AriaNg and aria2p add a batch, while a second client
calls `aria2.getVersion` every 50 ms over its own connection. Measures:

1. the multicall's wall time;
2. the longest `getVersion` wait meanwhile: how long the batch shuts out every other client;
3. the wall time from the multicall until every download has ended;
4. the notifications the WebSocket client received: it must get a start and a complete for every download.

Targets for braid: every notification received (2 per download), the longest `getVersion` wait under 1 s, and the
time until all ended at most 2 times aria2c's. (Before the session file was written at most every 0.5 s, a
multicall of 1,000 took 9 to 27 s here, every other client waiting for all of it, and 75 to 206 downloads' notifications
were lost.)

Usage: Benchmarks/daemon_adds.py [--braid PATH] [--test-server PATH] [--downloads 1000] [--markdown]
Build first: `swift build -c release --product braid`, then `swift build -c release --product braid-test-server`.
All traffic stays on 127.0.0.1; the daemons and the server are stopped on exit. Exits 1 when a target fails.
"""

import argparse
import os
import secrets
import sys
import threading
import time
from types import SimpleNamespace

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from daemon_rpc import Listener, reporting_failures, start_daemon  # noqa: E402
from daemon_common import RPC, check, wait_until  # noqa: E402

SIZE = 4096
MAX_WAIT_SECONDS = 1.0
ALL_ENDED_RATIO = 2.0


def measure(daemon, options, work, url, secret):
    """The four figures for one daemon (see the module's docstring)."""
    settings = SimpleNamespace(daemon=daemon, braid=options.braid, aria2c=options.aria2c, concurrent=16)
    process, rpc_url = start_daemon(work, settings, secret)
    listener = Listener(rpc_url.replace("http://", "ws://", 1))
    try:
        rpc, pinger_rpc = RPC(rpc_url, secret, timeout=600), RPC(rpc_url, secret, timeout=600)
        calls = [{"methodName": "aria2.addUri",
                  "params": [f"token:{secret}", [url], {"out": f"{daemon}-{number:05}.bin"}]}
                 for number in range(options.downloads)]
        longest, done = [0.0], threading.Event()

        def ping():
            while not done.is_set():
                started = time.monotonic()
                pinger_rpc.call("aria2.getVersion")
                longest[0] = max(longest[0], time.monotonic() - started)
                done.wait(0.05)

        pinger = threading.Thread(target=ping, daemon=True)
        pinger.start()
        started = time.monotonic()
        answers = rpc.call("system.multicall", calls)
        added = time.monotonic() - started
        done.set()
        pinger.join(600)
        check(len(answers) == options.downloads and all(isinstance(answer, list) for answer in answers),
              f"{daemon}: the multicall answered {str(answers)[:200]}")

        def ended():
            stat = rpc.call("aria2.getGlobalStat")
            return stat["numActive"] == "0" and stat["numWaiting"] == "0"

        wait_until(f"{daemon}: every download to end", 600, ended, interval=0.02)
        all_ended = time.monotonic() - started
        stopped = rpc.call("aria2.tellStopped", 0, options.downloads, ["status"])
        complete = sum(1 for status in stopped if status["status"] == "complete")
        expected = 2 * options.downloads
        # Those still on their way come within moments; a daemon that dropped some is counted short, not failed here.
        deadline = time.monotonic() + 10
        while listener.notifications < expected and time.monotonic() < deadline:
            time.sleep(0.05)
        return SimpleNamespace(added=added, longest=longest[0], all_ended=all_ended, complete=complete,
                               notifications=listener.notifications)
    finally:
        listener.close()
        process.terminate()
        process.wait(30)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--braid", default=harness.built("braid", debug_too=True),
                        help="the braid binary (default: release, else debug)")
    parser.add_argument("--aria2c", default="aria2c")
    parser.add_argument("--test-server", default=harness.built("braid-test-server", debug_too=True))
    parser.add_argument("--downloads", type=int, default=1000)
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    options = parser.parse_args(argv)

    secret = secrets.token_hex(8)
    results = {}
    with harness.Workspace("braid-daemon-adds.") as work:
        url = work.test_server(options.test_server, SIZE).url
        for daemon in ("aria2c", "braid"):
            # A workspace each: a session file one daemon wrote is foreign to the other, which refuses it.
            with harness.Workspace(f"braid-daemon-adds-{daemon}.") as own:
                results[daemon] = measure(daemon, options, own, url, secret)

    braid, aria2c = results["braid"], results["aria2c"]
    ratio = braid.all_ended / aria2c.all_ended
    rows = [(daemon, f"{result.added:.2f} s", f"{result.longest:.2f} s", f"{result.all_ended:.2f} s",
             f"{result.complete} of {options.downloads}", f"{result.notifications} of {2 * options.downloads}")
            for daemon, result in results.items()]
    print(f"{options.downloads} downloads of {SIZE} bytes added in one system.multicall, -j 16")
    harness.print_table(("daemon", "multicall", "longest other call", "all ended", "complete", "notifications"),
                        rows, options.markdown, align="lrrrrr")
    verdicts = [
        ("every download complete", braid.complete == options.downloads),
        ("every notification received", braid.notifications >= 2 * options.downloads),
        (f"longest other call under {MAX_WAIT_SECONDS:g} s ({braid.longest:.2f} s)", braid.longest < MAX_WAIT_SECONDS),
        (f"all ended within {ALL_ENDED_RATIO:g} x aria2c's ({ratio:.2f})", ratio <= ALL_ENDED_RATIO),
    ]
    for what, passed in verdicts:
        print(f"braid daemon: {what}: {'PASS' if passed else 'FAIL'}")
    return 0 if all(passed for _, passed in verdicts) else 1


if __name__ == "__main__":
    harness.main(reporting_failures(main))
