#!/usr/bin/env python3
"""Drives an aria2-compatible daemon with aria2p, a client nobody at Braid wrote, as its users would.

Adds downloads (with ``out``, with a right and a wrong ``checksum``), lists them, pauses, resumes and removes them,
moves them in the waiting queue (``move_to_top``, ``move_down``, ``move_to``, ``move_up``, ``move_to_bottom``),
reads the global stat, and listens to aria2's WebSocket notifications in a thread: onDownloadStart, Pause,
Complete, Stop and Error must arrive for the right gids. Completed files must hold exactly the bytes the test
server serves. The server must be throttled per connection so that a download is still running when it is paused.

    aria2p_client.py --daemon aria2c --rpc-url http://127.0.0.1:6800/jsonrpc --secret S \\
        --file-url http://127.0.0.1:PORT/file --dir DIR

Exits 0 when every check holds, 1 with the reason otherwise.
"""

import hashlib
import os
import threading
import urllib.parse

import aria2p
import websocket

from daemon_common import (
    RPC,
    RPCError,
    check,
    check_file,
    common_arguments,
    keep_going,
    content_length,
    expected_content,
    run,
    wait_for_daemon,
    wait_until,
)

TIMEOUT = 120


class Notifications:
    """The notifications aria2p's listener has delivered, by event and gid."""

    def __init__(self):
        self.lock = threading.Lock()
        self.events = []

    def callback(self, event):
        def record(api, gid):
            with self.lock:
                self.events.append((event, gid))

        return record

    def of(self, gid):
        with self.lock:
            return [event for event, event_gid in self.events if event_gid == gid]

    def wait(self, event, gid, what):
        def arrived():
            seen = self.of(gid)
            check(event == "error" or "error" not in seen, f"onDownloadError for {what} (gid {gid}) instead of {event}")
            return event in seen

        wait_until(lambda: f"{event} for {what} (gid {gid}); seen: {self.of(gid)}", TIMEOUT, arrived)


def connected_listener(api, notifications):
    """Starts aria2p's threaded notification listener and returns once its WebSocket is open."""
    opened = threading.Event()
    original = websocket.create_connection

    def create_connection(*args, **kwargs):
        socket = original(*args, **kwargs)
        opened.set()
        return socket

    # aria2p opens its WebSocket inside its thread and says nothing when it has; notice it, or the first
    # notifications could be sent before anyone listens.
    websocket.create_connection = create_connection
    api.listen_to_notifications(
        threaded=True,
        timeout=1,
        on_download_start=notifications.callback("start"),
        on_download_pause=notifications.callback("pause"),
        on_download_stop=notifications.callback("stop"),
        on_download_complete=notifications.callback("complete"),
        on_download_error=notifications.callback("error"),
    )
    check(opened.wait(30), f"aria2p's WebSocket to {api.client.ws_server} did not open within 30 s")
    websocket.create_connection = original


def main():
    parser = common_arguments(__doc__)
    parser.add_argument("--rpc-url", required=True, help="the daemon's JSON-RPC URL, http://HOST:PORT/jsonrpc")
    options = parser.parse_args()
    if options.keep_going:
        keep_going()

    wait_for_daemon(options.rpc_url, options.secret)
    rpc_url = urllib.parse.urlsplit(options.rpc_url)
    check(rpc_url.path == "/jsonrpc", f"aria2p only speaks to /jsonrpc, not {rpc_url.path}")
    api = aria2p.API(aria2p.Client(host=f"http://{rpc_url.hostname}", port=rpc_url.port, secret=options.secret))
    raw = RPC(options.rpc_url, options.secret)

    size = content_length(options.file_url)
    expected = expected_content(size, options.seed)
    digest = hashlib.sha256(expected).hexdigest()

    version = api.client.get_version()
    check("version" in version and "enabledFeatures" in version, f"getVersion answered {version}")

    notifications = Notifications()
    connected_listener(api, notifications)
    try:
        exercise(api, raw, options, size, expected, digest, notifications)
    finally:
        api.stop_listening()
        raw.close()


