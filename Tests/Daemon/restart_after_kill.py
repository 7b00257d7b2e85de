#!/usr/bin/env python3
"""A daemon killed with SIGKILL mid-download comes back from its session file with every download in its state.

Starts the daemon itself (``--daemon braid|aria2c``, ``--daemon-bin PATH``) with ``--dir`` and ``--session``, lets
one download complete, pauses a second mid-flight and kills the daemon with SIGKILL while a third is still
receiving bytes from the throttled test server. Restarted with the same session and directory: the interrupted one
resumes and finishes byte-identical, the paused one stays paused until unpaused and then finishes byte-identical,
and gids are kept. braid's daemon also lists the completed one as complete and exits 0 on SIGTERM.

braid writes its session within half a second of a change, so the script waits until the file lists the last
download added before it kills the daemon (what a kill can lose is the record of that last half second).

aria2 differs, and the script checks aria2's actual behaviour when ``--daemon aria2c``: aria2 writes its session
only on exit, on ``aria2.saveSession`` or every ``--save-session-interval`` seconds, so the script calls
saveSession before the kill; and aria2 leaves completed downloads out of the session (without ``--force-save``),
so after the restart the completed gid is unknown.

    restart_after_kill.py --daemon braid --daemon-bin .build/debug/braid --secret S \\
        --file-url http://127.0.0.1:PORT/file --dir DIR --session FILE

Exits 0 when every check holds, 1 with the reason otherwise.
"""

import json
import os

from daemon_common import (
    RPC,
    Daemon,
    RPCError,
    check,
    check_file,
    common_arguments,
    keep_going,
    content_length,
    expected_content,
    run,
    wait_until,
)

TIMEOUT = 120


def status(rpc, gid, keys=("gid", "status", "completedLength", "totalLength", "errorCode")):
    return rpc.call("aria2.tellStatus", gid, list(keys))


def session_lists(session, gid):
    """Whether the session file lists the download `gid` (a file being replaced is read whole, old or new)."""
    try:
        with open(session) as file:
            return any(task["gid"] == gid for task in json.load(file)["tasks"])
    except (OSError, ValueError):
        return False


