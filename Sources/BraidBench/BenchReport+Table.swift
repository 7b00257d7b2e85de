extension BenchReport {
    /// The results as an aligned plain-text table, one row per connection count, the recommended one marked
    /// unless `marksRecommendation` is false.
    public func table(marksRecommendation: Bool = true) -> String {
        var rows: [[String]] = [["connections", "runs", "median", "min", "max", "speed-up", "TTFB", "CPU", "retries"]]
        for result in results {
            rows.append([
                "\(result.connections)",
                "\(result.runs.count)",
                BenchFormat.rate(result.medianBytesPerSecond),
                BenchFormat.rate(result.minBytesPerSecond),
                BenchFormat.rate(result.maxBytesPerSecond),
                BenchFormat.speedUp(result.speedUp),
                result.medianTimeToFirstByte.map(BenchFormat.seconds) ?? "-",
                BenchFormat.seconds(result.medianCPUSeconds),
                "\(result.retries)",
            ])
        }
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        var lines: [String] = []
        for (index, row) in rows.enumerated() {
            var line = zip(row, widths).map { cell, width in
                String(repeating: " ", count: width - cell.count) + cell
            }.joined(separator: "  ")
            if marksRecommendation, index > 0, results[index - 1].connections == recommendedConnections {
                line += "  ← recommended"
            }
            lines.append(line)
        }
        return lines.map { $0 + "\n" }.joined()
    }

    /// One line describing what was measured: `URL: 256.0 MiB per run, 3 runs per count, written to a sparse
    /// temporary file; speed-up over 1 connection; medians of each count's runs`.
    public func caption() -> String {
        let size = byteLimit.map { "the first \(BenchFormat.bytes($0))" } ?? "the whole resource"
        let sink = discardsData ? "received and discarded" : "written to a sparse temporary file"
        let baseline = baselineConnections.map { "; speed-up over \(BenchFormat.connections($0))" } ?? ""
        let rounds = repeats == 1 ? "1 run per count" : "\(repeats) runs per count, interleaved"
        return "\(url): \(size) per run, \(sink), \(rounds)\(baseline)"
    }
}
