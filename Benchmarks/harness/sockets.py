"""How many TCP connections a local server has open, sampled every few milliseconds while a command runs.

The kernel is asked directly (netlink `sock_diag`, what `ss` uses) for the IPv4 TCP sockets whose local port is the
server's, that is the server's side of each connection, in the states of an open connection: established, or closed
by the server while the client has not closed yet (FIN-WAIT-1 and 2: a server that sent its last response into the
socket buffer and closed, the client still reading). One question costs a few hundred microseconds of CPU, where
reading `/proc/net/tcp` formats every socket of the machine (milliseconds with a few thousand in TIME-WAIT) and
running `ss` costs a process. A connection counts from the server's accept to the client's close, requests or not;
one shorter than the sampling interval (a refusal answered and closed at once) may fall between two samples.
"""

import socket
import struct
import threading
import time

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
NLMSG_DONE, NLMSG_ERROR = 3, 2
TCP_ESTABLISHED, TCP_FIN_WAIT1, TCP_FIN_WAIT2 = 1, 4, 5
OPEN_STATES = (1 << TCP_ESTABLISHED) | (1 << TCP_FIN_WAIT1) | (1 << TCP_FIN_WAIT2)
HEADER = struct.Struct("=IHHII")  # nlmsghdr: length, type, flags, sequence, port id
REQUEST = struct.Struct("=BBBxI")  # inet_diag_req_v2: family, protocol, extensions, pad, states; then the socket id
SOCKET_ID = struct.Struct(">HH16s16sIQ")  # inet_diag_sockid: sport, dport (big-endian), src, dst, interface, cookie
MESSAGE_OFFSET = HEADER.size + 4  # inet_diag_msg: family, state, timer, retrans, then the socket id


def open_on(port, channel=None):
    """How many IPv4 TCP sockets with local port `port` are open connections right now (see above)."""
    own = channel is None
    channel = channel or socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_SOCK_DIAG)
    try:
        body = REQUEST.pack(socket.AF_INET, socket.IPPROTO_TCP, 0, OPEN_STATES) + bytes(SOCKET_ID.size)
        channel.send(HEADER.pack(HEADER.size + len(body), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, 1, 0)
                     + body)
        count = 0
        while True:
            data = channel.recv(65536)
            offset = 0
            while offset + HEADER.size <= len(data):
                length, kind, _, _, _ = HEADER.unpack_from(data, offset)
                if kind == NLMSG_DONE:
                    return count
                if kind == NLMSG_ERROR:
                    raise OSError("sock_diag answered with an error")
                if kind == SOCK_DIAG_BY_FAMILY and SOCKET_ID.unpack_from(data, offset + MESSAGE_OFFSET)[0] == port:
                    count += 1
                offset += (length + 3) & ~3
                if length == 0:
                    break
    finally:
        if own:
            channel.close()


class ConnectionSampler:
    """Samples `open_on(port)` every `interval` seconds in a thread, from `start()` to `stop()`.

    `samples` are (time.time(), count); `peak()` and `seconds_above(limit)` read them, each sample standing for the
    time until the next.
    """

    def __init__(self, port, interval=0.005):
        self.port = port
        self.interval = interval
        self.samples = []
        self.stopping = threading.Event()
        self.thread = None

    def start(self):
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()
        return self

    def run(self):
        with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_SOCK_DIAG) as channel:
            while not self.stopping.is_set():
                self.samples.append((time.time(), open_on(self.port, channel)))
                self.stopping.wait(self.interval)

    def stop(self):
        self.stopping.set()
        if self.thread:
            self.thread.join()
        return self

    def peak(self):
        return max((count for _, count in self.samples), default=0)

    def seconds_above(self, limit):
        return sum(later[0] - earlier[0] for earlier, later in zip(self.samples, self.samples[1:])
                   if earlier[1] > limit)


def available():
    """Whether this kernel answers sock_diag questions (a container may forbid netlink)."""
    try:
        open_on(0)
        return True
    except OSError:
        return False