def main():
    parser = common_arguments(__doc__)
    parser.add_argument("--daemon-bin", help="the daemon's executable (default: braid or aria2c on PATH)")
    parser.add_argument("--session", required=True, help="the session file, shared by both runs")
    parser.add_argument(
        "--daemon-arg",
        action="append",
        default=[],
        help="an extra daemon flag, as --flag=VALUE (braid's names; -j and --max-connections-per-host map to aria2c's)",
    )
    parser.add_argument("--logs", help="where the daemons' stdout and stderr go (default: next to --session)")
    options = parser.parse_args()
    if options.keep_going:
        keep_going()
    logs = options.logs or os.path.dirname(os.path.abspath(options.session))
    os.makedirs(options.dir, exist_ok=True)

    size = content_length(options.file_url)
    expected = expected_content(size, options.seed)

    def start(name):
        return Daemon(
            options.daemon,
            options.daemon_bin,
            options.dir,
            options.session,
            options.secret,
            logs,
            extra=options.daemon_arg,
            name=name,
        )

    def path(name):
        return os.path.join(options.dir, name)

    first = start("daemon-before-kill")
    try:
        rpc = RPC(first.rpc_url, options.secret)
        done = rpc.call("aria2.addUri", [options.file_url], {"out": "done.bin"})
        wait_until("done.bin to complete", TIMEOUT, lambda: status(rpc, done)["status"] == "complete")
        check_file(path("done.bin"), expected, "done.bin before the kill")

        # One at a time, so each is alone on the throttled server and still receiving when paused or killed.
        paused = rpc.call("aria2.addUri", [options.file_url], {"out": "paused.bin"})
        wait_until("paused.bin to receive bytes", TIMEOUT, lambda: int(status(rpc, paused)["completedLength"]) > 0)
        check(rpc.call("aria2.pause", paused) == paused, "aria2.pause did not answer the gid")
        wait_until("paused.bin to be paused", TIMEOUT, lambda: status(rpc, paused)["status"] == "paused")
        # braid reports "paused" at once and its transfer stops within a moment, saving what arrived meanwhile;
        # braid.state says "paused" once it has (aria2 reports "paused" only then, and has no braid key).
        wait_until(
            "paused.bin's transfer to have stopped",
            TIMEOUT,
            lambda: status(rpc, paused, ["braid"]).get("braid", {}).get("state", "paused") == "paused",
        )
        paused_bytes = int(status(rpc, paused)["completedLength"])
        active = rpc.call("aria2.addUri", [options.file_url], {"out": "active.bin"})
        wait_until("active.bin to receive bytes", TIMEOUT, lambda: int(status(rpc, active)["completedLength"]) > 0)
        if options.daemon == "aria2c":
            check(rpc.call("aria2.saveSession") == "OK", "aria2.saveSession did not answer OK")
        else:
            # braid writes its session within half a second of a change, by itself; the last change is the add.
            wait_until("the session to list active.bin", TIMEOUT, lambda: session_lists(options.session, active))
        before_kill = status(rpc, active)
        check(
            before_kill["status"] == "active" and int(before_kill["completedLength"]) < size,
            f"active.bin is not mid-download when the daemon is killed: {before_kill}; throttle the server harder",
        )
        rpc.close()
    finally:
        first.child.kill()
    check(
        first.child.process.returncode == -9, f"the daemon was not killed by SIGKILL: {first.child.process.returncode}"
    )

    second = start("daemon-after-kill")
    try:
        rpc = RPC(second.rpc_url, options.secret)
        after = status(rpc, paused)
        check(after["status"] == "paused", f"paused.bin came back as {after['status']}, not paused")
        check(
            int(after["completedLength"]) <= paused_bytes,
            f"paused.bin came back with {after['completedLength']} bytes, more than the {paused_bytes} at pause",
        )
        check(status(rpc, active)["status"] in ("active", "waiting", "complete"), "active.bin did not come back")

        wait_until(
            "active.bin to complete after the restart", TIMEOUT, lambda: status(rpc, active)["status"] == "complete"
        )
        check_file(path("active.bin"), expected, "active.bin, interrupted by SIGKILL and resumed")
        check(status(rpc, paused)["status"] == "paused", "paused.bin left paused while active.bin finished")

        if options.daemon == "braid":
            restored = status(rpc, done)
            check(restored["status"] == "complete", f"done.bin came back as {restored['status']}, not complete")
            check(restored["completedLength"] == str(size), f"done.bin came back with {restored['completedLength']}")
            stopped = [entry["gid"] for entry in rpc.call("aria2.tellStopped", 0, 100, ["gid"])]
            check(done in stopped, f"done.bin ({done}) is not listed by tellStopped after the restart: {stopped}")
        else:
            try:
                status(rpc, done)
                check(False, "aria2 kept a completed download in its session without --force-save")
            except RPCError as error:
                check(error.code == 1, f"aria2: tellStatus of the forgotten done.bin answered code {error.code}")
        check_file(path("done.bin"), expected, "done.bin after the restart")

        check(rpc.call("aria2.unpause", paused) == paused, "aria2.unpause did not answer the gid")
        wait_until("paused.bin to complete once unpaused", TIMEOUT, lambda: status(rpc, paused)["status"] == "complete")
        check_file(path("paused.bin"), expected, "paused.bin, paused across the kill and then unpaused")
        rpc.close()
    finally:
        code = second.stop()
    if options.daemon == "braid":
        check(code == 0, f"braid daemon exited with {code} on SIGTERM, not 0\n{second.child.evidence()}")
    check(os.path.isfile(options.session), f"no session file at {options.session} after SIGTERM")


if __name__ == "__main__":
    run(main)
