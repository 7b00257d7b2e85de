import Braid
import BraidJSON

extension Aria2RPC {
    /// Every method, as `system.listMethods` lists them.
    static let methods = [
        "aria2.addUri", "aria2.addMetalink", "aria2.remove", "aria2.forceRemove", "aria2.pause", "aria2.forcePause",
        "aria2.pauseAll",
        "aria2.forcePauseAll", "aria2.unpause", "aria2.unpauseAll", "aria2.tellStatus", "aria2.getUris",
        "aria2.getFiles", "aria2.getPeers", "aria2.getServers", "aria2.tellActive", "aria2.tellWaiting",
        "aria2.tellStopped", "aria2.getOption", "aria2.changeOption", "aria2.getGlobalOption",
        "aria2.changeGlobalOption", "aria2.getGlobalStat", "aria2.purgeDownloadResult", "aria2.removeDownloadResult",
        "aria2.changePosition", "aria2.getVersion", "aria2.getSessionInfo", "aria2.shutdown", "aria2.forceShutdown",
        "aria2.saveSession",
        "system.multicall", "system.listMethods", "system.listNotifications",
    ]

    static let notifications = [
        "aria2.onDownloadStart", "aria2.onDownloadPause", "aria2.onDownloadStop", "aria2.onDownloadComplete",
        "aria2.onDownloadError", "aria2.onBtDownloadComplete",
    ]

    /// The positional parameters of a call (after the token), read as aria2 reads them.
    struct Parameters {
        let values: [JSON]

        init(_ values: [JSON]) { self.values = values }

        subscript(index: Int) -> JSON? { index < values.count ? values[index] : nil }

        func integer(_ index: Int) throws(JSONRPC.Failure) -> Int {
            guard let value = self[index]?.integerValue, let int = Int(exactly: value) else {
                throw .method("Bad parameter")
            }
            return int
        }

        /// A `keys` parameter: which fields of a status to send (all when absent or empty).
        func keys(_ index: Int) throws(JSONRPC.Failure) -> Set<String>? {
            switch self[index] {
            case nil, .null?: return nil
            case let .array(values)?:
                let keys = values.compactMap(\.stringValue)
                guard keys.count == values.count else { throw .method("Bad parameter") }
                return keys.isEmpty ? nil : Set(keys)
            case let .string(key)?: return [key]
            default: throw .method("Bad parameter")
            }
        }

        func options(_ index: Int) throws(JSONRPC.Failure) -> [(String, JSON)] {
            switch self[index] {
            case nil, .null?: return []
            case let .object(members)?: return members
            default: throw .method("Bad parameter")
            }
        }
    }

    /// Carries out one call: the methods that change something here, the rest in `answer`.
    func call(_ method: String, _ parameters: Parameters) async throws(JSONRPC.Failure) -> JSON {
        switch method {
        case "aria2.addUri":
            return .string(try addURI(parameters))
        case "aria2.addMetalink":
            return .array(try addMetalink(parameters).map { .string($0) })
        case "aria2.remove", "aria2.forceRemove":
            let gid = try gid(parameters)
            try refusing { () throws(DownloadTable.Refusal) in try service.remove(gid) }
            return .string(gid)
        case "aria2.pause", "aria2.forcePause":
            let gid = try gid(parameters)
            try refusing { () throws(DownloadTable.Refusal) in try service.pause(gid) }
            return .string(gid)
        case "aria2.pauseAll", "aria2.forcePauseAll":
            service.pauseAll()
            return .string("OK")
        case "aria2.unpause":
            let gid = try gid(parameters)
            try refusing { () throws(DownloadTable.Refusal) in try service.unpause(gid) }
            return .string(gid)
        case "aria2.unpauseAll":
            service.unpauseAll()
            return .string("OK")
        case "aria2.changePosition":
            let gid = try gid(parameters)
            let offset = try parameters.integer(1)
            guard let how = parameters[2]?.stringValue, let origin = DownloadTable.Origin(rawValue: how) else {
                throw .method("Illegal argument.")
            }
            let position = try refusing { () throws(DownloadTable.Refusal) in
                try service.changePosition(gid, by: offset, from: origin)
            }
            return .integer(Int64(position))
        case "aria2.changeOption":
            try changeOption(of: try gid(parameters), try parameters.options(1))
            return .string("OK")
        case "aria2.changeGlobalOption":
            try changeGlobalOption(try parameters.options(0))
            return .string("OK")
        case "aria2.purgeDownloadResult":
            service.purgeResults()
            return .string("OK")
        case "aria2.removeDownloadResult":
            let gid = try gid(parameters)
            try refusing { () throws(DownloadTable.Refusal) in try service.removeResult(gid) }
            return .string("OK")
        case "aria2.saveSession":
            do throws(BraidError) {
                try await service.saveSession()
            } catch {
                throw .method(error.message)
            }
            return .string("OK")
        case "aria2.shutdown", "aria2.forceShutdown":
            requestShutdown()
            return .string("OK")
        default:
            return try answer(method, parameters)
        }
    }

