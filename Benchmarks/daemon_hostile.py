#!/usr/bin/env python3
"""Does `braid daemon` stay responsive, small and quiet under hostile clients? Issue 26's load measurement.

Starts the daemon with a secret in a scratch directory and attacks it from this process:

1. --sockets (1000) silent TCP connections, opened and held without a byte sent;
2. while they are held, one 2 MiB batch of invalid calls without the token (`{}` and `aria2.addUri`), posted on a
   connection of its own, answered in full;
3. meanwhile, and until the batch is answered (at least --calls of them), a legitimate `aria2.tellActive` with the
   token, each on a new connection, timed from connect to the whole answer;
4. then every attacker closes, and the daemon's CPU time is read second by second: the verdict is on the
   --idle-seconds (3) that follow the first two (in which the attackers' closes arrive).

Prints the legitimate calls' latency (median, max), the batch's answer size and time, the daemon's peak resident
size (sampled every 10 ms, and VmHWM), its CPU share while the crowd waited and once it had gone, and how many
silent sockets the daemon had closed by the end. Targets: every legitimate call under 100 ms, peak RSS under
100 MB, CPU under 1 % of a core once the attackers stop. Exits 1 when one is missed.

--daemon-nofile N runs the daemon under `ulimit -n N` (e.g. 256), to show that running short of descriptors
neither starves clients nor spins the accept loop; add --max-clients 1000 to push it into EMFILE itself.

Usage: Benchmarks/daemon_hostile.py [--braid PATH] [--sockets 1000] [--batch-bytes 2097152] [--calls 20]
       [--idle-seconds 3] [--daemon-nofile N] [--max-clients N] [--markdown]
Build first: `swift build -c release --product braid` (the debug build is used when there is no release one).
All traffic stays on 127.0.0.1; the daemon is stopped on exit.
"""

import argparse
import http.client
import json
import os
import resource
import secrets
import select
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness.machine import built  # noqa: E402
from harness.processes import cpu_seconds, proc_status  # noqa: E402

LATENCY_TARGET_MS = 100.0
RSS_TARGET_BYTES = 100 * 1000 * 1000
IDLE_TARGET_PERCENT = 1.0


def status_kib(pid, key):
    """A numeric field of /proc/PID/status (VmRSS, VmHWM, Threads), 0 when it is not there (a process that has
    exited has no VmRSS)."""
    value = proc_status(pid, key)
    return int(value) if value.isdigit() else 0


def open_sockets(pid):
    """How many sockets the process holds."""
    count = 0
    for name in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{name}").startswith("socket:"):
                count += 1
        except OSError:
            pass
    return count


class Daemon:
    """braid daemon on a free loopback port, with a secret, optionally under `ulimit -n`."""

    def __init__(self, binary, work, secret, nofile, max_clients):
        downloads = os.path.join(work, "downloads")
        os.makedirs(downloads)
        arguments = [binary, "daemon", "--listen", "127.0.0.1:0", "--dir", downloads, "--rpc-secret", secret]
        if max_clients:
            arguments += ["--max-clients", str(max_clients)]

        def limit():
            if nofile:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        self.process = subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=limit)
        line = self.process.stdout.readline().decode()
        prefix = "braid daemon listening on "
        if not line.startswith(prefix):
            self.stop()
            raise SystemExit(f"braid daemon's first line is {line!r}: {self.process.stderr.read().decode()}")
        self.port = int(line[len(prefix):].strip().rstrip("/").rsplit(":", 1)[1])
        self.pid = self.process.pid

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class RSSSampler(threading.Thread):
    """Samples the daemon's resident size every 10 ms and keeps the largest."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid = pid
        self.peak_kib = 0
        self.running = True

    def run(self):
        while self.running:
            try:
                self.peak_kib = max(self.peak_kib, status_kib(self.pid, "VmRSS"))
            except OSError:
                return
            time.sleep(0.01)  # the sampling interval


def accept_queue(port):
    """Connections waiting in the kernel for the daemon's listening socket on `port` to accept them."""
    with open("/proc/net/tcp") as table:
        for line in table.readlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].split(":")[1], 16) == port:
                return int(fields[4].split(":")[1], 16)
    return 0


