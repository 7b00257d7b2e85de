import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

/// Running `braid s3://BUCKET/PREFIX/ -d DIR` again, against moto: files already in place are shown to be their
/// objects by what the listing says (an MD5 `ETag`, or the size and `LastModified`), with no request per object;
/// a file whose object changed is not taken for complete; and the listing itself is logged and bounded in time as
/// any request is (against a server that stalls), its failure saying it was the listing.
@Suite("braid s3:// listings and reruns", .serialized)
struct ObjectStoreRerunTests {
    /// Bucket `rerun`: five single-part objects under `data/` (their `ETag`s MD5s) and one of 6 MiB uploaded in
    /// two parts (its `ETag` `…-2`, no digest of its bytes), all made an hour old, so that an object replaced
    /// during a test is newer by more than the second a date resolves. Appends that time (seconds since 1970),
    /// then records the requests that come after.
    static let setup = """
        \(uploadInParts)
        from datetime import datetime, timedelta, timezone
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.s3.models import s3_backends
        s3.create_bucket(Bucket="rerun")
        rng = random.Random(2029)
        for i in range(5):
            s3.put_object(Bucket="rerun", Key=f"data/small-{i}.bin", Body=rng.randbytes(1000 + i))
        upload_in_parts("data/multi.bin", rng.randbytes(6 << 20))
        hour_ago = (datetime.now(timezone.utc) - timedelta(hours=1)).replace(microsecond=0)
        bucket = s3_backends[DEFAULT_ACCOUNT_ID]["aws"].buckets["rerun"]
        for name in list(bucket.keys.keys()):
            bucket.keys[name].last_modified = hour_ago.replace(tzinfo=None)
        ready.append(str(int(hour_ago.timestamp())))
        record_requests()
        """

    /// Uploads `data` to `key` in parts of 5 MiB, as a multipart upload: its `ETag` is then no MD5 of the bytes.
    /// Python, for the scripts below, which have `s3`, a client of moto's.
    static let uploadInParts = """
        def upload_in_parts(key, data):
            upload = s3.create_multipart_upload(Bucket="rerun", Key=key)["UploadId"]
            parts = []
            for number, start in enumerate(range(0, len(data), 5 << 20), start=1):
                part = s3.upload_part(Bucket="rerun", Key=key, PartNumber=number, UploadId=upload,
                                      Body=data[start:start + (5 << 20)])
                parts.append({"PartNumber": number, "ETag": part["ETag"]})
            s3.complete_multipart_upload(Bucket="rerun", Key=key, UploadId=upload, MultipartUpload={"Parts": parts})
        """

    /// Replaces `data/small-0.bin` and the multipart `data/multi.bin` with other bytes of the same sizes, as the
    /// same uploads (single-part, two parts) made now.
    static let replace = """
        import random, sys, boto3
        from botocore.config import Config
        s3 = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1", aws_access_key_id="setup",
                          aws_secret_access_key="setup", config=Config(signature_version="s3v4"))
        \(uploadInParts)
        rng = random.Random(2030)
        s3.put_object(Bucket="rerun", Key="data/small-0.bin", Body=rng.randbytes(1000))
        upload_in_parts("data/multi.bin", rng.randbytes(6 << 20))
        open(sys.argv[2], "wb").write(s3.get_object(Bucket="rerun", Key="data/small-0.bin")["Body"].read())
        open(sys.argv[3], "wb").write(s3.get_object(Bucket="rerun", Key="data/multi.bin")["Body"].read())
        """

    static let names = ["multi.bin"] + (0..<5).map { "small-\($0).bin" }

    /// The modification time of the file at `path`, in seconds since 1970.
    static func modified(_ path: String) throws -> Double? {
        (try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date)?.timeIntervalSince1970
    }

    /// Whether `request` is one of the listing's: a GET of the bucket itself, its query left aside.
    static func isListing(_ request: MotoServer.Request) -> Bool {
        request.method == "GET" && (request.path == "/rerun/" || request.path == "/rerun")
    }

