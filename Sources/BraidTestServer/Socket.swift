import Glibc

/// The blocking operations on one TCP socket the server needs, with `EINTR` retried in one place and
/// `SIGPIPE` suppressed so a client hanging up mid-response is an error return, not a crash.
struct Socket: Sendable {
    /// The owned file descriptor; closed by ``close()`` only.
    let descriptor: Int32

    /// Appends what the peer sent to `buffer`; `false` when the peer closed or the socket failed.
    func receive(appendingTo buffer: inout [UInt8]) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<count])
                return true
            }
            if count < 0 && errno == EINTR {
                continue
            }
            return false
        }
    }

    /// Sends all of `bytes`; `false` when the peer went away first.
    func send(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = Glibc.send(descriptor, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
            if count < 0 && errno == EINTR {
                continue
            }
            if count <= 0 {
                return false
            }
            sent += count
        }
        return true
    }

    /// Sends all of `bytes`; `false` when the peer went away first.
    func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { send($0) }
    }

    /// Waits until the peer closes its side or the socket is shut down, or until `timeout` passes (`nil`
    /// waits forever); `true` when the connection is gone.
    ///
    /// This is how the server sleeps: a paced or stalled response wakes as soon as the client hangs up or
    /// ``TestServer/shutdown()`` shuts the socket down, instead of holding a thread for the full delay.
    /// Only hang-ups wake it, so a client that pipelines its next request does not cause a busy loop.
    func waitForHangup(timeout: Duration?) -> Bool {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        while true {
            var remaining: Int32 = -1
            if let deadline {
                let left = ContinuousClock.now.duration(to: deadline)
                guard left > .zero else { return false }
                let (seconds, attoseconds) = left.components
                remaining = Int32(
                    clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
            }
            var entry = pollfd(fd: descriptor, events: Self.pollReadHangup, revents: 0)
            let ready = poll(&entry, 1, remaining)
            if ready < 0 && errno == EINTR {
                continue
            }
            if ready != 0 {
                return true
            }
        }
    }

    /// `POLLRDHUP` from `<poll.h>`, which Swift does not import because it is guarded by `_GNU_SOURCE`.
    private static let pollReadHangup: Int16 = 0x2000

    /// Wakes every thread blocked on this socket and sends FIN; the descriptor stays valid until ``close()``.
    func shutdown() {
        _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
    }

    /// Releases the descriptor.
    func close() {
        _ = Glibc.close(descriptor)
    }
}
