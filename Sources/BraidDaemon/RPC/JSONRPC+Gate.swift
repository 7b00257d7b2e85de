extension JSONRPC {
    /// The one place the daemon's secret is checked: which methods need it, and whether a call's token is it.
    ///
    /// With a secret, every `aria2.` method must carry `token:SECRET` as its first parameter; `system.` methods need
    /// none (`system.multicall`'s calls carry their own). The request reader asks the gate as soon as it has a call's
    /// method and first parameter, so a refused call costs no reading of its other parameters, no dispatch, and an
    /// answer of a few dozen bytes.
    struct Gate: Sendable {
        /// What a token parameter starts with.
        static let tokenPrefix = "token:"

        /// The secret as bytes; nil when the daemon has none and every call passes.
        let secret: [UInt8]?

        init(secret: String?) {
            self.secret = secret.map { Array($0.utf8) }
        }

        /// Whether a call of `method` must show the secret.
        func needsToken(_ method: String) -> Bool { !method.hasPrefix("system.") }

        /// Whether a call that carries `token` (nil: none) may go on.
        func admits(token: [UInt8]?) -> Bool {
            guard secret != nil else { return true }
            return token.map(isSecret) ?? false
        }

        /// Whether `token` is the secret; false when there is none.
        func isSecret(_ token: [UInt8]) -> Bool {
            guard let secret else { return false }
            return Self.constantTimeEqual(token, secret)
        }

        /// Compares without stopping at the first difference, so the time taken says nothing of how much of a guess
        /// was right. Different lengths are unequal after the same amount of work.
        static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
            var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
            for index in 0..<max(a.count, b.count) {
                let x = index < a.count ? a[index] : 0
                let y = index < b.count ? b[index] : 0
                difference |= x ^ y
            }
            return difference == 0 && a.count == b.count
        }
    }
}
