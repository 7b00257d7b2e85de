import BraidTestSupport
import Foundation
import Testing

/// Downloads from moto, the S3 stand-in, as it really answers: the `ETag` of a single-part upload is its MD5, a
/// full-object `x-amz-checksum-sha256` (sent when asked with `x-amz-checksum-mode: ENABLED`) is a SHA-256, and the
/// digests of a multipart upload or an object under KMS are not taken for the file's.
@Suite("braid against moto's S3")
struct MotoS3Tests {
    /// Whether `python3` can import moto's server and boto3.
    static let isAvailable: Bool = {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import boto3, moto.server"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }()

    /// Starts moto on a free port, fills bucket `braid` and prints the bucket's URL, then waits to be stopped.
    static let script = """
        import random, socket, sys, time
        import boto3
        from moto.server import ThreadedMotoServer
        probe = socket.socket(); probe.bind(("127.0.0.1", 0)); port = probe.getsockname()[1]; probe.close()
        ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False).start()
        endpoint = f"http://127.0.0.1:{port}"
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id="test", aws_secret_access_key="test")
        s3.create_bucket(Bucket="braid")
        data = random.Random(7).randbytes(3 << 20)
        big = data + data
        open(sys.argv[1], "wb").write(data)
        open(sys.argv[2], "wb").write(big)
        s3.put_object(Bucket="braid", Key="plain.bin", Body=data, ACL="public-read")
        s3.put_object(Bucket="braid", Key="sha256.bin", Body=data, ACL="public-read", ChecksumAlgorithm="SHA256")
        s3.put_object(Bucket="braid", Key="kms.bin", Body=data, ACL="public-read", ServerSideEncryption="aws:kms")
        upload = s3.create_multipart_upload(Bucket="braid", Key="multi.bin", ACL="public-read",
                                            ChecksumAlgorithm="SHA256")["UploadId"]
        parts = []
        for number, chunk in enumerate([big[:5 << 20], big[5 << 20:]], start=1):
            part = s3.upload_part(Bucket="braid", Key="multi.bin", PartNumber=number, UploadId=upload, Body=chunk,
                                  ChecksumAlgorithm="SHA256")
            parts.append({"PartNumber": number, "ETag": part["ETag"], "ChecksumSHA256": part["ChecksumSHA256"]})
        s3.complete_multipart_upload(Bucket="braid", Key="multi.bin", UploadId=upload,
                                     MultipartUpload={"Parts": parts})
        print(endpoint + "/braid", flush=True)
        time.sleep(600)
        """

    /// (object, extra arguments, what the final line says was verified)
    static let cases: [(String, [String], String)] = [
        ("plain.bin", [], "md5 verified against ETag"),
        ("sha256.bin", ["-H", "x-amz-checksum-mode: ENABLED"], "sha-256 verified against x-amz-checksum-sha256"),
        ("kms.bin", [], "length verified"),
        ("multi.bin", ["-H", "x-amz-checksum-mode: ENABLED"], "length verified"),
    ]

    @Test("each object is downloaded whole, verified by the digest S3 vouches for and no other")
    func objects() async throws {
        // scripts/install-deps (run by scripts/test and CI) installs moto; without it the test fails, not skips.
        try #require(Self.isAvailable, "python3 with moto[server] and boto3: run scripts/install-deps")
        let directory = try TemporaryDirectory(prefix: "braid-moto")
        defer { directory.remove() }
        let single = directory.appending("single.expected").path
        let multi = directory.appending("multi.expected").path
        // Not moto.py, which Python would import as moto.
        let scriptPath = directory.appending("serve_moto.py").path
        try Self.script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        let moto = try ChildProcess("/usr/bin/env", ["python3", scriptPath, single, multi])
        defer { _ = moto.stop() }
        try await Polling.until(
            "moto to print its URL", timeout: .seconds(60), evidence: { moto.standardOutput + moto.standardError }
        ) {
            if let status = moto.status {
                throw TestSupportError.exitedEarly("moto", status: status, evidence: moto.standardError)
            }
            return moto.standardOutput.hasSuffix("\n")
        }
        let bucket = moto.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)

        for (object, arguments, line) in Self.cases {
            let output = directory.appending(object).path
            let run = try await BraidCLI.run(["\(bucket)/\(object)", "-o", output, "--no-fsync"] + arguments)

            #expect(run.status == .exited(0), "\(object): \(run.standardError)")
            #expect(run.standardError.contains(line), "\(object): \(run.standardError)")
            let expected = try Data(contentsOf: URL(fileURLWithPath: object == "multi.bin" ? multi : single))
            #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == expected, "\(object)")
        }
    }
}
