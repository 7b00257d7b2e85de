/// A command line that cannot be run; printed with the usage text, exit status 64 (`EX_USAGE`).
struct UsageError: Error {
    /// What is wrong, or `nil` when help was asked for.
    let message: String?

    /// A usage error saying `message`.
    init(_ message: String?) {
        self.message = message
    }
}