def silent_sockets(port, count, wave=64):
    """`count` connections that never send, opened in waves the kernel's backlog holds whole (a connection past a
    full backlog would be one the daemon never sees), each wave taken by the daemon before the next comes."""
    sockets, accepting = [], True
    while len(sockets) < count:
        for _ in range(min(wave, count - len(sockets))):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setblocking(False)
            try:
                sock.connect(("127.0.0.1", port))
            except BlockingIOError:
                pass
            sockets.append(sock)
        deadline = time.monotonic() + 3
        while accepting and accept_queue(port) > 0:
            # Polling the listening socket's queue until the daemon has accepted the wave; a daemon that has
            # stopped accepting (out of descriptors) is not waited for again.
            accepting = time.monotonic() < deadline
            time.sleep(0.005)
    return sockets


def crowd_state(sockets):
    """How many silent sockets are still connecting, held open by the daemon, and closed by it."""
    poller = select.poll()
    for sock in sockets:
        poller.register(sock, select.POLLOUT | select.POLLIN | select.POLLRDHUP)
    ready = dict(poller.poll(0))
    connecting = held = closed = 0
    for sock in sockets:
        events = ready.get(sock.fileno(), 0)
        if events & (select.POLLIN | select.POLLRDHUP | select.POLLHUP | select.POLLERR):
            closed += 1
        elif events & select.POLLOUT:
            held += 1
        else:
            connecting += 1
    return connecting, held, closed


def junk_batch(size):
    """A JSON-RPC batch of about `size` bytes of invalid calls: empty objects, and every 100th an addUri without the
    token."""
    call = '{"jsonrpc":"2.0","id":1,"method":"aria2.addUri","params":[["http://127.0.0.1:1/"]]},'
    parts, length = ["["], 1
    while length < size - len(call) - 4:
        piece = call if len(parts) % 100 == 0 else "{},"
        parts.append(piece)
        length += len(piece)
    parts.append("{}]")
    return "".join(parts).encode()


