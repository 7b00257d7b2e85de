import BraidTestSupport
import Foundation
import Testing

/// What braid asks of S3 for each object of a prefix, counted at moto: an object the listing says fits in the first
/// piece is one GET of the whole object, with no `Range` (S3 sends an object's checksums with no ranged GET, though
/// moto does with one that covers the object), and is still held to its `x-amz-checksum-sha256` or its `ETag`'s MD5
/// from that GET's headers; a larger one is asked with a `HEAD` first, as before (issue 28).
@Suite("An S3 object's first request, against moto", .serialized)
struct ObjectStoreFirstRequestTests {
    /// Bucket `braid`, under `data/`: 40 small objects, every other one with a SHA-256 checksum (the rest with the
    /// CRC32 boto3 adds, which braid does not check), an empty one, one of exactly the first piece (1 MiB), one
    /// small multipart upload of one part (its ETag and checksum no digests of its bytes), a 3 MiB object with a
    /// SHA-256 checksum and a 6 MiB multipart upload. Under `bad/`, two small objects whose stored checksum and ETag
    /// moto has lost: `sha256.bin`'s SHA-256 and `md5.bin`'s ETag are of other bytes. Every object of `data/` is
    /// also written below the directory given. Requests are recorded from the end of the setup on.
    static let setup = """
        import base64, hashlib
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.s3.models import s3_backends
        expected = arguments[0]
        s3.create_bucket(Bucket="braid")
        rng = random.Random(28)
        def put(key, body, **extra):
            s3.put_object(Bucket="braid", Key=key, Body=body, **extra)
            keep(key, body)
        def keep(key, body):
            if key.startswith("data/"):
                path = os.path.join(expected, key[len("data/"):])
                os.makedirs(os.path.dirname(path), exist_ok=True)
                open(path, "wb").write(body)
        def multipart(key, parts):
            upload = s3.create_multipart_upload(Bucket="braid", Key=key, ChecksumAlgorithm="SHA256")["UploadId"]
            done = []
            for number, body in enumerate(parts, start=1):
                part = s3.upload_part(Bucket="braid", Key=key, PartNumber=number, UploadId=upload, Body=body,
                                      ChecksumAlgorithm="SHA256")
                done.append({"PartNumber": number, "ETag": part["ETag"], "ChecksumSHA256": part["ChecksumSHA256"]})
            s3.complete_multipart_upload(Bucket="braid", Key=key, UploadId=upload, MultipartUpload={"Parts": done})
            keep(key, b"".join(parts))
        for i in range(40):
            extra = {"ChecksumAlgorithm": "SHA256"} if i % 2 else {}
            put(f"data/small/s{i:02}.bin", rng.randbytes(rng.randrange(1, 300_000)), **extra)
        put("data/small/empty.bin", b"", ChecksumAlgorithm="SHA256")
        put("data/small/edge.bin", rng.randbytes(1 << 20), ChecksumAlgorithm="SHA256")
        multipart("data/small/one-part.bin", [rng.randbytes(100_000)])
        put("data/large/sha256.bin", rng.randbytes(3 << 20), ChecksumAlgorithm="SHA256")
        multipart("data/large/multi.bin", [rng.randbytes(5 << 20), rng.randbytes(1 << 20)])
        s3.put_object(Bucket="braid", Key="bad/sha256.bin", Body=rng.randbytes(50_000), ChecksumAlgorithm="SHA256")
        s3.put_object(Bucket="braid", Key="bad/md5.bin", Body=rng.randbytes(50_000))
        backend = s3_backends[DEFAULT_ACCOUNT_ID]["aws"]
        backend.get_object("braid", "bad/sha256.bin").checksum_value = base64.b64encode(
            hashlib.sha256(b"other bytes").digest()).decode()
        backend.get_object("braid", "bad/md5.bin")._etag = hashlib.md5(b"other bytes").hexdigest()
        record_requests()
        """

    /// The requests moto served for the object `key` of bucket `braid`.
    static func requests(for key: String, in requests: [MotoServer.Request]) -> [MotoServer.Request] {
        requests.filter { $0.path == "/braid/" + key }
    }

