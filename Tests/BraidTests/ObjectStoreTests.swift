import Testing

@testable import Braid

/// Where an S3 store's objects are, as the AWS environment describes it, and how a prefix's listing becomes
/// downloads: each key a safe path below the directory, each request signed for the store's origin only.
@Suite("object store")
struct ObjectStoreTests {
    static let credentials = ObjectStore.Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "s3cr3t/+x")

    @Test("The environment gives the endpoint, region and credentials as the AWS CLI reads them")
    func environment() throws {
        let store = try ObjectStore(environment: [
            "AWS_ENDPOINT_URL": "http://ignored:1", "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:9000/",
            "AWS_DEFAULT_REGION": "ignored-1", "AWS_REGION": "eu-west-3",
            "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "s3cr3t/+x", "AWS_SESSION_TOKEN": "tok",
        ])
        #expect(store.endpoint == "http://127.0.0.1:9000/")
        #expect(store.region == "eu-west-3")
        #expect(store.credentials?.sessionToken == "tok")
        #expect(store.signature?.provider == "aws:amz:eu-west-3:s3")
        #expect(store.signature?.login == "AKIDEXAMPLE:s3cr3t/+x")
        #expect(
            store.signature?.headerLines == [
                "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                "x-amz-security-token: tok",
            ])
        #expect(!"\(store.credentials!)".contains("s3cr3t") && !"\(store.signature!)".contains("s3cr3t"))

        let defaults = try ObjectStore(environment: ["AWS_ACCESS_KEY_ID": "", "AWS_REGION": ""])
        #expect(defaults == ObjectStore(), "empty variables count as unset: AWS, us-east-1, unsigned")
        #expect(try ObjectStore(environment: ["AWS_DEFAULT_REGION": "ap-south-1"]).region == "ap-south-1")
    }

    @Test(
        "A half-given key, an endpoint that is no http URL, or a region libcurl cannot sign for is a usage error",
        arguments: [
            ["AWS_ACCESS_KEY_ID": "AKID"], ["AWS_SECRET_ACCESS_KEY": "x"],
            ["AWS_ENDPOINT_URL": "ftp://127.0.0.1"], ["AWS_ENDPOINT_URL": "127.0.0.1:9000"],
            ["AWS_ENDPOINT_URL": "http://u:p@127.0.0.1"], ["AWS_ENDPOINT_URL": "http://127.0.0.1/?x=1"],
            ["AWS_REGION": "us-east-1:evil"], ["AWS_REGION": "US East"],
            ["AWS_ACCESS_KEY_ID": "AK:ID", "AWS_SECRET_ACCESS_KEY": "x"],
            ["AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "x", "AWS_SESSION_TOKEN": "a\r\nX-Evil: 1"],
        ])
    func refusedEnvironment(environment: [String: String]) {
        #expect(throws: BraidError.self) { try ObjectStore(environment: environment) }
    }

    @Test("AWS is addressed virtual-hosted style, a dotted bucket and a custom endpoint path style")
    func objectURLs() {
        #expect(ObjectStore().url(bucket: "data", key: "a/b.txt") == "https://data.s3.us-east-1.amazonaws.com/a/b.txt")
        #expect(
            ObjectStore(region: "eu-central-1").url(bucket: "my.data", key: "k")
                == "https://s3.eu-central-1.amazonaws.com/my.data/k")
        #expect(
            ObjectStore(region: "cn-north-1").url(bucket: "d", key: "k") == "https://d.s3.cn-north-1.amazonaws.com.cn/k"
        )
        #expect(
            ObjectStore(endpoint: "http://127.0.0.1:9000/").url(bucket: "data", key: "dir/my file+é~.txt")
                == "http://127.0.0.1:9000/data/dir/my%20file%2B%C3%A9~.txt")
    }

    @Test("A listing's query is in SigV4's canonical form: sorted, every reserved byte encoded")
    func listingURL() {
        let store = ObjectStore(endpoint: "http://127.0.0.1:9000")
        #expect(
            store.listingURL(bucket: "b", prefix: "data/2024 q1/", pageSize: 1000, continuationToken: "a/b+c=")
                == "http://127.0.0.1:9000/b/?continuation-token=a%2Fb%2Bc%3D&encoding-type=url&list-type=2"
                + "&max-keys=1000&prefix=data%2F2024%20q1%2F")
        #expect(
            ObjectStore().listingURL(bucket: "b", prefix: "", pageSize: 7, continuationToken: nil)
                == "https://b.s3.us-east-1.amazonaws.com/?encoding-type=url&list-type=2&max-keys=7")
    }

    @Test("s3:// URLs: a key ending in '/' (or none) is a prefix, anything else one object")
    func locations() throws {
        #expect(try ObjectStoreLocation(parsing: "s3://b").isPrefix)
        #expect(try ObjectStoreLocation(parsing: "S3://b/").isPrefix)
        #expect(try ObjectStoreLocation(parsing: "s3://b/data/").key == "data/")
        let object = try ObjectStoreLocation(parsing: "s3://b/data/my file.txt")
        #expect(!object.isPrefix && object.bucket == "b" && object.key == "data/my file.txt")
        for text in [
            "s3://", "s3:///k", "s3://bad bucket/k", "s3://b:9000/k", "s3://u@b/k", "s3://b/k\u{1B}", "http://b/",
        ] {
            #expect(throws: BraidError.self, "\(text)") { try ObjectStoreLocation(parsing: text) }
        }
        #expect(throws: BraidError.self) {
            try ObjectStore().download(of: .init(bucket: "b", key: "a/../k"), options: .init())
        }
    }

    static func objects(_ keys: [String]) -> [ObjectStore.Object] {
        keys.map { ObjectStore.Object(key: $0, size: $0.hasSuffix("/") ? 0 : 10) }
    }

    static func options(into directory: String = "/tmp/out") -> DownloadOptions {
        var options = DownloadOptions()
        options.destination = .directory(directory)
        options.headers = ["X-Trace: 1"]
        return options
    }

    @Test("Each key goes to its path below the prefix, below the directory, signed for the store's origin only")
    func planDownloads() throws {
        let store = ObjectStore(endpoint: "http://127.0.0.1:9000", credentials: Self.credentials)
        let planned = try store.plan(
            Self.objects(["data/", "data/a.txt", "data/sub/", "data/sub/b.bin", "data/sub/deeper/c d.bin"]),
            below: ObjectStoreLocation(bucket: "bkt", key: "data/"), options: Self.options())

        #expect(planned.map(\.key) == ["data/a.txt", "data/sub/b.bin", "data/sub/deeper/c d.bin"], "no folder markers")
        guard case let .download(_, path, url, options) = planned[2] else {
            Issue.record("\(planned[2]) is not a download")
            return
        }
        #expect(path == "sub/deeper/c d.bin")
        #expect(url == "http://127.0.0.1:9000/bkt/data/sub/deeper/c%20d.bin")
        #expect(options.destination == .below("/tmp/out", subdirectory: "sub/deeper", name: "c d.bin"))
        #expect(options.awsSignature == store.signature)
        #expect(options.headers == ["X-Trace: 1", "x-amz-checksum-mode: ENABLED"])
        // The listed object, whose size asks a small one whole (`DownloadJob.isListedSmall`) and whose size, ETag
        // and date judge a file already in place (`DownloadJob.listedExisting`), which gets its date.
        #expect(options.listed?.size == 10)
        #expect(options.listed?.key == "data/sub/deeper/c d.bin")
        #expect(options.setsRemoteTime)
        let scope = try #require(options.credentialScope)
        #expect(scope.permits(.awsSignature, to: "http://127.0.0.1:9000/bkt/other"))
        #expect(!scope.permits(.awsSignature, to: "http://127.0.0.1:9001/bkt/data/a.txt"))
        #expect(!scope.permits(.header, to: "https://bkt.s3.us-east-1.amazonaws.com/data/a.txt"))
    }

    @Test(
        "A listed object is evidence: its size, its date to the second, and its ETag's MD5 unless uploaded in parts",
        arguments: [
            ("\"9e107d9d372bb6826bd81d3542a419d6\"", "9e107d9d372bb6826bd81d3542a419d6"),
            ("\"9e107d9d372bb6826bd81d3542a419d6-3\"", nil),
            ("W/\"9e107d9d372bb6826bd81d3542a419d6\"", nil),
            ("\"not-an-md5\"", nil),
        ] as [(String, String?)]
    )
    func listedEvidence(entityTag: String, md5: String?) {
        let object = ObjectStore.Object(
            key: "data/a.bin", size: 43, entityTag: entityTag, lastModified: "1994-11-06T08:49:37.250Z")

        let resource = object.resource(at: "http://127.0.0.1:9000/bkt/data/a.bin")

        #expect(resource.length == 43)
        #expect(resource.etag == entityTag)
        #expect(resource.lastModified == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(resource.digests.map(\.hex) == (md5.map { [$0] } ?? []))
        #expect(resource.digests.allSatisfy { $0.algorithm == .md5 && $0.source == .entityTag })
    }

    @Test("An object is cut in pieces of 8 MiB at least: one GET for a small one, several connections for a large one")
    func pieces() {
        func cut(_ size: Int64, connections: Int = 8, automatic: Bool = false) -> (Int, Int) {
            var options = DownloadOptions()
            options.connections = connections
            options.automaticConnections = automatic
            ObjectStore.cut(&options, size: size)
            return (options.connections, options.piecesPerConnection)
        }
        #expect(cut(0) == (1, 1))
        #expect(cut(256 << 10) == (1, 1))
        #expect(cut(8 << 20) == (1, 1))
        #expect(cut(20 << 20) == (2, 1))
        #expect(cut(100 << 20) == (8, 1))
        #expect(cut(1 << 30) == (8, 4))
        #expect(cut(1 << 30, connections: 2) == (2, 4))
        #expect(cut(100 << 20, automatic: true) == (8, 4), "automatic connections choose for themselves")
        #expect(cut(3 << 20, automatic: true) == (1, 1), "below 64 MiB, the pieces' count: one GET")
        #expect(cut(20 << 20, automatic: true) == (2, 1))
        #expect(cut(63 << 20, automatic: true) == (7, 1))
    }

    @Test("A key is a server's name: made safe, and refused when it would leave the directory or clash")
    func hostileKeys() throws {
        let planned = try ObjectStore().plan(
            Self.objects([
                "p/../../etc/passwd", "p//x", "p/\u{202E}gnp.exe", "p/ctl\u{1B}[2J.txt", "p/-rf", "p/a:b", "p/a_b",
                "p/f", "p/f/g", "p/h/i", "p/h", "p/x//y",
            ]),
            below: ObjectStoreLocation(bucket: "b", key: "p/"), options: Self.options())

        var outcomes: [String: String] = [:]
        for object in planned {
            switch object {
            case let .download(key, path, _, _): outcomes[key] = path
            case let .refused(key, error):
                #expect(error.code == .usage)
                outcomes[key] = "refused: " + error.message
            }
        }
        #expect(outcomes["p/../../etc/passwd"]?.contains("has a '..' component") == true)
        #expect(outcomes["p//x"]?.contains("is an absolute path") == true)
        #expect(outcomes["p/x//y"]?.contains("has an empty component") == true)
        #expect(outcomes["p/\u{202E}gnp.exe"] == "gnp.exe")
        #expect(outcomes["p/ctl\u{1B}[2J.txt"] == "ctl_[2J.txt")
        #expect(outcomes["p/-rf"] == "_-rf")
        #expect(outcomes["p/a:b"] == "a_b")
        #expect(outcomes["p/a_b"]?.contains("would be saved as a_b, as the key 'p/a:b' is") == true)
        #expect(outcomes["p/f"] == "f")
        #expect(outcomes["p/f/g"]?.contains("f is a file, for the key 'p/f'") == true)
        #expect(outcomes["p/h/i"] == "h/i")
        #expect(outcomes["p/h"]?.contains("h is a directory, for the key 'p/h/i'") == true)
        #expect(!outcomes.values.contains { $0.unicodeScalars.contains { $0 == "\u{202E}" || $0 == "\u{1B}" } })
    }

    @Test("Keys are compared by their bytes: a combining mark after the prefix, or two spellings of one name")
    func keysAsBytes() throws {
        let nfc = "p/caf\u{E9}.txt"
        let nfd = "p/cafe\u{301}.txt"
        let planned = try ObjectStore().plan(
            Self.objects(["p/\u{301}comb.txt", nfc, nfd, "p/.gitattributes", "p/.git/config"]),
            below: ObjectStoreLocation(bucket: "b", key: "p/"), options: Self.options())
        var paths: [[UInt8]] = []
        for object in planned {
            guard case let .download(_, path, _, _) = object else {
                Issue.record("\(object.key) was refused")
                continue
            }
            paths.append(Array(path.utf8))
        }
        #expect(
            paths == [
                Array("\u{301}comb.txt".utf8), Array("caf\u{E9}.txt".utf8), Array("cafe\u{301}.txt".utf8),
                Array(".gitattributes".utf8), Array(".git/config".utf8),
            ])
    }

    @Test("The filter sees the key below the prefix; a prefix is saved into a directory only")
    func filterAndDestination() throws {
        let prefix = ObjectStoreLocation(bucket: "b", key: "m/")
        let filter = ObjectKeyFilter(includes: ["*.json"], excludes: ["onnx/*"])
        let planned = try ObjectStore().plan(
            Self.objects(["m/config.json", "m/onnx/config.json", "m/model.bin"]), below: prefix, filter: filter,
            options: Self.options())
        #expect(planned.map(\.key) == ["m/config.json"])

        var toFile = Self.options()
        toFile.destination = .file("/tmp/one")
        #expect(throws: BraidError.self) { try ObjectStore().plan([], below: prefix, options: toFile) }
        #expect(throws: BraidError.self) {
            try ObjectStore().plan([], below: ObjectStoreLocation(bucket: "b", key: "m"), options: Self.options())
        }
    }

    @Test("One object is saved under its key's last name, made safe, or where -o says")
    func oneObject() throws {
        let store = ObjectStore(endpoint: "http://127.0.0.1:9000")
        let (url, options) = try store.download(
            of: ObjectStoreLocation(bucket: "b", key: "dir/\u{202E}report.pdf"), options: Self.options())
        #expect(url == "http://127.0.0.1:9000/b/dir/%E2%80%AEreport.pdf")
        #expect(options.destination == .below("/tmp/out", subdirectory: "", name: "report.pdf"))
        #expect(options.awsSignature == nil, "no credentials: unsigned")

        var toFile = Self.options()
        toFile.destination = .file("mine.pdf")
        #expect(
            try store.download(of: .init(bucket: "b", key: "k"), options: toFile).options.destination
                == .file("mine.pdf"))
    }

    @Test("A store's error says S3's code and what would help")
    func failures() {
        func failure(_ store: ObjectStore, _ status: Int, _ body: String, headers: [String] = [])
            -> BraidError
        {
            var response = ObjectStore.Response(headers: ResponseHeaders(), body: Array(body.utf8))
            response.headers.consume(line: "HTTP/1.1 \(status) X\r\n")
            for header in headers { response.headers.consume(line: header + "\r\n") }
            return store.failure(response, doing: "listing s3://b/p/")
        }
        let signed = ObjectStore(credentials: Self.credentials)
        let wrongKey = failure(
            signed, 403,
            "<Error><Code>InvalidAccessKeyId</Code><Message>The AWS Access Key Id you provided does not exist in our "
                + "records.</Message></Error>")
        #expect(
            wrongKey.message
                == "listing s3://b/p/: InvalidAccessKeyId: The AWS Access Key Id you provided does not exist in our "
                + "records. (HTTP 403)")
        #expect(wrongKey.code == .protocolViolation && wrongKey.httpStatus == 403)
        #expect(wrongKey.remedies == [.objectStoreCredentials])

        let unsigned = failure(
            ObjectStore(), 403, "<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>")
        #expect(unsigned.message.hasSuffix("(HTTP 403); the request was not signed, as no credentials were given"))

        let region = failure(
            signed, 301, "<Error><Code>PermanentRedirect</Code><Message>Use the endpoint.</Message></Error>",
            headers: ["x-amz-bucket-region: eu-west-1"])
        #expect(region.message.hasSuffix("; the bucket is in eu-west-1") && region.remedies == [.objectStoreRegion])

        let missing = failure(signed, 404, "<Error><Code>NoSuchBucket</Code><Message>No bucket</Message></Error>")
        #expect(missing.message == "listing s3://b/p/: NoSuchBucket: No bucket (HTTP 404)" && missing.remedies.isEmpty)
        #expect(failure(signed, 500, "<html>oops</html>").message == "listing s3://b/p/: HTTP 500")
    }
}