def exercise(api, raw, options, size, expected, digest, notifications):
    def path(name):
        return os.path.join(options.dir, name)

    def receiving(download, name):
        """Waits for onDownloadStart and the first bytes: a download is paused or removed mid-flight."""
        notifications.wait("start", download.gid, name)
        wait_until(f"{name} to receive bytes", TIMEOUT, lambda: api.get_download(download.gid).completed_length > 0)

    def gid_check(download, name):
        check(
            len(download.gid) == 16 and all(c in "0123456789abcdef" for c in download.gid),
            f"{name}: gid {download.gid!r} is not 16 lowercase hex digits, as aria2's are",
        )
        check(download.status in ("active", "waiting"), f"{name}: status right after addUri is {download.status}")

    # One at a time first, so that however many downloads the daemon runs at once, each of these two is alone on
    # the throttled server and still receiving when it is paused or removed.
    paused = api.add_uris([options.file_url], options={"out": "paused.bin"})
    gid_check(paused, "paused.bin")
    receiving(paused, "paused.bin")
    check(api.pause([paused]) == [True], "api.pause did not succeed")
    notifications.wait("pause", paused.gid, "paused.bin")
    wait_until("paused.bin to report status paused", TIMEOUT, lambda: api.get_download(paused.gid).status == "paused")
    at_pause = api.get_download(paused.gid).completed_length
    check(at_pause < size, f"paused.bin completed ({at_pause} of {size}) before it could be paused; throttle harder")

    # aria2p's move_* (changePosition) on two downloads added paused, in line behind paused.bin: the answers are
    # the new places, and tellWaiting lists the new order. Removed again before anything else is added.
    first = api.add_uris([options.file_url], options={"out": "queued-1.bin", "pause": "true"})
    second = api.add_uris([options.file_url], options={"out": "queued-2.bin", "pause": "true"})

    def moved(answer, place, order, what):
        check(answer == place, f"{what} answered {answer}, expected place {place}")
        waiting = [entry["gid"] for entry in raw.call("aria2.tellWaiting", 0, 100, ["gid"])]
        expected = [download.gid for download in order]
        check(waiting == expected, f"after {what} tellWaiting is {waiting}, expected {expected}")

    moved(api.move_to_top(second), 0, [second, paused, first], "move_to_top(queued-2)")
    moved(api.move_down(second), 1, [paused, second, first], "move_down(queued-2)")
    moved(api.move_to(second, -1), 2, [paused, first, second], "move_to(queued-2, -1)")
    moved(api.move_up(second, 2), 0, [second, paused, first], "move_up(queued-2, 2)")
    moved(api.move_to_bottom(first), 2, [second, paused, first], "move_to_bottom(queued-1)")
    check(api.remove([first, second]) == [True, True], "api.remove of the two queued downloads")

    # Remove one mid-flight: onDownloadStop, status "removed", listed by tellStopped until its result is removed.
    removed = api.add_uris([options.file_url], options={"out": "removed.bin"})
    gid_check(removed, "removed.bin")
    receiving(removed, "removed.bin")
    check(api.client.remove(removed.gid) == removed.gid, "aria2.remove did not answer the gid")
    notifications.wait("stop", removed.gid, "removed.bin")
    status = wait_until(
        "removed.bin to report status removed",
        TIMEOUT,
        lambda: (s := raw.call("aria2.tellStatus", removed.gid, ["gid", "status"]))["status"] == "removed" and s,
    )
    check(set(status) == {"gid", "status"}, f"tellStatus with keys answered other keys too: {sorted(status)}")
    stopped = [entry["gid"] for entry in raw.call("aria2.tellStopped", 0, 100, ["gid"])]
    check(removed.gid in stopped, f"removed.bin ({removed.gid}) is not in tellStopped: {stopped}")

    # Three more together: plain, with a right checksum, with a wrong one.
    plain = api.add_uris([options.file_url], options={"out": "plain.bin"})
    verified = api.add_uris([options.file_url], options={"out": "verified.bin", "checksum": f"sha-256={digest}"})
    corrupt = api.add_uris([options.file_url], options={"out": "corrupt.bin", "checksum": f"sha-256={'0' * 64}"})
    downloads = {"plain": plain, "verified": verified, "paused": paused, "removed": removed, "corrupt": corrupt}
    for name in ("plain", "verified", "corrupt"):
        gid_check(downloads[name], f"{name}.bin")
    gids = [download.gid for download in downloads.values()]
    check(len(set(gids)) == len(gids), f"gids are not distinct: {gids}")

    # aria2p's get_downloads asks tellActive, tellWaiting and tellStopped one after the other, so a download that
    # starts between the first two answers is in neither (with aria2 as with braid): asked again until each is
    # listed, which a download missing for good never is.
    seen = {}

    def all_listed():
        seen.clear()
        seen.update({download.gid: download for download in api.get_downloads()})
        return all(download.gid in seen for download in downloads.values())

    wait_until(
        lambda: f"each of {sorted(downloads)} in get_downloads; missing: "
        + ", ".join(f"{name} ({download.gid})" for name, download in downloads.items() if download.gid not in seen),
        TIMEOUT,
        all_listed,
    )
    listed = seen
    for name, download in downloads.items():
        check(str(listed[download.gid].dir) == options.dir, f"{name}: dir {listed[download.gid].dir} != {options.dir}")

    # A paused download stays put while the others finish; then it resumes to completion.
    for name in ("plain", "verified"):
        notifications.wait("complete", downloads[name].gid, f"{name}.bin")
    notifications.wait("error", corrupt.gid, "corrupt.bin (wrong checksum)")
    paused_now = api.get_download(paused.gid)
    check(paused_now.status == "paused", f"paused.bin is {paused_now.status} while paused")
    check(
        paused_now.completed_length <= at_pause + 1024 * 1024,
        f"paused.bin grew from {at_pause} to {paused_now.completed_length} bytes while paused",
    )
    stats = api.get_stats()
    check(stats.num_waiting >= 1, f"get_stats counts {stats.num_waiting} waiting with paused.bin paused")
    check(stats.num_stopped >= 4, f"get_stats counts {stats.num_stopped} stopped, expected at least 4")
    check(stats.num_stopped_total >= stats.num_stopped, f"numStoppedTotal {stats.num_stopped_total} < numStopped")

    check(api.resume([paused]) == [True], "api.resume did not succeed")
    wait_until(
        "paused.bin to be active again",
        TIMEOUT,
        lambda: api.get_download(paused.gid).status in ("active", "complete"),
    )
    notifications.wait("complete", paused.gid, "paused.bin")
    check(
        notifications.of(paused.gid).count("start") >= 2,
        f"paused.bin: resuming did not send a second onDownloadStart: {notifications.of(paused.gid)}",
    )

    for name in ("plain", "verified", "paused"):
        download = api.get_download(downloads[name].gid)
        check(download.status == "complete", f"{name}: status {download.status} after onDownloadComplete")
        check(download.is_complete, f"{name}: aria2p does not see it complete")
        check(download.total_length == size, f"{name}: totalLength {download.total_length} != {size}")
        check(download.completed_length == size, f"{name}: completedLength {download.completed_length} != {size}")
        check(
            str(download.files[0].path) == path(f"{name}.bin"),
            f"{name}: files[0].path {download.files[0].path} != {path(f'{name}.bin')}",
        )
        check(download.files[0].uris[0]["uri"] == options.file_url, f"{name}: files[0].uris {download.files[0].uris}")
        check_file(path(f"{name}.bin"), expected, f"{name}.bin")

    failed = api.get_download(corrupt.gid)
    check(failed.status == "error", f"corrupt.bin: status {failed.status} with a wrong checksum")
    check(failed.error_code == "32", f"corrupt.bin: errorCode {failed.error_code!r}, aria2's is '32' (checksum)")

    # Unknown gids are errors, not empty answers.
    try:
        raw.call("aria2.tellStatus", "0123456789abcdef")
        check(False, "tellStatus of an unknown gid succeeded")
    except RPCError as error:
        check(error.code == 1, f"tellStatus of an unknown gid: code {error.code}, aria2's is 1")
        check("is not found" in error.message, f"tellStatus of an unknown gid: message {error.message!r}")

    # aria2p's remove() of finished downloads removes their results: they leave the lists.
    for name in ("plain", "removed"):
        outcome = api.remove([api.get_download(downloads[name].gid)])
        check(outcome == [True], f"api.remove of {name} answered {outcome}")
    remaining = [download.gid for download in api.get_downloads()]
    for name in ("plain", "removed"):
        check(downloads[name].gid not in remaining, f"{name} is still listed after its result was removed")
    for name in ("verified", "paused", "corrupt"):
        check(downloads[name].gid in remaining, f"{name} vanished from get_downloads: {remaining}")
    check(os.path.isfile(path("plain.bin")), "removing plain.bin's result deleted its file")


if __name__ == "__main__":
    run(main)
