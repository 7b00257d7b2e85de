#!/usr/bin/env python3
"""aria2's JSON-RPC semantics in the details clients depend on, as the real aria2c 1.36 answers them.

Raw JSON-RPC over HTTP keep-alive, and one WebSocket (websocket-client) reading notifications, against a running
daemon: the token and its refusal, error codes and messages for unknown methods and gids, decimal strings for
numbers, ``keys`` filtering, queue order of tellWaiting (a paused active download goes to the front; changePosition
and addUri's position move and place downloads in it), which
transitions notify (pausing a *waiting* download does not; pausing or removing an *active* one does), what
``remove`` leaves (an active one is listed as ``removed`` with errorCode 31; a waiting or paused one is forgotten),
errorCode 3 for a 404, removeDownloadResult, purgeDownloadResult, system.multicall and system.listMethods.

The file server must be throttled so downloads outlast the script's steps. The script sets
max-concurrent-downloads to 1 with changeGlobalOption.

    rpc_semantics.py --rpc-url http://127.0.0.1:PORT/jsonrpc --secret S --file-url http://127.0.0.1:P2/file --dir DIR

Exits 0 when every check holds, 1 with the reason otherwise.
"""

import base64
import json
import os
import threading

import websocket

from daemon_common import RPC, RPCError, check, common_arguments, keep_going, run, wait_for_daemon, wait_until

TIMEOUT = 60
UNKNOWN = "0123456789abcdef"
METHODS = [
    "aria2.addUri",
    "aria2.remove",
    "aria2.forceRemove",
    "aria2.pause",
    "aria2.pauseAll",
    "aria2.unpause",
    "aria2.unpauseAll",
    "aria2.changePosition",
    "aria2.tellStatus",
    "aria2.tellActive",
    "aria2.tellWaiting",
    "aria2.tellStopped",
    "aria2.getGlobalStat",
    "aria2.changeOption",
    "aria2.changeGlobalOption",
    "aria2.getVersion",
    "aria2.saveSession",
    "aria2.removeDownloadResult",
    "aria2.purgeDownloadResult",
    "system.multicall",
    "system.listMethods",
]


class Listener:
    """Every notification one WebSocket client receives, in order."""

    def __init__(self, url):
        self.socket = websocket.create_connection(url, timeout=30)
        self.lock = threading.Lock()
        self.received = []
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        while True:
            try:
                message = json.loads(self.socket.recv())
            except (websocket.WebSocketException, OSError, ValueError):
                return
            with self.lock:
                self.received.append(message)

    def events(self):
        with self.lock:
            return [(m["method"], m["params"][0]["gid"]) for m in self.received]

    def wait(self, method, gid):
        wait_until(
            lambda: f"{method} for {gid}; received {self.events()}", TIMEOUT, lambda: (method, gid) in self.events()
        )

    def close(self):
        self.socket.close()
        self.thread.join(10)


def refused(call, code, message, what):
    """Fails unless ``call()`` raises RPCError with ``code`` and a message containing ``message``."""
    try:
        answer = call()
    except RPCError as error:
        check(error.code == code, f"{what}: error code {error.code} ({error.message!r}), aria2's is {code}")
        check(message in error.message, f"{what}: message {error.message!r}, aria2's contains {message!r}")
        return
    check(False, f"{what}: answered {answer!r}, aria2 refuses it with code {code}")


def main():
    parser = common_arguments(__doc__)
    parser.add_argument("--rpc-url", required=True)
    options = parser.parse_args()
    if options.keep_going:
        keep_going()
    wait_for_daemon(options.rpc_url, options.secret)
    rpc = RPC(options.rpc_url, options.secret)
    listener = Listener(options.rpc_url.replace("http://", "ws://", 1))
    try:
        exercise(rpc, listener, options)
    finally:
        listener.close()
        rpc.close()


