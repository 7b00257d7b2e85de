extension Duration {
    /// The duration in seconds, for output.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
