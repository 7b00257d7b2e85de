import BraidJSON

/// JSON-RPC 2.0 framing as aria2 speaks it: a request object or a batch of them in, a response or a batch out.
///
/// A request is read by `read(_:gate:limits:)` (`JSONRPC+Request.swift`), which holds every call to the `Gate`
/// before anything else of the call is read, and to the `Limits` before anything is answered.
enum JSONRPC {
    /// What one request may cost: how many calls it holds and how large its answer may grow.
    struct Limits: Sendable {
        /// Calls in one batch; aria2's clients send a few dozen at most. A larger batch is answered with one error.
        var maximumBatchCalls = 1000
        /// Calls in one `system.multicall`; a larger one is answered with one error.
        var maximumMulticallCalls = 1000
        /// The largest answer, in bytes of JSON; a call (or batch) whose answer would be larger is answered with one
        /// error instead. 16 MiB holds `tellStopped` of tens of thousands of downloads.
        var maximumResponseBytes = 16 << 20
    }

    /// An error to answer with: `code` and `message`, as aria2 sends them.
    struct Failure: Error, Equatable, Sendable {
        var code: Int
        var message: String

        static let parseError = Failure(code: -32700, message: "Parse error.")
        static let invalidRequest = Failure(code: -32600, message: "Invalid Request.")
        /// A call without the daemon's secret, or with another token.
        static let unauthorized = method("Unauthorized")

        /// aria2 reports every failure of a method, from an unknown gid to a refused option, with code 1.
        static func method(_ message: String) -> Failure { Failure(code: 1, message: message) }

        /// A batch of more than `limit` calls.
        static func tooManyCalls(limit: Int) -> Failure {
            Failure(code: -32600, message: "Invalid Request: a batch holds at most \(limit) calls.")
        }

        /// A `system.multicall` of more than `limit` calls.
        static func tooManyMulticalls(limit: Int) -> Failure {
            method("Bad parameter: system.multicall takes at most \(limit) calls")
        }

        /// An answer that would pass the size cap.
        static func responseTooLarge(limit: Int) -> Failure {
            method("The answer would be larger than \(limit) bytes; ask for fewer downloads or fewer keys")
        }
    }

    static func response(id: JSON, result: JSON) -> JSON {
        .object([("id", id), ("jsonrpc", .string("2.0")), ("result", result)])
    }

    static func response(id: JSON, failure: Failure) -> JSON {
        .object([
            ("id", id), ("jsonrpc", .string("2.0")),
            ("error", .object([("code", .integer(Int64(failure.code))), ("message", .string(failure.message))])),
        ])
    }
}