    /// The methods that only read: a download's status, files and options, and the daemon's.
    private func answer(_ method: String, _ parameters: Parameters) throws(JSONRPC.Failure) -> JSON {
        switch method {
        case "aria2.tellStatus":
            let snapshot = try snapshot(try gid(parameters))
            return status(of: snapshot, keys: try parameters.keys(1))
        case "aria2.getUris":
            return files(of: try snapshot(try gid(parameters)).task)[0]["uris"] ?? .array([])
        case "aria2.getFiles":
            return .array(files(of: try snapshot(try gid(parameters)).task))
        case "aria2.getPeers", "aria2.getServers":
            _ = try snapshot(try gid(parameters))
            return .array([])
        case "aria2.tellActive":
            let keys = try parameters.keys(0)
            return .array(service.active().map { status(of: $0, keys: keys) })
        case "aria2.tellWaiting", "aria2.tellStopped":
            let all = method == "aria2.tellWaiting" ? service.waiting() : service.stopped()
            let page = Self.page(all, offset: try parameters.integer(0), count: try parameters.integer(1))
            let keys = try parameters.keys(2)
            return .array(page.map { status(of: $0, keys: keys) })
        case "aria2.getOption":
            return options(of: try snapshot(try gid(parameters)).task)
        case "aria2.getGlobalOption":
            return globalOptions()
        case "aria2.getGlobalStat":
            return globalStat()
        case "aria2.getVersion":
            return .object([
                ("enabledFeatures", .array(["HTTPS", "Message Digest", "Metalink"].map { .string($0) })),
                ("version", .string(BraidVersion.current)),
            ])
        case "aria2.getSessionInfo":
            return .object([("sessionId", .string(sessionID))])
        default:
            // At most a line of it: a request may name a method of megabytes, and the answer need not repeat it.
            throw .method("No such method: \(method.prefix(100))")
        }
    }

    /// The download a call names first: the whole of its gid, or a prefix of it that no other gid has, as aria2
    /// takes them (`DownloadTable.resolve`).
    private func gid(_ parameters: Parameters) throws(JSONRPC.Failure) -> String {
        guard let text = parameters[0]?.stringValue else { throw .method("Bad GID") }
        return try refusing { () throws(DownloadTable.Refusal) in try service.resolve(text) }
    }

    private func refusing<Value>(
        _ body: () throws(DownloadTable.Refusal) -> Value
    ) throws(JSONRPC.Failure) -> Value {
        do throws(DownloadTable.Refusal) {
            return try body()
        } catch {
            throw .method(error.message)
        }
    }

    private func snapshot(_ gid: String) throws(JSONRPC.Failure) -> DaemonService.Snapshot {
        guard let snapshot = service.snapshot(gid) else { throw .method("GID \(gid) is not found") }
        return snapshot
    }

    /// aria2's paging of `tellWaiting` and `tellStopped`: from `offset` on, at most `count`; a negative offset
    /// counts from the end and pages backwards, last first.
    static func page<Element>(_ all: [Element], offset: Int, count: Int) -> [Element] {
        guard count > 0, !all.isEmpty else { return [] }
        if offset >= 0 {
            guard offset < all.count else { return [] }
            return Array(all[offset..<min(all.count, offset + min(count, all.count))])
        }
        let last = all.count + offset
        guard last >= 0 else { return [] }
        let first = max(0, last - count + 1)
        return Array(all[first...last].reversed())
    }

    private func globalStat() -> JSON {
        let stat = service.globalStat()
        return .object([
            ("downloadSpeed", .decimal(Int64(stat.bytesPerSecond))),
            ("numActive", .decimal(stat.active)),
            ("numStopped", .decimal(stat.stopped)),
            ("numStoppedTotal", .decimal(stat.stoppedTotal)),
            ("numWaiting", .decimal(stat.waiting)),
            ("uploadSpeed", .string("0")),
        ])
    }
}