def post(port, body, timeout):
    """POSTs `body` to /jsonrpc on a new connection; the answer's bytes and the seconds from connect to its end."""
    start = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("POST", "/jsonrpc", body, {"Content-Type": "application/json"})
        answer = connection.getresponse().read()
    finally:
        connection.close()
    return answer, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--braid", default=built("braid", debug_too=True), help="the braid binary (default: release, else debug)"
    )
    parser.add_argument("--sockets", type=int, default=1000, help="silent connections held open")
    parser.add_argument("--batch-bytes", type=int, default=2 * 1024 * 1024 - 1024, help="the junk batch's size")
    parser.add_argument("--calls", type=int, default=20, help="legitimate calls at least")
    parser.add_argument("--idle-seconds", type=float, default=3)
    parser.add_argument("--daemon-nofile", type=int, help="the daemon's open-file limit (ulimit -n)")
    parser.add_argument("--max-clients", type=int, help="braid daemon --max-clients")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    options = parser.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = options.sockets + 256
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))

    work = tempfile.mkdtemp(prefix="braid-daemon-hostile.")
    secret = secrets.token_hex(8)
    daemon = Daemon(options.braid, work, secret, options.daemon_nofile, options.max_clients)
    sampler = RSSSampler(daemon.pid)
    sampler.start()
    crowd = []
    try:
        legit = json.dumps({"jsonrpc": "2.0", "id": "legit", "method": "aria2.tellActive",
                            "params": [f"token:{secret}"]}).encode()
        post(daemon.port, legit, 10)  # warm up: the daemon answers before the attack

        crowd = silent_sockets(daemon.port, options.sockets)
        connecting, held, closed_before = crowd_state(crowd)
        daemon_sockets = open_sockets(daemon.pid)

        batch = junk_batch(options.batch_bytes)
        batch_result = {}

        def send_batch():
            try:
                answer, seconds = post(daemon.port, batch, 60)
                batch_result.update(bytes=len(answer), seconds=seconds, head=answer[:120])
            except OSError as error:
                batch_result.update(error=str(error))

        cpu_before_attack, attack_started = cpu_seconds(daemon.pid), time.monotonic()
        sender = threading.Thread(target=send_batch)
        sender.start()
        latencies, failures = [], []
        while sender.is_alive() or len(latencies) + len(failures) < options.calls:
            try:
                answer, seconds = post(daemon.port, legit, 10)
                if b'"result"' not in answer:
                    failures.append(answer[:120])
                latencies.append(seconds * 1000)
            except OSError as error:
                failures.append(str(error))
        sender.join()
        attack_cpu = cpu_seconds(daemon.pid) - cpu_before_attack
        attack_seconds = time.monotonic() - attack_started
        _, held_after, closed_after = crowd_state(crowd)
    finally:
        for sock in crowd:
            sock.close()

    try:
        # The attackers are gone. Their closes reach the daemon over the next second or two (connections the
        # kernel completed with SYN cookies, unknown to the daemon until the client's FIN, come in then), so the
        # CPU is shown second by second, and the verdict is on the last --idle-seconds.
        per_second = []
        for _ in range(2 + int(options.idle_seconds)):
            before = cpu_seconds(daemon.pid)
            time.sleep(1)  # one second of the measurement window
            per_second.append(cpu_seconds(daemon.pid) - before)
        idle_cpu, idle_seconds = sum(per_second[2:]), float(len(per_second) - 2)
        sampler.running = False
        sampler.join()
        peak_hwm_kib = status_kib(daemon.pid, "VmHWM")
        threads = status_kib(daemon.pid, "Threads")
    finally:
        daemon.stop()
        shutil.rmtree(work, ignore_errors=True)

    peak_bytes = max(sampler.peak_kib, peak_hwm_kib) * 1024
    idle_percent = 100 * idle_cpu / idle_seconds
    worst = max(latencies) if latencies else float("inf")
    rows = [
        ("tellActive under attack", f"median {statistics.median(latencies):.1f} ms" if latencies else "-",
         f"max {worst:.1f} ms over {len(latencies)} calls, {len(failures)} failed",
         f"< {LATENCY_TARGET_MS:g} ms", "PASS" if worst < LATENCY_TARGET_MS and not failures else "FAIL"),
        ("junk batch answer", f"{batch_result.get('bytes', '-')} bytes",
         f"in {batch_result['seconds'] * 1000:.0f} ms" if "seconds" in batch_result else batch_result.get("error", ""),
         "-", "-"),
        ("peak RSS", f"{peak_bytes / 1e6:.1f} MB", f"VmHWM {peak_hwm_kib / 1000:.1f} MB, {threads} threads",
         f"< {RSS_TARGET_BYTES / 1e6:g} MB", "PASS" if peak_bytes < RSS_TARGET_BYTES else "FAIL"),
        ("CPU during the attack", f"{100 * attack_cpu / attack_seconds:.1f} % of a core",
         f"{attack_cpu * 1000:.0f} ms in {attack_seconds:.2f} s", "-", "-"),
        ("CPU once the attackers left", f"{idle_percent:.2f} % of a core",
         f"{idle_cpu * 1000:.0f} ms in the {idle_seconds:.0f} s from 2 s after they closed; each second: "
         + ", ".join(f"{cpu * 1000:.0f}" for cpu in per_second) + " ms",
         f"< {IDLE_TARGET_PERCENT:g} %",
         "PASS" if idle_percent < IDLE_TARGET_PERCENT else "FAIL"),
        ("silent sockets", f"{options.sockets} opened",
         f"before the batch: {held} open, {closed_before} closed by the daemon, {connecting} still connecting "
         f"(daemon holds {daemon_sockets} sockets); after: {held_after} open, {closed_after} closed", "-", "-"),
    ]
    limit = f"ulimit -n {options.daemon_nofile}" if options.daemon_nofile else f"ulimit -n {soft} (inherited)"
    print(f"{options.braid}: {limit}" + (f", --max-clients {options.max_clients}" if options.max_clients else ""))
    print_table(("Measure", "Value", "Detail", "Target", "Verdict"), rows, options.markdown)
    if failures:
        print(f"first failures: {failures[:3]}")
    return 0 if all(row[4] != "FAIL" for row in rows) else 1


def print_table(header, rows, markdown):
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for row in rows:
            print("| " + " | ".join(row) + " |")
        return
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    for row in (header, *rows):
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)))


if __name__ == "__main__":
    sys.exit(main())
