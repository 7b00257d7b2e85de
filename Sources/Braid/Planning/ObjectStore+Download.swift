import Logging

extension ObjectStore {
    /// What becomes of one object below a prefix (`downloads(of:filter:options:)`).
    public enum PlannedObject: Sendable {
        /// Downloaded from `url` with `options`, to `path` (relative, `/`-separated) below the directory.
        case download(key: String, path: String, url: String, options: DownloadOptions)
        /// Not downloaded: its key cannot name a file below the directory (a `..` or empty component), or names
        /// the same file as an earlier key, or a directory where an earlier key is a file (or the other way round).
        /// Its error is a usage error (exit status 2).
        case refused(key: String, BraidError)

        /// The object's whole key.
        public var key: String {
            switch self {
            case let .download(key, _, _, _), let .refused(key, _): key
            }
        }
    }

    /// The least an object's piece is, as the AWS CLI cuts objects (its `multipart_chunksize`): S3 bills by
    /// request and answers each after tens of milliseconds, so a prefix of small objects costs one GET each, and
    /// a large object is still fetched over several connections.
    public static let minimumPieceSize: Int64 = 8 << 20

    /// Asks the store for each object's checksum (`x-amz-checksum-sha256`, …) with its headers, which a download
    /// verifies against, as it does an `ETag` that is an MD5 (`DigestHeaders`).
    static let checksumModeHeader = "x-amz-checksum-mode: ENABLED"

    /// Lists the objects below `prefix` (`objects(in:prefix:options:pageSize:)`) and plans a download of each one
    /// `filter` keeps (`plan(_:below:filter:options:)`), in key order.
    public func downloads(
        of prefix: ObjectStoreLocation, filter: ObjectKeyFilter = ObjectKeyFilter(), options: DownloadOptions,
        pageSize: Int = 1000
    ) async throws(BraidError) -> [PlannedObject] {
        try checkPlan(below: prefix, filter: filter, options: options)
        let objects = try await objects(in: prefix.bucket, prefix: prefix.key, options: options, pageSize: pageSize)
        return try plan(objects, below: prefix, filter: filter, options: options)
    }

    /// Plans a download of each of `objects`, listed below `prefix`, that `filter` keeps (matched against the key
    /// without the prefix), in their order.
    ///
    /// Each object goes to its key's path below the prefix, below the directory of `options.destination` (which must
    /// be `.directory`): `s3://b/data/` with `data/2024/a.csv` saves `DIR/2024/a.csv`. The key is a name a server
    /// chose: it becomes a path as a Metalink's names do (`SafeName.path(sanitising:)`), its characters made safe,
    /// and a key that would leave the directory is refused, not guessed at. A key ending in `/` with no content (a
    /// console's "folder") is no file and is left out. Each download is signed for the store's origin only, asks
    /// for the object's checksums, and is verified against them or an `ETag` that is an MD5; its pieces are at
    /// least `minimumPieceSize`. It knows the object's listed size: one small enough for one request is
    /// fetched with one GET of the whole object, whose headers carry its checksums and `ETag` as a `HEAD`'s would
    /// (`DownloadJob.lookBeforeProbe`); a larger one is asked with a `HEAD` first.
    public func plan(
        _ objects: [Object], below prefix: ObjectStoreLocation, filter: ObjectKeyFilter = ObjectKeyFilter(),
        options: DownloadOptions
    ) throws(BraidError) -> [PlannedObject] {
        try checkPlan(below: prefix, filter: filter, options: options)
        guard case let .directory(directory) = options.destination else { return [] }
        var planner = PathPlanner()
        var planned: [PlannedObject] = []
        for object in objects {
            // By bytes, as the store compares keys: `hasPrefix` compares characters, and a key whose part after the
            // prefix starts with a combining mark would not have it.
            guard object.key.utf8.starts(with: prefix.key.utf8) else { continue }
            let relative = String(decoding: object.key.utf8.dropFirst(prefix.key.utf8.count), as: UTF8.self)
            if object.size == 0 && (relative.isEmpty || relative.hasSuffix("/")) { continue }
            guard filter.keeps(relative) else { continue }
            let path: [SafeName]
            do {
                path = try planner.place(key: object.key, relative: relative)
            } catch {
                planned.append(.refused(key: object.key, error))
                continue
            }
            var objectOptions = signed(options, bucket: prefix.bucket)
            Self.cut(&objectOptions, size: object.size)
            objectOptions.listed = object
            objectOptions.destination = .below(directory, path: path)
            planned.append(
                .download(
                    key: object.key, path: SafeName.joined(path), url: url(bucket: prefix.bucket, key: object.key),
                    options: objectOptions))
        }
        return planned
    }

    private func checkPlan(
        below prefix: ObjectStoreLocation, filter: ObjectKeyFilter, options: DownloadOptions
    ) throws(BraidError) {
        guard prefix.isPrefix else {
            throw .usage("\(prefix) names one object; a prefix ends with '/'", option: .objectStore)
        }
        guard case .directory = options.destination else {
            throw .usage("the objects below \(prefix) are saved into a directory", option: .objectStore)
        }
        try filter.validate()
    }

