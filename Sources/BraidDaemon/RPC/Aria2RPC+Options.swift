import Braid
import BraidJSON

extension Aria2RPC {
    /// `aria2.addUri(uris, options, position)`: checks the URIs and options, and queues the download.
    func addURI(_ parameters: Parameters) throws(JSONRPC.Failure) -> String {
        guard case let .array(values)? = parameters[0] else { throw .method("URI is not given.") }
        var uris: [String] = []
        for value in values {
            guard let uri = value.stringValue else { throw .method("Invalid URI") }
            uris.append(uri)
        }
        let (request, paused) = try request(uris: uris, options: try parameters.options(1))
        return service.add(try checked(request), paused: paused, position: try Self.position(parameters[2]))
    }

    /// `aria2.addMetalink(metalink, options, position)`: a download for each file of the Metalink v4 document
    /// (base64), in its order: from the file's http and https URLs, held to its size, hashes and piece hashes, saved
    /// under its name (made safe, as `--metalink` makes it) in `dir`. The options are `addUri`'s but for `out` and
    /// `checksum`, which are the document's. Every file is checked before any is queued.
    ///
    /// - Returns: the gids, in the document's order.
    func addMetalink(_ parameters: Parameters) throws(JSONRPC.Failure) -> [String] {
        guard let text = parameters[0]?.stringValue, let document = Base64.decoded(Array(text.utf8)) else {
            throw .method("The Metalink is not given as base64.")
        }
        let metalink: Metalink
        do throws(BraidError) {
            metalink = try Metalink(parsing: document, source: "sent")
        } catch {
            throw .method(error.message)
        }
        var (template, paused) = try request(uris: [], options: try parameters.options(1))
        (template.output, template.checksum) = (nil, nil)
        var requests: [TaskRequest] = []
        var paths: Set<String> = []
        for file in metalink.files {
            // What `--metalink` takes of the file (`Metalink.File.download`): its URLs Braid can fetch, the most
            // preferred first, its hashes, its size, and its name made safe, below the directory.
            let taken: (url: String, options: DownloadOptions)
            do throws(BraidError) {
                taken = try file.download(options: Self.metalinkBase, from: .local)
            } catch {
                throw .method(error.message)
            }
            guard case let .below(_, subdirectory, name?) = taken.options.destination else {
                throw .method("The Metalink names a file by an empty path")
            }
            var request = template
            request.uris = Array(([taken.url] + taken.options.mirrors).prefix(TaskRequest.maximumURIs))
            request.output = subdirectory.isEmpty ? name : subdirectory + "/" + name
            request.metalinkDigests = taken.options.metalinkDigests.isEmpty ? nil : taken.options.metalinkDigests
            request.pieces = taken.options.pieceHashes
            request.metalinkLength = taken.options.expectedLength
            request = try checked(request)
            // The parser refuses a name given twice; two names made safe alike are refused here.
            guard paths.insert(request.directory + "/" + (request.output ?? "")).inserted else {
                throw .method("The Metalink names two files that would be saved as \(request.output ?? name)")
            }
            requests.append(request)
        }
        let position = try Self.position(parameters[2])
        return requests.enumerated().map { index, request in
            service.add(request, paused: paused, position: position.map { $0 + index })
        }
    }

    /// The options a Metalink's file is taken with in `addMetalink`: none but a directory, so that the file's place
    /// below one (its name made safe) is worked out; the request's own directory is the one the file goes in.
    private static let metalinkBase = {
        var options = DownloadOptions()
        options.destination = .directory("")
        return options
    }()

