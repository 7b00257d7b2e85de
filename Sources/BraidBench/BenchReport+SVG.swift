extension BenchReport {
    /// The report as a standalone SVG chart (`braid bench --svg FILE`); see ``BenchChart``.
    public func svg() -> String {
        BenchChart(report: self).svg()
    }
}
