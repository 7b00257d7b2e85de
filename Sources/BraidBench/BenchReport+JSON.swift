#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension BenchReport {
    /// The report as one pretty-printed JSON document with sorted keys (`braid bench --json`).
    ///
    /// At the top level: `results` (one object per connection count with `connections`,
    /// `medianBytesPerSecond`, `minBytesPerSecond`, `maxBytesPerSecond`, `speedUp` and its `runs`) and
    /// `recommendedConnections`, with the `recommendation`'s reason and the benchmark's parameters.
    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Throughputs are finite by construction; strings keep the encoder total even if one were not.
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        do {
            return String(decoding: try encoder.encode(self), as: UTF8.self)
        } catch {
            preconditionFailure("Invalid state: a bench report could not be encoded: \(error)")
        }
    }

    /// Reads a report back from the document ``json()`` writes.
    public init(json: String) throws {
        self = try JSONDecoder().decode(BenchReport.self, from: Data(json.utf8))
    }
}