    @Test("a rerun with every file in place costs the listing alone: each file is shown to be its listed object")
    func rerunCostsTheListing() async throws {
        try #require(await MotoS3Tests.isAvailable(), "python3 with moto[server] and boto3: run scripts/install-deps")
        let directory = try TemporaryDirectory(prefix: "braid-s3-rerun")
        defer { directory.remove() }
        let moto = try await MotoServer.start(setup: Self.setup, in: directory)
        defer { moto.stop() }
        let hourAgo = try #require(Double(moto.values.first ?? ""))
        let out = directory.appending("out")
        let arguments = ["s3://rerun/data/", "-d", out.path, "--no-fsync", "--json"]

        let first = try await BraidCLI.run(arguments, environment: moto.environment())
        #expect(first.status == .exited(0), "\(first.standardError.suffix(2000))")
        // Each file has its object's LastModified, as `aws s3 cp` leaves it: what a rerun compares with.
        for name in Self.names {
            #expect(try Self.modified(out.appendingPathComponent(name).path) == hourAgo, "\(name)")
        }
        let firstRequests = try moto.requests().count

        let again = try await BraidCLI.run(arguments, environment: moto.environment())

        #expect(again.status == .exited(0), "\(again.standardError.suffix(2000))")
        let rerun = try moto.requests().dropFirst(firstRequests)
        #expect(
            rerun.count == 1 && rerun.allSatisfy(Self.isListing),
            "\(rerun.map { "\($0.method) \($0.path)" })")
        let events = try JSONEvents(again.standardOutput)
        let notices = events.named("notice").compactMap { $0["message"] as? String }
        for index in 0..<5 {
            #expect(notices.contains { $0.hasSuffix("/small-\(index).bin is already complete (md5 verified)") })
        }
        #expect(
            notices.contains { $0.hasSuffix("/multi.bin is already complete (length and date verified)") },
            "\(notices)")
        #expect(events.named("done").filter { $0["skipped"] as? Bool == true }.count == 6)
    }

    @Test(
        "a rerun after objects were replaced by others of the same size refuses their stale files; --force fetches them"
    )
    func replacedObjects() async throws {
        try #require(await MotoS3Tests.isAvailable(), "python3 with moto[server] and boto3: run scripts/install-deps")
        let directory = try TemporaryDirectory(prefix: "braid-s3-replaced")
        defer { directory.remove() }
        let moto = try await MotoServer.start(setup: Self.setup, in: directory)
        defer { moto.stop() }
        let out = directory.appending("out")
        let arguments = ["s3://rerun/data/", "-d", out.path, "--no-fsync"]
        let first = try await BraidCLI.run(arguments, environment: moto.environment())
        #expect(first.status == .exited(0), "\(first.standardError.suffix(2000))")
        let stale = try Self.names.map { try Data(contentsOf: out.appendingPathComponent($0)) }
        let newSmall = directory.appending("small-0.new").path
        let newMulti = directory.appending("multi.new").path
        let replaced = try await ChildProcess.run(
            "python3", ["-c", Self.replace, moto.endpoint, newSmall, newMulti])
        try #require(replaced.status == .exited(0), "\(replaced.standardError)")

        let again = try await BraidCLI.run(arguments, environment: moto.environment())

        #expect(again.status == .exited(8), "\(again.standardError.suffix(2000))")
        #expect(!again.standardError.contains("multi.bin is already complete"), "\(again.standardError)")
        #expect(!again.standardError.contains("small-0.bin is already complete"), "\(again.standardError)")
        #expect(again.standardError.contains("multi.bin exists"), "\(again.standardError)")
        #expect(again.standardError.contains("small-0.bin exists"), "\(again.standardError)")
        #expect(again.standardError.contains("use --force to replace it"))
        // Refused, not replaced: the stale files stay as they were until the user says otherwise.
        #expect(try Self.names.map { try Data(contentsOf: out.appendingPathComponent($0)) } == stale)

        let forced = try await BraidCLI.run(arguments + ["--force"], environment: moto.environment())

        #expect(forced.status == .exited(0), "\(forced.standardError.suffix(2000))")
        #expect(
            try Data(contentsOf: out.appendingPathComponent("multi.bin"))
                == Data(contentsOf: URL(fileURLWithPath: newMulti)))
        #expect(
            try Data(contentsOf: out.appendingPathComponent("small-0.bin"))
                == Data(contentsOf: URL(fileURLWithPath: newSmall)))
    }

    @Test("-vv logs the listing's requests as it logs every other")
    func verboseListing() async throws {
        try #require(await MotoS3Tests.isAvailable(), "python3 with moto[server] and boto3: run scripts/install-deps")
        let directory = try TemporaryDirectory(prefix: "braid-s3-vv")
        defer { directory.remove() }
        let moto = try await MotoServer.start(setup: Self.setup, in: directory)
        defer { moto.stop() }

        let run = try await BraidCLI.run(
            ["s3://rerun/data/", "-d", directory.appending("out").path, "--no-fsync", "-vv"],
            environment: moto.environment())

        #expect(run.status == .exited(0), "\(run.standardError.suffix(2000))")
        let lines = run.standardError.split(separator: "\n")
        #expect(
            lines.contains {
                $0.contains("request") && $0.contains("\(moto.endpoint)/rerun/?") && $0.contains("list-type=2")
            },
            "\(run.standardError.prefix(3000))")
    }

    @Test(
        "a listing that stalls fails as a download does, within the stall timeout and tries, saying it was the listing")
    func stalledListing() async throws {
        // Accepts the connection and reads the request, then says nothing for an hour.
        let server = TestServer(routes: ["/stalled/": .init(size: 10, faults: [.latency(.seconds(3600))])])
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-s3-stalled")
        defer { directory.remove() }
        let clock = ContinuousClock()
        let started = clock.now

        let run = try await BraidCLI.run(
            ["s3://stalled/p/", "-d", directory.appending("out").path, "--stall-timeout", "1", "--max-tries", "2"],
            environment: [
                "AWS_ENDPOINT_URL": server.baseURL, "AWS_ENDPOINT_URL_S3": "", "AWS_REGION": "us-east-1",
                "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "",
            ])

        let elapsed = clock.now - started
        #expect(run.status == .exited(4), "\(run.standardError)")
        #expect(run.standardError.contains("listing s3://stalled/p/: "), "\(run.standardError)")
        // Two attempts of one second each and a backoff, not the default 30 s a try.
        #expect(elapsed < .seconds(15), "\(elapsed)")
        #expect(server.connectionsAccepted >= 1, "the listing went to the stalled server")
    }
}
