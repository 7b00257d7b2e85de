extension BenchReport {
    /// The CSV header line (`braid bench --csv`), naming the ``BenchRun`` fields in the order of ``csvRow(_:)``.
    public static let csvHeader =
        "sequence,round,connections,bytes,seconds,bytesPerSecond,timeToFirstByte,cpuSeconds,retries,fetchedBytes"

    /// One CSV line for `run`; an unknown time to first byte is an empty field. Numbers are plain, in bytes and
    /// seconds, so a spreadsheet or `pandas` reads them as they are.
    public static func csvRow(_ run: BenchRun) -> String {
        [
            "\(run.sequence)", "\(run.round)", "\(run.connections)", "\(run.bytes)", "\(run.seconds)",
            "\(run.bytesPerSecond)", run.timeToFirstByte.map { "\($0)" } ?? "", "\(run.cpuSeconds)",
            "\(run.retries)", "\(run.fetchedBytes)",
        ].joined(separator: ",")
    }

    /// The header and one line per run, in the order performed, each line ending in a newline.
    public func csv() -> String {
        ([Self.csvHeader] + runs.map(Self.csvRow)).map { $0 + "\n" }.joined()
    }
}
