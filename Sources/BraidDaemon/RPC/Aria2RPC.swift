import Braid

/// aria2's JSON-RPC interface over the daemon's service: the methods aria2's clients (aria2p, AriaNg, Motrix)
/// call, with aria2's parameters, field names, numbers written as strings, and error messages, so that those
/// clients work unchanged. Braid's own figures are under a `braid` key of each status.
///
/// With a secret, every `aria2.` method must carry `token:SECRET` as its first parameter; it is compared in
/// constant time. `system.` methods need none (`system.multicall`'s calls carry their own).
public final class Aria2RPC: RPCEndpoint {
    let service: DaemonService
    let directory: DownloadDirectory
    private let secret: [UInt8]?
    /// Called once when a client asks the daemon to shut down (`aria2.shutdown`).
    private let shutdown: @Sendable () -> Void
    /// aria2's `getSessionInfo` id: random for each run of the daemon.
    let sessionID: String

    public init(
        service: DaemonService,
        directory: DownloadDirectory,
        secret: String?,
        shutdown: @escaping @Sendable () -> Void = {}
    ) {
        self.service = service
        self.directory = directory
        self.secret = secret.map { Array($0.utf8) }
        self.shutdown = shutdown
        var random = SystemRandomNumberGenerator()
        sessionID = (0..<5).map { _ in String(random.next() as UInt32, radix: 16) }.joined()
    }

    public func notifications() -> AsyncStream<[UInt8]> { service.notifications() }

    public func respond(to body: [UInt8]) async -> [UInt8]? {
        let request: JSON
        do {
            request = try JSON(parsing: body)
        } catch {
            return JSONRPC.response(id: .null, failure: .parseError).bytes
        }
        if case let .array(calls) = request {
            var responses: [JSON] = []
            for call in calls { responses.append(await respond(toCall: call)) }
            return JSON.array(responses).bytes
        }
        return await respond(toCall: request).bytes
    }

    private func respond(toCall value: JSON) async -> JSON {
        switch JSONRPC.call(from: value) {
        case let .failure(failure):
            return JSONRPC.response(id: value["id"] ?? .null, failure: failure)
        case let .success(call):
            switch await perform(call.method, call.params) {
            case let .success(result): return JSONRPC.response(id: call.id, result: result)
            case let .failure(failure): return JSONRPC.response(id: call.id, failure: failure)
            }
        }
    }

    /// Runs one method: checks the token, then dispatches.
    func perform(_ method: String, _ params: [JSON]) async -> Result<JSON, JSONRPC.Failure> {
        if method.hasPrefix("system.") {
            switch method {
            case "system.multicall": return await multicall(params)
            case "system.listMethods": return .success(.array(Self.methods.map { .string($0) }))
            case "system.listNotifications": return .success(.array(Self.notifications.map { .string($0) }))
            default: return .failure(.method("No such method: \(method)"))
            }
        }
        var params = params
        let token: [UInt8]?
        if case let .string(first)? = params.first, first.hasPrefix("token:") {
            token = Array(first.utf8.dropFirst(6))
            params.removeFirst()
        } else {
            token = nil
        }
        if let secret {
            guard let token, Self.constantTimeEqual(token, secret) else { return .failure(.method("Unauthorized")) }
        }
        do throws(JSONRPC.Failure) {
            return .success(try await call(method, Parameters(params)))
        } catch {
            return .failure(error)
        }
    }

    /// `system.multicall`: each call's result wrapped in a one-element array, each failure as an error object.
    private func multicall(_ params: [JSON]) async -> Result<JSON, JSONRPC.Failure> {
        guard case let .array(calls)? = params.first else { return .failure(.method("Bad parameter")) }
        var results: [JSON] = []
        for call in calls {
            guard let method = call["methodName"]?.stringValue, method != "system.multicall" else {
                results.append(Self.errorObject(.method("Bad parameter")))
                continue
            }
            let arguments: [JSON]
            switch call["params"] {
            case nil: arguments = []
            case let .array(values)?: arguments = values
            default:
                results.append(Self.errorObject(.method("Bad parameter")))
                continue
            }
            switch await perform(method, arguments) {
            case let .success(result): results.append(.array([result]))
            case let .failure(failure): results.append(Self.errorObject(failure))
            }
        }
        return .success(.array(results))
    }

    private static func errorObject(_ failure: JSONRPC.Failure) -> JSON {
        .object([("code", .integer(Int64(failure.code))), ("message", .string(failure.message))])
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

    /// The daemon calls this after it answered `aria2.shutdown`.
    func requestShutdown() { shutdown() }
}
