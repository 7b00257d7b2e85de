import Braid
import BraidJSON

/// aria2's JSON-RPC interface over the daemon's service: the methods aria2's clients (aria2p, AriaNg, Motrix)
/// call, with aria2's parameters, field names, numbers written as strings, and error messages, so that those
/// clients work unchanged. Braid's own figures are under a `braid` key of each status.
///
/// With a secret, every `aria2.` method must carry `token:SECRET` as its first parameter, checked by
/// `JSONRPC.Gate` before anything else of the call is read. A request is held to `JSONRPC.Limits`: calls in a batch
/// and in a multicall, and the size of the answer.
public final class Aria2RPC: RPCEndpoint {
    let service: DaemonService
    let directory: DownloadDirectory
    private let gate: JSONRPC.Gate
    private let limits: JSONRPC.Limits
    /// Called once when a client asks the daemon to shut down (`aria2.shutdown`).
    private let shutdown: @Sendable () -> Void
    /// aria2's `getSessionInfo` id: random for each run of the daemon.
    let sessionID: String

    public convenience init(
        service: DaemonService,
        directory: DownloadDirectory,
        secret: String?,
        shutdown: @escaping @Sendable () -> Void = {}
    ) {
        self.init(service: service, directory: directory, secret: secret, limits: .init(), shutdown: shutdown)
    }

    init(
        service: DaemonService,
        directory: DownloadDirectory,
        secret: String?,
        limits: JSONRPC.Limits,
        shutdown: @escaping @Sendable () -> Void = {}
    ) {
        self.service = service
        self.directory = directory
        self.gate = JSONRPC.Gate(secret: secret)
        self.limits = limits
        self.shutdown = shutdown
        var random = SystemRandomNumberGenerator()
        sessionID = (0..<5).map { _ in String(random.next() as UInt32, radix: 16) }.joined()
    }

    public func notifications() -> AsyncStream<[UInt8]> { service.notifications() }

    public var requiresSecret: Bool { gate.secret != nil }

    public func isSecret(_ token: String) -> Bool { gate.isSecret(Array(token.utf8)) }

    public func respond(to body: [UInt8]) async -> RPCResponse {
        var budget = Budget(remaining: limits.maximumResponseBytes)
        switch JSONRPC.read(body, gate: gate, limits: limits) {
        case let .failed(failure):
            return RPCResponse(body: JSONRPC.response(id: .null, failure: failure).bytes)
        case let .single(entry):
            let (response, showedSecret) = await answer(entry, budget: &budget)
            return RPCResponse(body: response.bytes, showedSecret: showedSecret)
        case let .batch(entries):
            var out: [UInt8] = [UInt8(ascii: "[")]
            var showedSecret = false
            for entry in entries {
                let (response, showed) = await answer(entry, budget: &budget)
                showedSecret = showedSecret || showed
                if out.count > 1 { out.append(UInt8(ascii: ",")) }
                response.write(to: &out)
                guard out.count <= limits.maximumResponseBytes else {
                    let failure = JSONRPC.Failure.responseTooLarge(limit: limits.maximumResponseBytes)
                    return RPCResponse(
                        body: JSONRPC.response(id: .null, failure: failure).bytes, showedSecret: showedSecret)
                }
            }
            out.append(UInt8(ascii: "]"))
            return RPCResponse(body: out, showedSecret: showedSecret)
        }
    }

    /// What is left of the answer's size cap.
    struct Budget {
        var remaining: Int

        /// Takes `bytes` from what is left; false (and nothing taken) when they do not fit.
        mutating func spend(_ bytes: Int) -> Bool {
            guard bytes <= remaining else { return false }
            remaining -= bytes
            return true
        }
    }

    private func answer(_ entry: JSONRPC.Entry, budget: inout Budget) async -> (JSON, showedSecret: Bool) {
        switch entry {
        case let .fail(id, failure):
            return (JSONRPC.response(id: id, failure: failure), false)
        case let .run(id, call):
            switch await perform(call, budget: &budget) {
            case let .success(result): return (JSONRPC.response(id: id, result: result), call.showedSecret)
            case let .failure(failure): return (JSONRPC.response(id: id, failure: failure), call.showedSecret)
            }
        }
    }

    /// Runs one call the gate let through, its answer held to what is left of the size cap.
    private func perform(_ call: JSONRPC.Call, budget: inout Budget) async -> Result<JSON, JSONRPC.Failure> {
        let result: Result<JSON, JSONRPC.Failure>
        switch call.method {
        case "system.multicall":
            return await multicall(call.calls, budget: &budget)
        case "system.listMethods":
            result = .success(.array(Self.methods.map { .string($0) }))
        case "system.listNotifications":
            result = .success(.array(Self.notifications.map { .string($0) }))
        default:
            do throws(JSONRPC.Failure) {
                result = .success(try await self.call(call.method, Parameters(call.params)))
            } catch {
                result = .failure(error)
            }
        }
        if case let .success(value) = result, !budget.spend(value.encodedByteCount) {
            return .failure(.responseTooLarge(limit: limits.maximumResponseBytes))
        }
        return result
    }

    /// `system.multicall`: each call's result wrapped in a one-element array, each failure as an error object; the
    /// whole answer fails once its results pass the size cap.
    private func multicall(
        _ calls: [Result<JSONRPC.Call, JSONRPC.Failure>],
        budget: inout Budget
    ) async -> Result<JSON, JSONRPC.Failure> {
        var results: [JSON] = []
        for call in calls {
            let outcome: Result<JSON, JSONRPC.Failure>
            switch call {
            case let .success(call): outcome = await perform(call, budget: &budget)
            case let .failure(failure): outcome = .failure(failure)
            }
            switch outcome {
            case let .success(result):
                results.append(.array([result]))
            case let .failure(failure) where failure == .responseTooLarge(limit: limits.maximumResponseBytes):
                return .failure(failure)
            case let .failure(failure):
                results.append(Self.errorObject(failure))
            }
        }
        return .success(.array(results))
    }

    private static func errorObject(_ failure: JSONRPC.Failure) -> JSON {
        .object([("code", .integer(Int64(failure.code))), ("message", .string(failure.message))])
    }

    /// The daemon calls this after it answered `aria2.shutdown`.
    func requestShutdown() { shutdown() }
}
