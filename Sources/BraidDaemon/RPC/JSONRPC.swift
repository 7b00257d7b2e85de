/// JSON-RPC 2.0 framing as aria2 speaks it: a request object or a batch of them in, a response or a batch out.
enum JSONRPC {
    /// A call, as read from one request object.
    struct Call: Sendable {
        var id: JSON
        var method: String
        var params: [JSON]
    }

    /// An error to answer with: `code` and `message`, as aria2 sends them.
    struct Failure: Error, Equatable, Sendable {
        var code: Int
        var message: String

        static let parseError = Failure(code: -32700, message: "Parse error.")
        static let invalidRequest = Failure(code: -32600, message: "Invalid Request.")

        /// aria2 reports every failure of a method, from an unknown gid to a refused option, with code 1.
        static func method(_ message: String) -> Failure { Failure(code: 1, message: message) }
    }

    /// Reads one request object. aria2 requires an `id` (a request without one is invalid, not a notification)
    /// and `params` as an array when present.
    static func call(from value: JSON) -> Result<Call, Failure> {
        guard case .object = value, let id = value["id"], let method = value["method"]?.stringValue else {
            return .failure(.invalidRequest)
        }
        switch value["params"] {
        case nil, .null?: return .success(Call(id: id, method: method, params: []))
        case let .array(params)?: return .success(Call(id: id, method: method, params: params))
        default: return .failure(.invalidRequest)
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
