import Braid

/// The order in which `braid bench` measures: every connection count once per round, rounds one after another
/// (1, 2, 4, …, 1, 2, 4, …), so that drift in a noisy machine or network falls on every count alike rather than
/// on whichever count happened to run last.
public struct BenchSchedule: Sendable, Equatable {
    /// The connection counts to measure, ascending and distinct.
    public let connectionCounts: [Int]
    /// How many times each count is measured.
    public let repeats: Int

    /// The most connections one download may use (the engine's own limit).
    public static let maximumConnections = 1024
    /// The connection counts measured when none are given: powers of two up to 16.
    public static let defaultConnectionCounts = [1, 2, 4, 8, 16]
    /// The runs per connection count when none are given.
    public static let defaultRepeats = 3
    /// The runs of the default schedule.
    public static var defaultRunCount: Int { defaultConnectionCounts.count * defaultRepeats }

    /// A schedule measuring each of `connectionCounts` `repeats` times; the counts are sorted.
    ///
    /// Throws a usage error for an empty list, a count below 1 or above ``maximumConnections``, a count listed
    /// twice, or fewer than one repeat; its `option` says which argument was refused.
    public init(connectionCounts: [Int], repeats: Int) throws(BraidError) {
        guard !connectionCounts.isEmpty else {
            throw BraidError(
                .usage, "at least one connection count is needed, like 1,2,4,8", option: .connectionCounts)
        }
        for count in connectionCounts where count < 1 || count > Self.maximumConnections {
            throw BraidError(
                .usage,
                "connection counts must be between 1 and \(Self.maximumConnections), got \(count)",
                option: .connectionCounts
            )
        }
        let sorted = connectionCounts.sorted()
        for (previous, next) in zip(sorted, sorted.dropFirst()) where previous == next {
            throw BraidError(.usage, "the connection count \(next) is listed twice", option: .connectionCounts)
        }
        guard repeats >= 1 else {
            throw BraidError(.usage, "each count must be measured at least once, got \(repeats)", option: .repeats)
        }
        self.connectionCounts = sorted
        self.repeats = repeats
    }

    /// Every run in the order it is performed.
    public var slots: [Slot] {
        var slots: [Slot] = []
        slots.reserveCapacity(connectionCounts.count * repeats)
        for round in 1...repeats {
            for connections in connectionCounts {
                slots.append(Slot(sequence: slots.count + 1, round: round, connections: connections))
            }
        }
        return slots
    }

    /// How many runs the schedule holds.
    public var runCount: Int { connectionCounts.count * repeats }
}