    /// The download of the one object `location` names: its URL, and `options` signed for the store's origin and
    /// asking for the object's checksums. A `.directory` destination saves it under its key's last component, made
    /// safe; a `.file` one where it says.
    public func download(
        of location: ObjectStoreLocation, options: DownloadOptions
    ) throws(BraidError) -> (url: String, options: DownloadOptions) {
        try validate()
        guard !location.isPrefix else {
            throw .usage("\(location) is a prefix; one object's key does not end with '/'", option: .objectStore)
        }
        try location.checkedForRequests()
        var signedOptions = signed(options, bucket: location.bucket)
        if case let .directory(directory) = options.destination,
            let name = location.key.split(separator: "/").last.flatMap({ SafeName(sanitising: String($0)) })
        {
            signedOptions.destination = .below(directory, subdirectory: "", name: name.string)
        }
        return (url(bucket: location.bucket, key: location.key), signedOptions)
    }

    /// `error`, the failure of the download of `location`, with the store's own reason when it gives one: a
    /// refused `HEAD` has no body, so the store is asked once more, with a GET of the first byte, whose error
    /// document names the reason (`NoSuchKey`, `AccessDenied`, `SignatureDoesNotMatch`, …), and a refusal says what
    /// would help (`.objectStoreCredentials`, `.objectStoreRegion`). `error` itself when it did not come from an
    /// HTTP status, or the store says nothing more.
    public func explain(
        _ error: BraidError, downloading location: ObjectStoreLocation, options: DownloadOptions
    ) async -> BraidError {
        guard let status = error.httpStatus, (300..<500).contains(status), !location.isPrefix,
            let (url, _) = try? download(of: location, options: options)
        else { return error }
        let requestOptions = requestOptions(for: location.bucket, sharing: options)
        let policy = {
            var policy = options.retryPolicy; policy.maximumAttempts = 1; return policy
        }()
        let log = RequestLog(Logger.current)
        let explained = try? await BlockingThreads.value { isCancelled throws(BraidError) in
            let response = try Self.get(
                url, options: requestOptions, headers: ["Range: bytes=0-0"], retryPolicy: policy, log: log,
                isCancelled: isCancelled)
            let status = response.headers.status
            guard status >= 300, ObjectListingParser.serviceError(response.body) != nil || [401, 403].contains(status)
            else { return nil as BraidError? }
            return failure(response, doing: "downloading \(location)")
        }
        return (explained ?? nil) ?? error
    }

    /// Fetches an object of `size` bytes in pieces of at least `minimumPieceSize`: over one connection per piece,
    /// up to `options.connections`, and up to `options.piecesPerConnection` pieces each. A download that chooses
    /// its connections itself (`automaticConnections`) is left to, from 8 pieces (64 MiB) up; a smaller object
    /// gets its pieces' count, as the AWS CLI cuts it: left to choose, it would plan and split pieces of 1 MiB, a
    /// GET (which S3 bills) for each.
    static func cut(_ options: inout DownloadOptions, size: Int64) {
        if options.automaticConnections {
            guard size < 8 * minimumPieceSize else { return }
            options.automaticConnections = false
            options.connections = 8
        }
        let pieces = max(1, size / minimumPieceSize)
        let connections = min(Int64(options.connections), pieces)
        options.connections = Int(connections)
        options.piecesPerConnection = Int(min(Int64(options.piecesPerConnection), max(1, pieces / connections)))
    }

    /// `options` for a request to `bucket`: signed, the user's credentials (the signature, extra headers) scoped to
    /// the store's origin, the object's checksums asked for, and its `Last-Modified` given to the file, as
    /// `aws s3 cp` and `sync` leave it: a rerun then knows a file older than its object for a stale one, where no
    /// digest can tell (`DownloadJob.judgeExisting`).
    private func signed(_ options: DownloadOptions, bucket: String) -> DownloadOptions {
        var options = options
        options.awsSignature = signature
        options.credentialScope = CredentialScope(userNamed: [origin(of: bucket)])
        options.mirrors = []
        options.headers.append(Self.checksumModeHeader)
        options.setsRemoteTime = true
        return options
    }
}

/// Where each object of a prefix goes: the key's path below the prefix made safe, refused when it would leave the
/// directory or land on another object's file, or need a directory where another object is a file.
private struct PathPlanner {
    // Paths are compared by their bytes, as the file system compares names: `café` spelled with a combining accent
    // is another file than `café` with an accented letter, though Swift's strings are equal.
    /// The files planned, and which key each is for.
    private var files: [[UInt8]: String] = [:]
    /// The directories the planned files need, and the first key that needed each.
    private var directories: [[UInt8]: String] = [:]

    mutating func place(key: String, relative: String) throws(BraidError) -> [SafeName] {
        let path: [SafeName]
        do throws(SafeName.Refusal) {
            path = try SafeName.path(sanitising: relative, keepingLeadingDots: true)
        } catch {
            throw .usage("the key '\(key)' is not saved: its path below the prefix \(error.reason)")
        }
        let file = SafeName.joined(path)
        let fileKey = Array(file.utf8)
        if let earlier = files[fileKey] {
            throw .usage("the key '\(key)' is not saved: it would be saved as \(file), as the key '\(earlier)' is")
        }
        if let earlier = directories[fileKey] {
            throw .usage("the key '\(key)' is not saved: \(file) is a directory, for the key '\(earlier)'")
        }
        let parents = path.indices.dropLast().map { SafeName.joined(path[...$0]) }
        let parentKeys = parents.map { Array($0.utf8) }
        if let index = parentKeys.firstIndex(where: { files[$0] != nil }) {
            throw .usage(
                "the key '\(key)' is not saved: \(parents[index]) is a file, for the key '\(files[parentKeys[index]] ?? "")'"
            )
        }
        files[fileKey] = key
        for parentKey in parentKeys where directories[parentKey] == nil { directories[parentKey] = key }
        return path
    }
}
