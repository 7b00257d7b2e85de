import BraidJSON

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension JSONRPC {
    /// A request as read: one call, a batch, or a failure that answers the whole request (text that is not JSON, a
    /// batch over the cap).
    enum Request: Sendable {
        case single(Entry)
        case batch([Entry])
        case failed(Failure)
    }

    /// One call of a request: one to run, or one already answered with a failure (malformed, or refused by the gate).
    enum Entry: Sendable {
        case run(id: JSON, Call)
        case fail(id: JSON, Failure)
    }

    /// A call the gate let through, its token removed.
    struct Call: Sendable {
        var method: String
        /// The parameters after the token; none for `system.` methods, which take none but multicall's calls.
        var params: [JSON] = []
        /// `system.multicall`'s calls, each read and held to the gate on its own.
        var calls: [Result<Call, Failure>] = []
        /// Whether the call (or one of its multicall's) carried the secret.
        var showedSecret = false
    }

    /// Reads a request through Foundation's `JSONDecoder`, holding each call to `gate` as soon as its method and first
    /// parameter are known and the request to `limits` before any call is read.
    static func read(_ bytes: [UInt8], gate: Gate, limits: Limits) -> Request {
        let decoder = JSONDecoder()
        decoder.userInfo[Reading.key] = Reading(gate: gate, limits: limits)
        do {
            return try decoder.decode(RequestReader.self, from: Data(bytes)).request
        } catch {
            return .failed(.parseError)
        }
    }
}

/// What the readers below need from `read`: handed through the decoder's `userInfo`.
private struct Reading: Sendable {
    static let key = CodingUserInfoKey(rawValue: "braid.jsonrpc.reading")!

    let gate: JSONRPC.Gate
    let limits: JSONRPC.Limits

    static func from(_ decoder: any Decoder) -> Reading {
        guard let reading = decoder.userInfo[key] as? Reading else {
            preconditionFailure("Invalid state: a JSON-RPC request read without JSONRPC.read")
        }
        return reading
    }
}

/// The top of a request: a batch is counted before any of its calls is read.
private struct RequestReader: Decodable {
    let request: JSONRPC.Request

    init(from decoder: any Decoder) throws {
        let reading = Reading.from(decoder)
        guard var batch = try? decoder.unkeyedContainer() else {
            request = .single(EntryReader.entry(from: decoder, reading))
            return
        }
        if let count = batch.count, count > reading.limits.maximumBatchCalls {
            request = .failed(.tooManyCalls(limit: reading.limits.maximumBatchCalls))
            return
        }
        var entries: [JSONRPC.Entry] = []
        while !batch.isAtEnd { entries.append(try batch.decode(EntryReader.self).entry) }
        request = .batch(entries)
    }
}

/// One request object. Never fails: what is malformed becomes an `Entry.fail`, so a batch's other calls go on.
private struct EntryReader: Decodable {
    let entry: JSONRPC.Entry

    init(from decoder: any Decoder) throws {
        entry = Self.entry(from: decoder, Reading.from(decoder))
    }

    /// aria2 requires an `id` (a request without one is invalid, not a notification); JSON-RPC allows a string, a
    /// number or null, and a string here may be at most 256 bytes, so that what an answer echoes stays small.
    static func entry(from decoder: any Decoder, _ reading: Reading) -> JSONRPC.Entry {
        guard let object = try? decoder.container(keyedBy: AnyKey.self) else {
            return .fail(id: .null, .invalidRequest)
        }
        guard object.contains(AnyKey("id")), let id = try? object.decode(RequestID.self, forKey: AnyKey("id")).value
        else { return .fail(id: .null, .invalidRequest) }
        guard let method = try? object.decode(String.self, forKey: AnyKey("method")) else {
            return .fail(id: id, .invalidRequest)
        }
        var params: (any UnkeyedDecodingContainer)?
        if object.contains(AnyKey("params")), (try? object.decodeNil(forKey: AnyKey("params"))) != true {
            guard let list = try? object.nestedUnkeyedContainer(forKey: AnyKey("params")) else {
                return .fail(id: id, .invalidRequest)
            }
            params = list
        }
        switch CallReader.call(method: method, params: &params, reading, malformed: .invalidRequest) {
        case let .success(call): return .run(id: id, call)
        case let .failure(failure): return .fail(id: id, failure)
        }
    }
}

/// A request's `id`: null, a number, or a string of at most 256 bytes.
private struct RequestID: Decodable {
    static let maximumBytes = 256

