import Braid

extension Aria2RPC {
    /// `aria2.addUri(uris, options, position)`: checks the URIs and options, and queues the download.
    ///
    /// Options read: `dir` (inside the daemon's directory), `out`, `checksum` (`sha-256=HEX`), `header`,
    /// `split` and `max-connection-per-server` (the smaller is the connection count), `max-download-limit`,
    /// `pause`. Others are accepted and ignored, as options of features Braid does not have.
    func addURI(_ parameters: Parameters) throws(JSONRPC.Failure) -> String {
        guard case let .array(values)? = parameters[0], !values.isEmpty, values.count <= 64 else {
            throw .method("URI is not given.")
        }
        var uris: [String] = []
        for value in values {
            guard let uri = value.stringValue, Self.isFetchable(uri) else {
                throw .method(
                    "Invalid URI \(value.stringValue.map { PrintableText.sanitised(String($0.prefix(200))) } ?? "")")
            }
            uris.append(uri)
        }
        let options = try parameters.options(1)
        var request = TaskRequest(uris: uris, directory: directory.root)
        var paused = false
        var split: Int?
        var perServer: Int?
        for (name, value) in options {
            switch name {
            case "dir":
                let requested = try Self.text(value, option: name)
                do throws(DownloadDirectory.Refusal) {
                    request.directory = try directory.directory(for: requested)
                } catch {
                    throw .method(error.message)
                }
            case "out":
                request.output = try Self.text(value, option: name)
            case "checksum":
                let text = try Self.text(value, option: name)
                do throws(BraidError) {
                    _ = try ExpectedDigest(checksumArgument: text)
                } catch {
                    throw Self.badOption(name)
                }
                request.checksum = text
            case "header":
                request.headers = try Self.headers(value)
            case "split":
                split = try Self.count(value, option: name)
            case "max-connection-per-server":
                perServer = try Self.count(value, option: name)
            case "max-download-limit":
                request.rateLimit = try Self.rate(value, option: name)
            case "pause":
                paused = try Self.flag(value, option: name)
            default:
                continue
            }
        }
        if let output = request.output {
            do throws(DownloadDirectory.Refusal) {
                try DownloadDirectory.checkOutput(output)
                // An `out` with directories in it: those are made inside the chosen directory.
                if let slash = output.lastIndex(of: "/") {
                    let parent = request.directory + "/" + output[..<slash]
                    request.directory = try directory.directory(for: parent)
                    request.output = String(output[output.index(after: slash)...])
                }
            } catch {
                throw .method(error.message)
            }
        }
        let counts = [split, perServer].compactMap { $0 }
        if let connections = counts.min() { request.connections = connections }
        return service.add(request, paused: paused)
    }

    /// `aria2.changeOption`: `max-download-limit` of one download, applied at once if it runs.
    func changeOption(of gid: String, _ options: [(String, JSON)]) throws(JSONRPC.Failure) {
        guard service.snapshot(gid) != nil else { throw .method("GID \(gid) is not found") }
        for (name, value) in options where name == "max-download-limit" {
            let rate = try Self.rate(value, option: name)
            do throws(DownloadTable.Refusal) {
                try service.setRateLimit(rate, of: gid)
            } catch {
                throw .method(error.message)
            }
        }
    }

    /// `aria2.changeGlobalOption`: `max-overall-download-limit`, `max-download-limit` (for downloads added from
    /// now on) and `max-concurrent-downloads`. Every value is checked before any is applied.
    func changeGlobalOption(_ options: [(String, JSON)]) throws(JSONRPC.Failure) {
        var changes: [() -> Void] = []
        for (name, value) in options {
            switch name {
            case "max-overall-download-limit":
                let rate = try Self.rate(value, option: name)
                changes.append { self.service.overallRateLimit = rate }
            case "max-download-limit":
                let rate = try Self.rate(value, option: name)
                changes.append { self.service.defaultRateLimit = rate }
            case "max-concurrent-downloads":
                let count = try Self.count(value, option: name)
                changes.append { self.service.setMaximumActive(count) }
            default:
                continue
            }
        }
        for change in changes { change() }
    }

    func options(of task: DaemonTask) -> JSON {
        var members: [(String, JSON)] = [("dir", .string(task.request.directory))]
        if let output = task.request.output { members.append(("out", .string(output))) }
        if let checksum = task.request.checksum { members.append(("checksum", .string(checksum))) }
        if !task.request.headers.isEmpty {
            members.append(("header", .array(task.request.headers.map { .string($0) })))
        }
        let connections = task.request.connections ?? service.configuration.baseOptions.connections
        members.append(("split", .decimal(connections)))
        members.append(("max-connection-per-server", .decimal(connections)))
        members.append(("max-download-limit", .decimal(task.request.rateLimit ?? 0)))
        return .object(members.sorted { $0.0 < $1.0 })
    }

    func globalOptions() -> JSON {
        let limits = service.configuration.limits
        return .object([
            ("dir", .string(directory.root)),
            ("max-concurrent-downloads", .decimal(service.maximumActive)),
            ("max-connection-per-server", .decimal(limits.maximumConnectionsPerHost)),
            ("max-download-limit", .decimal(service.defaultRateLimit ?? 0)),
            ("max-overall-download-limit", .decimal(service.overallRateLimit ?? 0)),
            ("split", .decimal(service.configuration.baseOptions.connections)),
        ])
    }

    // MARK: Values

    /// Only what the library fetches: plain http and https URLs, nothing that reads local files.
    static func isFetchable(_ uri: String) -> Bool {
        let lower = uri.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else { return false }
        return uri.utf8.count <= 8192 && !uri.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7F }
    }

    static func badOption(_ name: String) -> JSONRPC.Failure {
        .method("We encountered a problem while processing the option '--\(name)'.")
    }

    static func text(_ value: JSON, option: String) throws(JSONRPC.Failure) -> String {
        guard let text = value.stringValue, text.utf8.count <= 4096 else { throw badOption(option) }
        return text
    }

    /// A count such as `split`: 1 to 64, as a string or a number.
    static func count(_ value: JSON, option: String) throws(JSONRPC.Failure) -> Int {
        guard let number = value.integerValue, (1...64).contains(number) else { throw badOption(option) }
        return Int(number)
    }

    static func flag(_ value: JSON, option: String) throws(JSONRPC.Failure) -> Bool {
        switch value {
        case .bool(let flag): return flag
        case .string("true"): return true
        case .string("false"): return false
        default: throw badOption(option)
        }
    }

    /// A rate as aria2 writes it (`0`, `500K`, `1M`): nil for none.
    static func rate(_ value: JSON, option: String) throws(JSONRPC.Failure) -> Int64? {
        let text: String
        switch value {
        case let .string(string): text = string
        case let .integer(number): text = String(number)
        default: throw badOption(option)
        }
        do throws(BraidError) {
            return try ByteCount.rate(text)
        } catch {
            throw badOption(option)
        }
    }

    /// `header`: one `Name: value` or a list of them; no line breaks (which would add headers of their own).
    static func headers(_ value: JSON) throws(JSONRPC.Failure) -> [String] {
        let values: [JSON]
        switch value {
        case .string: values = [value]
        case let .array(list): values = list
        default: throw badOption("header")
        }
        var headers: [String] = []
        for value in values.prefix(64) {
            guard let header = value.stringValue, header.contains(":"), header.utf8.count <= 8192,
                !header.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F })
            else { throw badOption("header") }
            headers.append(header)
        }
        return headers
    }
}
