import BraidTestSupport
import Foundation
import Testing

/// Downloads from moto, the S3 stand-in, as it really answers: the `ETag` of a single-part upload is its MD5, a
/// full-object `x-amz-checksum-sha256` (sent when asked with `x-amz-checksum-mode: ENABLED`) is a SHA-256, and the
/// digests of a multipart upload or an object under KMS are not taken for the file's. moto (5.2, server mode)
/// checks neither the signature nor the expiry of a presigned URL, and answers `HEAD` on one: expiry, and a signed
/// URL that refuses `HEAD`, are tested against the test server's signed URLs in `SignedURLTests`.
@Suite("braid against moto's S3")
struct MotoS3Tests {
    /// Whether `python3` can import moto's server and boto3. Asked through an awaited child process rather than a
    /// blocking wait: the first import compiles moto, seconds on a fresh machine, and a blocked thread of the
    /// cooperative pool would stall every other test meanwhile.
    static func isAvailable() async -> Bool {
        guard let run = try? await ChildProcess.run("python3", ["-c", "import boto3, moto.server"]) else {
            return false
        }
        return run.status == .exited(0)
    }

    /// Starts moto on a free port, fills bucket `braid`, prints the bucket's URL and on a second line a presigned
    /// (SigV4, query-string) GET URL of the private object `private.bin`, then waits to be stopped.
    static let script = """
        import random, socket, sys, time
        import boto3
        from botocore.config import Config
        from moto.server import ThreadedMotoServer
        probe = socket.socket(); probe.bind(("127.0.0.1", 0)); port = probe.getsockname()[1]; probe.close()
        ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False).start()
        endpoint = f"http://127.0.0.1:{port}"
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id="test", aws_secret_access_key="test",
                          config=Config(signature_version="s3v4"))
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
        s3.put_object(Bucket="braid", Key="private.bin", Body=data)
        presigned = s3.generate_presigned_url("get_object", Params={"Bucket": "braid", "Key": "private.bin"},
                                              ExpiresIn=600)
        print(endpoint + "/braid", flush=True)
        print(presigned, flush=True)
        time.sleep(600)
        """

    /// (object, extra arguments, what the final line says was verified)
    static let cases: [(String, [String], String)] = [
        ("plain.bin", [], "md5 verified against ETag"),
        ("sha256.bin", ["-H", "x-amz-checksum-mode: ENABLED"], "sha-256 verified against x-amz-checksum-sha256"),
        ("kms.bin", [], "length verified"),
        ("multi.bin", ["-H", "x-amz-checksum-mode: ENABLED"], "length verified"),
    ]

    @Test("each object, and a presigned URL, is downloaded whole, verified by the digest S3 vouches for and no other")
    func objects() async throws {
        // scripts/install-deps (run by scripts/test and CI) installs moto; without it the test fails, not skips.
        try #require(await Self.isAvailable(), "python3 with moto[server] and boto3: run scripts/install-deps")
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
            return moto.standardOutput.split(separator: "\n").count == 2 && moto.standardOutput.hasSuffix("\n")
        }
        let lines = moto.standardOutput.split(separator: "\n").map(String.init)
        let bucket = lines[0]

        for (object, arguments, line) in Self.cases {
            let output = directory.appending(object).path
            let run = try await BraidCLI.run(["\(bucket)/\(object)", "-o", output, "--no-fsync"] + arguments)

            #expect(run.status == .exited(0), "\(object): \(run.standardError)")
            #expect(run.standardError.contains(line), "\(object): \(run.standardError)")
            let expected = try Data(contentsOf: URL(fileURLWithPath: object == "multi.bin" ? multi : single))
            #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == expected, "\(object)")
        }

        // A presigned GET URL, as S3 hands them out: its query is its credentials, signed for GET.
        let presigned = lines[1]
        #expect(presigned.contains("X-Amz-Signature=") && presigned.contains("X-Amz-Expires=600"))
        let output = directory.appending("private.bin").path
        let run = try await BraidCLI.run([presigned, "-o", output, "--no-fsync"])
        #expect(run.status == .exited(0), "presigned: \(run.standardError)")
        #expect(run.standardError.contains("md5 verified against ETag"), "presigned: \(run.standardError)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == Data(contentsOf: URL(fileURLWithPath: single)))
    }
}
