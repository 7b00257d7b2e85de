extension Duration {
    /// The duration in seconds, as a test compares or prints it.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