    @Test("each object that fits in the first piece is one GET of all of it, still verified as S3 vouches for it")
    func smallObjectsAreOneRequest() async throws {
        try #require(await MotoS3Tests.isAvailable(), "python3 with moto[server] and boto3: run scripts/install-deps")
        let directory = try TemporaryDirectory(prefix: "braid-s3-first")
        defer { directory.remove() }
        let expectedDirectory = directory.appending("expected")
        let moto = try await MotoServer.start(setup: Self.setup, arguments: [expectedDirectory.path], in: directory)
        defer { moto.stop() }
        let expected = try ObjectStorePrefixTests.files(below: expectedDirectory)
        #expect(expected.count == 45)

        let out = directory.appending("out")
        let run = try await BraidCLI.run(
            ["s3://braid/data/", "-d", out.path, "-j", "8", "--no-fsync", "--json"], environment: moto.environment())

        #expect(run.status == .exited(0), "\(run.standardError.suffix(3000))")
        #expect(try ObjectStorePrefixTests.files(below: out) == expected)
        let requests = try moto.requests()
        let small = expected.keys.filter { $0.hasPrefix("small/") }
        #expect(small.count == 43)
        for path in small {
            let asked = Self.requests(for: "data/" + path, in: requests)
            #expect(asked.count == 1, "\(path): \(asked.map(\.method))")
            #expect(asked.first?.method == "GET", "\(path)")
            #expect(asked.first?.headers["range"] == nil, "\(path): \(asked.first?.headers["range"] ?? "")")
            #expect(asked.first?.headers["x-amz-checksum-mode"] == "ENABLED", "\(path)")
        }
        // The large objects are asked with a HEAD first, which alone carries their checksums.
        for path in ["large/sha256.bin", "large/multi.bin"] {
            let asked = Self.requests(for: "data/" + path, in: requests)
            #expect(asked.first?.method == "HEAD", "\(path): \(asked.map(\.method))")
            #expect(asked.dropFirst().allSatisfy { $0.method == "GET" && $0.headers["range"] != nil }, "\(path)")
        }

        let verified = try JSONEvents(run.standardOutput).named("verified")
        func source(of path: String) -> String? {
            verified.first { ($0["path"] as? String)?.hasSuffix("/" + path) == true }.map {
                "\($0["algorithm"] ?? "") \($0["source"] ?? "")"
            }
        }
        #expect(verified.count == 45)
        for i in 0..<40 {
            let path = "small/s\(i < 10 ? "0" : "")\(i).bin"
            #expect(
                source(of: path) == (i % 2 == 1 ? "sha-256 x-amz-checksum-sha256" : "md5 ETag"),
                "\(path): \(source(of: path) ?? "none")")
        }
        #expect(source(of: "small/edge.bin") == "sha-256 x-amz-checksum-sha256")
        #expect(source(of: "small/empty.bin") == "sha-256 x-amz-checksum-sha256")
        #expect(source(of: "large/sha256.bin") == "sha-256 x-amz-checksum-sha256")
        // A multipart upload's ETag and composite checksum are no digests of its bytes: its length is checked.
        #expect(
            source(of: "small/one-part.bin")?.hasPrefix("length ") == true, "\(source(of: "small/one-part.bin") ?? "")")
        #expect(source(of: "large/multi.bin")?.hasPrefix("length ") == true, "\(source(of: "large/multi.bin") ?? "")")
    }

    @Test("a small object whose one GET carries a checksum or ETag of other bytes is refused, nothing at its name")
    func mismatchIsRefused() async throws {
        try #require(await MotoS3Tests.isAvailable(), "python3 with moto[server] and boto3: run scripts/install-deps")
        let directory = try TemporaryDirectory(prefix: "braid-s3-bad")
        defer { directory.remove() }
        let moto = try await MotoServer.start(
            setup: Self.setup, arguments: [directory.appending("expected").path], in: directory)
        defer { moto.stop() }

        let out = directory.appending("out")
        let run = try await BraidCLI.run(
            ["s3://braid/bad/", "-d", out.path, "--no-fsync"], environment: moto.environment())

        #expect(run.status == .exited(6), "\(run.standardError)")
        #expect(run.standardError.contains("sha-256"), "\(run.standardError)")
        #expect(run.standardError.contains("md5"), "\(run.standardError)")
        for name in ["sha256.bin", "md5.bin"] {
            #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent(name).path), "\(name)")
            let asked = Self.requests(for: "bad/" + name, in: try moto.requests())
            #expect(asked.first?.method == "GET" && asked.first?.headers["range"] == nil, "\(name): \(asked)")
            #expect(!asked.contains { $0.method == "HEAD" }, "\(name): \(asked.map(\.method))")
        }
    }
}