def exercise(rpc, listener, options):
    url = options.file_url
    keys = ["gid", "status", "totalLength", "completedLength", "errorCode"]

    def status(gid, fields=keys):
        return rpc.call("aria2.tellStatus", gid, fields)

    def gids(method, *params):
        return [entry["gid"] for entry in rpc.call(method, *params, ["gid"])]

    # The token, methods and gids.
    for token, what in ((f"token:{options.secret}x", "a wrong token"), (None, "no token")):
        params = [token] if token else []
        answer = rpc.raw({"jsonrpc": "2.0", "method": "aria2.getVersion", "params": params})
        check(answer.get("error", {}).get("code") == 1, f"{what}: answered {answer}, aria2 answers code 1")
        check(answer["error"].get("message") == "Unauthorized", f"{what}: message {answer['error']}")
    refused(lambda: rpc.call("aria2.nope"), 1, "No such method: aria2.nope", "an unknown method")
    for method in ("aria2.tellStatus", "aria2.pause", "aria2.unpause", "aria2.remove", "aria2.removeDownloadResult"):
        refused(lambda m=method: rpc.call(m, UNKNOWN), 1, f"GID {UNKNOWN} is not found", f"{method} of an unknown gid")
    version = rpc.call("aria2.getVersion")
    check(isinstance(version.get("version"), str), f"getVersion: no version string in {version}")
    check(isinstance(version.get("enabledFeatures"), list), f"getVersion: no enabledFeatures list in {version}")
    listed = rpc.call("system.listMethods")
    check(all(method in listed for method in METHODS), f"listMethods lacks {set(METHODS) - set(listed)}")
    multicall = rpc.call(
        "system.multicall",
        [
            {"methodName": "aria2.getVersion", "params": [f"token:{options.secret}"]},
            {"methodName": "aria2.tellStatus", "params": [f"token:{options.secret}", UNKNOWN]},
        ],
    )
    check(
        len(multicall) == 2 and multicall[0] == [version] and multicall[1].get("code") == 1,
        f"multicall: aria2 answers [[result], {{code, message}}]; got {multicall}",
    )

    # One download at a time: A runs, B waits, C is added paused.
    check(rpc.call("aria2.changeGlobalOption", {"max-concurrent-downloads": "1"}) == "OK", "changeGlobalOption")
    a = rpc.call("aria2.addUri", [url], {"out": "a.bin"})
    wait_until(f"A ({a}) to be active", TIMEOUT, lambda: status(a)["status"] == "active")
    b = rpc.call("aria2.addUri", [url], {"out": "b.bin"})
    c = rpc.call("aria2.addUri", [url], {"out": "c.bin", "pause": "true"})
    for gid in (a, b, c):
        check(len(gid) == 16 and all(ch in "0123456789abcdef" for ch in gid), f"gid {gid!r}: 16 lowercase hex")
    check(gids("aria2.tellActive") == [a], f"tellActive: {gids('aria2.tellActive')}, expected [{a}]")
    waiting = [(s["gid"], s["status"]) for s in rpc.call("aria2.tellWaiting", 0, 100, ["gid", "status"])]
    check(waiting == [(b, "waiting"), (c, "paused")], f"tellWaiting: {waiting}, expected B waiting then C paused")
    stat = rpc.call("aria2.getGlobalStat")
    check(stat["numActive"] == "1" and stat["numWaiting"] == "2", f"getGlobalStat counts paused as waiting: {stat}")
    for name in ("downloadSpeed", "uploadSpeed", "numStopped", "numStoppedTotal"):
        check(isinstance(stat.get(name), str) and stat[name].isdigit(), f"getGlobalStat {name}: {stat.get(name)!r}")

    # A gid may be shortened to a prefix no other has, in either case; what is not hex is no gid.
    check(status(a[:8], ["gid"]) == {"gid": a}, f"tellStatus of {a[:8]!r} (a prefix of A's gid) is A")
    check(status(a[:8].upper(), ["gid"]) == {"gid": a}, "a prefix in capitals is A's too")
    refused(lambda: status("zz"), 1, "Invalid GID zz", "tellStatus of a gid that is not hex")
    refused(lambda: status(a + "0"), 1, f"Invalid GID {a}0", "tellStatus of 17 hex digits")

    # keys: only those asked for, unknown names ignored; every number a decimal string.
    filtered = rpc.call("aria2.tellStatus", a, ["gid", "totalLength", "noSuchKey"])
    check(sorted(filtered) == ["gid", "totalLength"], f"tellStatus with keys answered {sorted(filtered)}")
    full = rpc.call("aria2.tellStatus", a)
    for name in (
        "totalLength",
        "completedLength",
        "uploadLength",
        "downloadSpeed",
        "uploadSpeed",
        "connections",
        "numPieces",
        "pieceLength",
    ):
        check(isinstance(full.get(name), str) and full[name].isdigit(), f"tellStatus {name}: {full.get(name)!r}")
    check(full["dir"] == options.dir, f"tellStatus dir {full['dir']!r}, expected {options.dir!r}")
    file = full["files"][0]
    check(file["index"] == "1" and file["selected"] == "true", f"files[0] index/selected: {file}")
    check(file["uris"][0]["uri"] == url, f"files[0].uris: {file['uris']}")
    check("errorCode" not in full, f"an active download has no errorCode in aria2: {full.get('errorCode')!r}")

    refused(
        lambda: rpc.call("aria2.changePosition", a, 0, "POS_SET"),
        1,
        f"GID#{a} not found in the waiting queue.",
        "changePosition of the active download",
    )

    # Pausing a waiting download holds it silently; pausing the active one notifies and puts it first in line.
    check(rpc.call("aria2.pause", b) == b, "pause of a waiting download answers its gid")
    check(status(b)["status"] == "paused", "a paused waiting download reports paused")
    refused(lambda: rpc.call("aria2.pause", b), 1, f"GID#{b} cannot be paused now", "pausing a paused download")
    refused(lambda: rpc.call("aria2.unpause", a), 1, f"GID#{a} cannot be unpaused now", "unpausing an active one")
    wait_until(f"A ({a}) to receive bytes", TIMEOUT, lambda: int(status(a)["completedLength"]) > 0)
    check(rpc.call("aria2.pause", a) == a, "pause of the active download answers its gid")
    listener.wait("aria2.onDownloadPause", a)
    check(
        ("aria2.onDownloadPause", b) not in listener.events(),
        f"aria2 sends no onDownloadPause for a download paused while waiting: {listener.events()}",
    )
    wait_until("A to be paused", TIMEOUT, lambda: status(a)["status"] == "paused")
    check(
        gids("aria2.tellWaiting", 0, 100) == [a, b, c],
        f"tellWaiting after pausing A: {gids('aria2.tellWaiting', 0, 100)}",
    )
    check(gids("aria2.tellWaiting", 1, 1) == [b], "tellWaiting(offset 1, num 1) is the second in line")

    # changePosition moves a download within the waiting queue, paused ones included, and stops at either end; it
    # answers the new place. addUri's position inserts there. All are paused: nothing starts meanwhile.
    def moved(gid, offset, how, place, order):
        check(rpc.call("aria2.changePosition", gid, offset, how) == place, f"changePosition({offset}, {how}) place")
        check(gids("aria2.tellWaiting", 0, 100) == order, f"after changePosition({offset}, {how}): {order} expected")

    moved(c, 0, "POS_SET", 0, [c, a, b])
    moved(c, 1, "POS_CUR", 1, [a, c, b])
    moved(a, -1, "POS_END", 1, [c, a, b])
    moved(b, -100, "POS_CUR", 0, [b, c, a])
    moved(b, 100, "POS_SET", 2, [c, a, b])
    moved(a, 0, "POS_END", 2, [c, b, a])
    d = rpc.call("aria2.addUri", [url], {"out": "d.bin", "pause": "true"}, 1)
    check(gids("aria2.tellWaiting", 0, 100) == [c, d, b, a], "addUri at position 1 is second in line")
    refused(lambda: rpc.call("aria2.changePosition", d, 0, "POS_TOP"), 1, "Illegal argument.", "an unknown how")
    refused(
        lambda: rpc.call("aria2.changePosition", UNKNOWN, 0, "POS_SET"),
        1,
        f"GID {UNKNOWN} is not found",
        "changePosition of an unknown gid",
    )
    refused(
        lambda: rpc.call("aria2.addUri", [url], {"out": "e.bin"}, -1),
        1,
        "Position must be greater than or equal to 0.",
        "addUri at a negative position",
    )
    check(rpc.call("aria2.remove", d) == d, "remove of the paused D")
    moved(a, 0, "POS_SET", 0, [a, c, b])
    moved(b, 1, "POS_SET", 1, [a, b, c])

    # addMetalink takes the document in base64 and answers a list of gids, one per file, saved under its name.
    document = (
        '<?xml version="1.0" encoding="UTF-8"?><metalink xmlns="urn:ietf:params:xml:ns:metalink">'
        f'<file name="sub/m.bin"><url>{url}</url></file></metalink>'
    )
    listed = rpc.call("aria2.addMetalink", base64.b64encode(document.encode()).decode(), {"pause": "true"})
    check(isinstance(listed, list) and len(listed) == 1, f"addMetalink answered {listed!r}, not one gid in a list")
    m = listed[0]
    check(len(m) == 16 and all(ch in "0123456789abcdef" for ch in m), f"addMetalink's gid {m!r}: 16 lowercase hex")
    metalinked = rpc.call("aria2.tellStatus", m, ["status", "files"])
    check(metalinked["status"] == "paused", f"a Metalink's download added paused is {metalinked['status']}")
    path = metalinked["files"][0]["path"]
    check(path == os.path.join(options.dir, "sub", "m.bin"), f"a Metalink's file is saved at {path!r}")
    check(gids("aria2.tellWaiting", 0, 100) == [a, b, c, m], "a Metalink's download waits last in line")
    check(rpc.call("aria2.remove", m) == m, "remove of the paused Metalink download")
    refused(lambda: rpc.call("aria2.addMetalink", "bm90IGEgbWV0YWxpbms="), 1, "", "addMetalink of what is not one")

    # Removing a paused (or waiting) download forgets it: no onDownloadStop, not listed, not found.
    check(rpc.call("aria2.remove", c) == c, "remove of a paused download answers its gid")
    refused(lambda: status(c), 1, f"GID {c} is not found", "tellStatus of a removed paused download (aria2 forgets it)")
    check(c not in gids("aria2.tellStopped", 0, 100), "a removed paused download is not in tellStopped")

    # Unpausing A starts it again (onDownloadStart); removing it while active notifies and lists it as removed, 31.
    check(rpc.call("aria2.unpause", a) == a, "unpause answers the gid")
    wait_until("A to be active again", TIMEOUT, lambda: status(a)["status"] == "active")
    wait_until(
        "a second onDownloadStart for A", TIMEOUT, lambda: listener.events().count(("aria2.onDownloadStart", a)) >= 2
    )
    refused(
        lambda: rpc.call("aria2.removeDownloadResult", a),
        1,
        f"Could not remove download result of GID#{a}",
        "removeDownloadResult of an active download",
    )
    check(rpc.call("aria2.remove", a) == a, "remove of the active download answers its gid")
    listener.wait("aria2.onDownloadStop", a)
    removed = wait_until("A to be removed", TIMEOUT, lambda: (s := status(a))["status"] == "removed" and s)
    check(removed["errorCode"] == "31", f"a removed download's errorCode is {removed['errorCode']!r}, aria2's is '31'")
    check(gids("aria2.tellStopped", 0, 100) == [a], f"tellStopped: {gids('aria2.tellStopped', 0, 100)}")
    refused(lambda: rpc.call("aria2.remove", a), 1, f"Active Download not found for GID#{a}", "removing it again")
    check(("aria2.onDownloadStop", c) not in listener.events(), "aria2 sends no onDownloadStop for a paused one")

    # A 404 ends in error with code 3; options change per download; results are removed one by one or all.
    missing = rpc.call("aria2.addUri", [url.rsplit("/", 1)[0] + "/no-such-file"], {"out": "missing.bin"})
    check(rpc.call("aria2.changeOption", b, {"max-download-limit": "10K"}) == "OK", "changeOption answers OK")
    refused(
        lambda: rpc.call("aria2.changeOption", b, {"max-download-limit": "lots"}),
        1,
        "max-download-limit",
        "a malformed max-download-limit",
    )
    # Where braid differs on purpose: aria2 answers OK to an out it may never apply; braid changes only
    # max-download-limit and refuses the rest, changing nothing, so that a client is not told a rename took.
    if options.daemon == "braid":
        refused(
            lambda: rpc.call("aria2.changeOption", b, {"out": "renamed.bin", "max-download-limit": "20K"}),
            1,
            "Cannot change option out",
            "an option braid cannot change, with nothing changed",
        )
    check(rpc.call("aria2.unpause", b) == b, "unpause of B")
    check(rpc.call("aria2.changeGlobalOption", {"max-concurrent-downloads": "2"}) == "OK", "changeGlobalOption")
    listener.wait("aria2.onDownloadError", missing)
    check(status(missing)["errorCode"] == "3", f"a 404's errorCode is {status(missing)['errorCode']!r}, aria2's is '3'")
    check(gids("aria2.tellStopped", 0, 100) == [a, missing], "tellStopped lists in the order downloads stopped")
    check(gids("aria2.tellStopped", -1, 1) == [missing], "tellStopped(offset -1) counts from the newest")
    check(rpc.call("aria2.removeDownloadResult", a) == "OK", "removeDownloadResult answers OK")
    refused(lambda: status(a), 1, f"GID {a} is not found", "tellStatus after removeDownloadResult")
    check(rpc.call("aria2.purgeDownloadResult") == "OK", "purgeDownloadResult answers OK")
    check(gids("aria2.tellStopped", 0, 100) == [], "tellStopped after purgeDownloadResult")
    stat = rpc.call("aria2.getGlobalStat")
    check(stat["numStopped"] == "0" and stat["numStoppedTotal"] == "2", f"getGlobalStat after purge: {stat}")
    check(rpc.call("aria2.saveSession") == "OK", "saveSession answers OK")
    check(rpc.call("aria2.forceRemove", b) == b, "forceRemove answers the gid")

    shapes = [m for m in listener.received if set(m) != {"jsonrpc", "method", "params"} or m["jsonrpc"] != "2.0"]
    check(not shapes, f"notifications are {{jsonrpc: 2.0, method, params: [{{gid}}]}} without id: {shapes}")


if __name__ == "__main__":
    run(main)
