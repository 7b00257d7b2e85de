#!/usr/bin/env python3
"""Runs one client script against braid's daemon or aria2c outside the Swift test suite.

Starts Braid's test server (throttled per connection) and, unless the script starts the daemon itself
(restart_after_kill.py), the daemon, in a fresh temporary directory; runs the script with the matching arguments;
stops everything; exits with the script's status. For example, against the real aria2:

    swift build --product braid-test-server
    Tests/Daemon/harness.py --daemon aria2c Tests/Daemon/aria2p_client.py
    Tests/Daemon/harness.py --daemon braid --daemon-bin .build/debug/braid Tests/Daemon/restart_after_kill.py
"""

import argparse
import functools
import http.server
import os
import secrets
import subprocess
import sys
import tempfile
import threading

from daemon_common import DAEMONS, Daemon, Failure, start_file_server


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--daemon", choices=DAEMONS, default="braid")
    parser.add_argument("--daemon-bin", help="default: .build/debug/braid for braid, aria2c on PATH for aria2c")
    parser.add_argument("--test-server", default=os.path.join(root, ".build/debug/braid-test-server"))
    parser.add_argument("--size", type=int, default=2 << 20, help="bytes the test server serves (default 2 MiB)")
    parser.add_argument("--rate", type=int, default=256 << 10, help="bytes/s per connection (default 256 KiB/s)")
    parser.add_argument(
        "--daemon-arg",
        action="append",
        help="a daemon flag as --flag=VALUE, in braid's spelling (default: --max-connections-per-host=2, as the "
        "Swift suite)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("script")
    parser.add_argument("script_arguments", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    daemon_arguments = options.daemon_arg or ["--max-connections-per-host=2"]
    if options.daemon == "braid" and not options.daemon_bin:
        options.daemon_bin = os.path.join(root, ".build/debug/braid")

    work = tempfile.mkdtemp(prefix="braid-daemon-harness.")
    directory, session, logs = (os.path.join(work, name) for name in ("downloads", "session", "logs"))
    os.makedirs(directory)
    secret = secrets.token_hex(8)
    server, url = start_file_server(options.test_server, options.size, options.rate, logs)
    daemon = stub = None
    try:
        arguments = [sys.executable, options.script, "--daemon", options.daemon, "--secret", secret]
        arguments += ["--file-url", url, "--dir", directory]
        if os.path.basename(options.script) == "restart_after_kill.py":
            arguments += ["--session", session, "--logs", logs]
            if options.daemon_bin:
                arguments += ["--daemon-bin", options.daemon_bin]
            arguments += [f"--daemon-arg={argument}" for argument in daemon_arguments]
        else:
            daemon = Daemon(
                options.daemon, options.daemon_bin, directory, session, secret, logs, extra=daemon_arguments
            )
            arguments += ["--rpc-url", daemon.rpc_url]
        if os.path.basename(options.script) == "page_in_browser.py":
            arguments += ["--screenshot", os.path.join(work, "page.png")]
            if options.daemon == "braid":
                arguments += ["--page-url", daemon.base_url + "/"]
            else:
                stub = serve_stub_page(daemon.rpc_url.replace("http://", "ws://", 1), work)
                arguments += ["--page-url", f"http://127.0.0.1:{stub.server_port}/"]
        code = subprocess.call(arguments + options.script_arguments)
    finally:
        if stub:
            stub.shutdown()
        if daemon:
            daemon.stop()
        server.stop()
    print(f"{os.path.basename(options.script)} against {options.daemon}: exit {code}; files in {work}", flush=True)
    if not options.keep and code == 0:
        subprocess.call(["rm", "-rf", work])
    sys.exit(code)


def serve_stub_page(websocket_url, work):
    """Serves stub_page.html, pointed at ``websocket_url``, at / on a free port: aria2c has no page of its own."""
    html = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "stub_page.html")).read()
    root = os.path.join(work, "stub-page")
    os.makedirs(root)
    with open(os.path.join(root, "index.html"), "w") as page:
        page.write(html.replace("RPC_URL", websocket_url))

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *arguments):
            pass

    handler = functools.partial(Quiet, directory=root)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


if __name__ == "__main__":
    try:
        main()
    except Failure as failure:
        print(f"FAIL: {failure}", file=sys.stderr)
        sys.exit(1)