    /// A request for `uris` with the options of an add: `dir` (inside the daemon's directory), `out`, `checksum`
    /// (`sha-256=HEX`), `header`, `split` and `max-connection-per-server` (the smaller is the connection count),
    /// `max-download-limit`, `pause`, and Braid's own `cache-peers` (templates as `--cache-peers` takes them).
    /// Others are accepted and ignored, as options of features Braid does not have.
    private func request(
        uris: [String], options: [(String, JSON)]
    ) throws(JSONRPC.Failure) -> (request: TaskRequest, paused: Bool) {
        var request = TaskRequest(uris: uris, directory: directory.root)
        var paused = false
        var split: Int?
        var perServer: Int?
        for (name, value) in options {
            switch name {
            case "dir":
                request.directory = try Self.text(value, option: name)
            case "out":
                request.output = try Self.text(value, option: name)
            case "checksum":
                request.checksum = try Self.text(value, option: name)
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
            case "cache-peers":
                request.cachePeers = try Self.text(value, option: name)
            default:
                continue
            }
        }
        let counts = [split, perServer].compactMap { $0 }
        if let connections = counts.min() { request.connections = connections }
        return (request, paused)
    }

    /// `request` as the daemon will run it (`TaskRequest.checked`), or aria2's refusal.
    private func checked(_ request: TaskRequest) throws(JSONRPC.Failure) -> TaskRequest {
        do throws(TaskRequest.Refusal) {
            return try request.checked(in: directory, reservation: service.reservation(ofDestination:))
        } catch {
            switch error.option {
            case nil, "dir"?, "out"?: throw .method(error.message)
            case let option?: throw Self.badOption(option)
            }
        }
    }

    /// An add's `position`: where in the waiting queue, 0 first; none is the end, as one past it is. Any place
    /// past a billion is the end too, so that the places of a Metalink's files, one after another, cannot overflow.
    static func position(_ value: JSON?) throws(JSONRPC.Failure) -> Int? {
        switch value {
        case nil, .null?: return nil
        case let .integer(position)?:
            guard position >= 0 else { throw .method("Position must be greater than or equal to 0.") }
            return Int(min(position, 1 << 30))
        default: throw .method("Bad parameter")
        }
    }

    /// `aria2.changeOption`: `max-download-limit` of one download, applied at once if it runs. Any other option is
    /// refused, and nothing is changed: an `out` or a `dir` answered "OK" and left as it was would tell a client
    /// (AriaNg's rename) that it took.
    func changeOption(of gid: String, _ options: [(String, JSON)]) throws(JSONRPC.Failure) {
        guard service.snapshot(gid) != nil else { throw .method("GID \(gid) is not found") }
        if let (name, _) = options.first(where: { $0.0 != "max-download-limit" }) {
            let shown = PrintableText.escapingControlCharacters(String(name.prefix(64)))
            throw .method(
                "Cannot change option \(shown) for GID#\(gid): braid changes only max-download-limit of a download")
        }
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
        if let cachePeers = task.request.cachePeers { members.append(("cache-peers", .string(cachePeers))) }
        return .object(members.sorted { $0.0 < $1.0 })
    }

    func globalOptions() -> JSON {
        let limits = service.configuration.limits
        return .object([
            ("dir", .string(directory.root)),
            ("max-concurrent-downloads", .decimal(service.maximumActive)),
            ("max-connection-per-server", .decimal(limits.maximumConnectionsPerHost)),
            ("max-download-limit", .decimal(service.defaultRateLimit ?? 0)),
            ("max-download-result", .decimal(service.configuration.maximumResults)),
            ("max-overall-download-limit", .decimal(service.overallRateLimit ?? 0)),
            ("split", .decimal(service.configuration.baseOptions.connections)),
        ])
    }

    // MARK: Values

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

    /// `header`: one `Name: value` or a list of them (held to `TaskRequest.isHeader` with the rest of the request).
    static func headers(_ value: JSON) throws(JSONRPC.Failure) -> [String] {
        switch value {
        case let .string(header): return [header]
        case let .array(list):
            let headers = list.compactMap(\.stringValue)
            guard headers.count == list.count else { throw badOption("header") }
            return headers
        default: throw badOption("header")
        }
    }
}
