import NIOCore
import Synchronization

/// The connection cap: how many connections the server holds at once, and which one gives way when a new one comes.
///
/// A connection is either *waiting* (for its request, or still sending it; a WebSocket that has not shown the
/// secret) or *served* (its request is being answered; a trusted WebSocket). At the cap, a newcomer takes the
/// place of the connection that has waited longest, so a crowd of silent sockets can delay a client by no more than
/// an accept; when every connection is being served, the newcomer is closed instead. Decided under the lock, the
/// closing done after it.
final class ConnectionLimiter: Sendable {
    private struct Entry {
        let channel: any Channel
        /// Since when the connection has waited; nil while it is served.
        var waitingSince: NIODeadline?
    }

    /// The most connections held at once.
    let maximum: Int
    private let entries = Mutex<[ObjectIdentifier: Entry]>([:])

    init(maximum: Int) {
        self.maximum = max(1, maximum)
    }

    /// How many connections are held now.
    var count: Int { entries.withLock { $0.count } }

    /// Takes `channel` in as waiting, making room at the cap by closing the connection that has waited longest;
    /// false when the cap is reached and none waits (the caller closes `channel`). The entry goes when the channel
    /// closes.
    func admit(_ channel: any Channel) -> Bool {
        let (admitted, evicted) = entries.withLock { entries -> (Bool, (any Channel)?) in
            var evicted: (any Channel)?
            if entries.count >= maximum {
                guard let oldest = Self.longestWaiting(in: entries) else { return (false, nil) }
                evicted = entries.removeValue(forKey: oldest)?.channel
            }
            entries[Self.key(channel)] = Entry(channel: channel, waitingSince: .now())
            return (true, evicted)
        }
        evicted?.close(promise: nil)
        guard admitted else { return false }
        channel.closeFuture.whenComplete { [weak self] _ in self?.remove(channel) }
        return true
    }

    /// Closes the connection that has waited longest, to free its descriptor; false when none waits.
    func closeLongestWaiting() -> Bool {
        let evicted = entries.withLock { entries -> (any Channel)? in
            Self.longestWaiting(in: entries).flatMap { entries.removeValue(forKey: $0)?.channel }
        }
        evicted?.close(promise: nil)
        return evicted != nil
    }

    /// Records that `channel` waits from now on: for its next request, or for a WebSocket's secret.
    func markWaiting(_ channel: any Channel) {
        entries.withLock { entries in
            guard entries[Self.key(channel)]?.waitingSince == nil else { return }
            entries[Self.key(channel)]?.waitingSince = .now()
        }
    }

    /// Records that `channel` is being served, and may not be closed for a newcomer.
    func markServed(_ channel: any Channel) {
        entries.withLock { $0[Self.key(channel)]?.waitingSince = nil }
    }

    private func remove(_ channel: any Channel) {
        _ = entries.withLock { $0.removeValue(forKey: Self.key(channel)) }
    }

    private static func key(_ channel: any Channel) -> ObjectIdentifier { ObjectIdentifier(channel) }

    private static func longestWaiting(in entries: [ObjectIdentifier: Entry]) -> ObjectIdentifier? {
        var oldest: (ObjectIdentifier, NIODeadline)?
        for (key, entry) in entries {
            guard let since = entry.waitingSince else { continue }
            if oldest.map({ since < $0.1 }) ?? true { oldest = (key, since) }
        }
        return oldest?.0
    }
}
