/// Throughput over the last few seconds, from (time, total bytes) samples.
///
/// Zero until the samples span `minimumSpan`: the first kilobytes over the first milliseconds are no rate (a 1,768-
/// byte file read in a fraction of a millisecond showed 7.7 GB/s in aria2's clients).
struct SpeedMeter: Sendable {
    /// The shortest time a rate is worked out over, in seconds.
    static let minimumSpan = 0.5

    private var samples: [(time: Double, bytes: Int64)] = []
    private let window: Double

    init(window: Double = 3) {
        self.window = window
    }

    mutating func reset(bytes: Int64, at time: Double) {
        samples = [(time, bytes)]
    }

    mutating func record(bytes: Int64, at time: Double) {
        samples.append((time, bytes))
        while samples.count > 2, let first = samples.first, time - first.time > window {
            samples.removeFirst()
        }
    }

    var bytesPerSecond: Double {
        guard let first = samples.first, let last = samples.last, last.time - first.time >= Self.minimumSpan else {
            return 0
        }
        return Double(last.bytes - first.bytes) / (last.time - first.time)
    }
}