    let value: JSON

    init(from decoder: any Decoder) throws {
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            value = .null
        } else if let string = try? single.decode(String.self) {
            guard string.utf8.count <= Self.maximumBytes else {
                throw DecodingError.dataCorruptedError(in: single, debugDescription: "id too long")
            }
            value = .string(string)
        } else if let integer = try? single.decode(Int64.self) {
            value = .integer(integer)
        } else {
            value = .number(try single.decode(Double.self))
        }
    }
}

/// A call's parameters, read in the gate's order: the token first, the rest only if the gate lets the call through.
private enum CallReader {
    static func call(
        method: String,
        params: inout (any UnkeyedDecodingContainer)?,
        _ reading: Reading,
        malformed: JSONRPC.Failure
    ) -> Result<JSONRPC.Call, JSONRPC.Failure> {
        var call = JSONRPC.Call(method: method)
        guard reading.gate.needsToken(method) else {
            guard method == "system.multicall" else { return .success(call) }
            return multicall(&params, reading).map { calls in
                call.calls = calls
                call.showedSecret = calls.contains { (try? $0.get())?.showedSecret == true }
                return call
            }
        }
        var token: [UInt8]?
        if var list = params, !list.isAtEnd {
            guard let first = try? list.decode(TokenProbe.self) else { return .failure(malformed) }
            switch first {
            case let .token(value): token = value
            case let .parameter(value): call.params.append(value)
            case .skipped: break
            }
            params = list
        }
        guard reading.gate.admits(token: token) else { return .failure(.unauthorized) }
        call.showedSecret = token.map(reading.gate.isSecret) ?? false
        if var list = params {
            while !list.isAtEnd {
                guard let value = try? list.decode(JSON.self) else { return .failure(malformed) }
                call.params.append(value)
            }
        }
        return .success(call)
    }

    /// `system.multicall([{methodName, params}, …])`: counted first, then each call read and gated on its own.
    private static func multicall(
        _ params: inout (any UnkeyedDecodingContainer)?,
        _ reading: Reading
    ) -> Result<[Result<JSONRPC.Call, JSONRPC.Failure>], JSONRPC.Failure> {
        guard var list = params, !list.isAtEnd, var calls = try? list.nestedUnkeyedContainer() else {
            return .failure(.method("Bad parameter"))
        }
        if let count = calls.count, count > reading.limits.maximumMulticallCalls {
            return .failure(.tooManyMulticalls(limit: reading.limits.maximumMulticallCalls))
        }
        var results: [Result<JSONRPC.Call, JSONRPC.Failure>] = []
        while !calls.isAtEnd {
            guard let call = try? calls.decode(MulticallReader.self) else { return .failure(.method("Bad parameter")) }
            results.append(call.result)
        }
        return .success(results)
    }
}

/// One call inside `system.multicall`: `methodName` and `params`, never another multicall.
private struct MulticallReader: Decodable {
    let result: Result<JSONRPC.Call, JSONRPC.Failure>

    init(from decoder: any Decoder) throws {
        let reading = Reading.from(decoder)
        let bad = JSONRPC.Failure.method("Bad parameter")
        guard let object = try? decoder.container(keyedBy: AnyKey.self),
            let method = try? object.decode(String.self, forKey: AnyKey("methodName")), method != "system.multicall"
        else {
            result = .failure(bad)
            return
        }
        var params: (any UnkeyedDecodingContainer)?
        if object.contains(AnyKey("params")) {
            guard let list = try? object.nestedUnkeyedContainer(forKey: AnyKey("params")) else {
                result = .failure(bad)
                return
            }
            params = list
        }
        result = CallReader.call(method: method, params: &params, reading, malformed: bad)
    }
}

/// A call's first parameter, looked at for the token: the token's bytes; or, when the daemon has no secret (and the
/// parameter is an ordinary one), its value; or nothing, when the gate will refuse the call anyway.
private enum TokenProbe: Decodable {
    case token([UInt8])
    case parameter(JSON)
    case skipped

    init(from decoder: any Decoder) throws {
        if let text = try? decoder.singleValueContainer().decode(String.self), text.hasPrefix(JSONRPC.Gate.tokenPrefix)
        {
            self = .token(Array(text.utf8.dropFirst(JSONRPC.Gate.tokenPrefix.utf8.count)))
        } else if Reading.from(decoder).gate.secret != nil {
            self = .skipped
        } else {
            self = .parameter(try JSON(from: decoder))
        }
    }
}
