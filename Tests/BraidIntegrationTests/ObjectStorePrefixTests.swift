import Braid
import BraidTestSupport
import Foundation
import Testing

/// `braid s3://BUCKET/PREFIX/ -d DIR` against moto, the S3 stand-in: a prefix of a few hundred objects listed page
/// by page and downloaded whole, into their keys' paths, verified by what S3 vouches for; filters; keys that are
/// hostile names; and a store that checks every signature, refusing wrong credentials with S3's own reason.
@Suite("braid s3:// prefixes against moto", .serialized)
struct ObjectStorePrefixTests {
    /// Bucket `braid`: 300 small objects under `data/` in nested "directories", one of 12 MiB uploaded in three
    /// parts (its ETag `…-3` no MD5, its SHA-256 checksum a composite), one with a full-object SHA-256, folder
    /// markers, an object outside the prefix, and under `hostile/` keys that would leave the directory or hide
    /// what they are. Every object of `data/` is also written below the directory given, as it should arrive.
    static let setup = """
        expected = arguments[0]
        s3.create_bucket(Bucket="braid")
        rng = random.Random(2028)
        def put(key, body, **extra):
            s3.put_object(Bucket="braid", Key=key, Body=body, **extra)
            if key.startswith("data/") and not key.endswith("/"):
                path = os.path.join(expected, key[len("data/"):])
                os.makedirs(os.path.dirname(path), exist_ok=True)
                open(path, "wb").write(body)
        for i in range(300):
            put(f"data/d{i % 7}/s{i % 3}/object-{i:03}.bin", rng.randbytes(rng.randrange(1, 4096)))
        put("data/d0/", b"")
        put("data/sha256.bin", rng.randbytes(100_000), ChecksumAlgorithm="SHA256")
        put("elsewhere/x.bin", b"not below the prefix")
        big = rng.randbytes(12 << 20)
        upload = s3.create_multipart_upload(Bucket="braid", Key="data/big/multi.bin",
                                            ChecksumAlgorithm="SHA256")["UploadId"]
        parts = []
        for number, start in enumerate(range(0, len(big), 5 << 20), start=1):
            part = s3.upload_part(Bucket="braid", Key="data/big/multi.bin", PartNumber=number, UploadId=upload,
                                  Body=big[start:start + (5 << 20)], ChecksumAlgorithm="SHA256")
            parts.append({"PartNumber": number, "ETag": part["ETag"], "ChecksumSHA256": part["ChecksumSHA256"]})
        s3.complete_multipart_upload(Bucket="braid", Key="data/big/multi.bin", UploadId=upload,
                                     MultipartUpload={"Parts": parts})
        os.makedirs(os.path.join(expected, "big"), exist_ok=True)
        open(os.path.join(expected, "big", "multi.bin"), "wb").write(big)
        for key in ["hostile/../escaped.txt", "hostile/../../../tmp/escaped.txt", "hostile/\\u202Etxt.exe",
                    "hostile/term\\x1b[2J.txt", "hostile/fine.txt"]:
            s3.put_object(Bucket="braid", Key=key, Body=key.encode())
        """

    /// Every file below `directory`, by relative path, with its bytes.
    static func files(below directory: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let base = directory.standardizedFileURL.path
        guard let walker = FileManager.default.enumerator(atPath: base) else { return files }
        for case let path as String in walker {
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: base + "/" + path, isDirectory: &isDirectory)
            if !isDirectory.boolValue { files[path] = try Data(contentsOf: URL(fileURLWithPath: base + "/" + path)) }
        }
        return files
    }

    @Test("a prefix of 302 objects arrives byte for byte in its keys' paths, each verified as S3 vouches for it")
    func prefix() async throws {
        try #require(await MotoS3Tests.isAvailable(), "python3 with moto[server] and boto3: run scripts/install-deps")
        let directory = try TemporaryDirectory(prefix: "braid-s3-prefix")
        defer { directory.remove() }
        let expectedDirectory = directory.appending("expected")
        let moto = try await MotoServer.start(setup: Self.setup, arguments: [expectedDirectory.path], in: directory)
        defer { moto.stop() }
        let expected = try Self.files(below: expectedDirectory)
        #expect(expected.count == 302)

        let out = directory.appending("out")
        let run = try await BraidCLI.run(
            ["s3://braid/data/", "-d", out.path, "-j", "8", "--no-fsync", "--json"], environment: moto.environment())

        #expect(run.status == .exited(0), "\(run.standardError.suffix(3000))")
        let downloaded = try Self.files(below: out)
        #expect(Set(downloaded.keys) == Set(expected.keys), "paths")
        let different = expected.filter { downloaded[$0.key] != $0.value }.map(\.key)
        #expect(different.isEmpty, "not byte-identical: \(different.prefix(5))")
        let events = try JSONEvents(run.standardOutput)
        // The folder marker data/d0/ is listed, and is no file.
        #expect(
            events.named("notice").contains {
                let message = $0["message"] as? String ?? ""
                return message.hasPrefix("303 objects, ") && message.hasSuffix(", 302 of them to download")
            })
        // 300 single-part uploads are held to their ETag's MD5, one to its full-object SHA-256, and the multipart
        // upload, whose ETag and composite checksum are no digest of its bytes, to its length.
        let verified = events.named("verified")
        func source(of name: String) -> String? {
            verified.first { ($0["path"] as? String)?.hasSuffix("/" + name) == true }.map {
                "\($0["algorithm"] ?? "") \($0["source"] ?? "")"
            }
        }
        #expect(verified.count == 302)
        #expect(
            verified.filter { $0["algorithm"] as? String == "md5" && $0["source"] as? String == "ETag" }.count == 300)
        #expect(source(of: "sha256.bin") == "sha-256 x-amz-checksum-sha256")
        #expect(source(of: "big/multi.bin")?.hasPrefix("length ") == true, "\(source(of: "big/multi.bin") ?? "none")")

        // Run again: every file is checked in place and nothing is downloaded again.
        let again = try await BraidCLI.run(
            ["s3://braid/data/", "-d", out.path, "-j", "8", "--no-fsync", "--json"], environment: moto.environment())
        #expect(again.status == .exited(0), "\(again.standardError.suffix(2000))")
        let skipped = try JSONEvents(again.standardOutput).named("done").filter { $0["skipped"] as? Bool == true }
        #expect(skipped.count == 302)
    }

    @Test("--include and --exclude choose by the key below the prefix; an exclude wins")
    func filters() async throws {
        try #require(await MotoS3Tests.isAvailable(), "python3 with moto[server] and boto3: run scripts/install-deps")
        let directory = try TemporaryDirectory(prefix: "braid-s3-filter")
        defer { directory.remove() }
        let expectedDirectory = directory.appending("expected")
        let moto = try await MotoServer.start(setup: Self.setup, arguments: [expectedDirectory.path], in: directory)
        defer { moto.stop() }
        let expected = try Self.files(below: expectedDirectory).filter { path, _ in
            (path.hasPrefix("d1/") || path.hasSuffix("-007.bin") || path == "sha256.bin") && !path.contains("/s2/")
        }
        #expect(expected.count > 30)

        let out = directory.appending("out")
        let run = try await BraidCLI.run(
            [
                "s3://braid/data/", "-d", out.path, "--no-fsync", "--include", "d1/*", "--include", "*-007.bin",
                "--exclude", "*/s2/*", "--include", "sha256.bin",
            ],
            environment: moto.environment())

        #expect(run.status == .exited(0), "\(run.standardError.suffix(2000))")
        let downloaded = try Self.files(below: out)
        #expect(Set(downloaded.keys) == Set(expected.keys))
        #expect(expected.allSatisfy { downloaded[$0.key] == $0.value })

        let none = try await BraidCLI.run(
            ["s3://braid/data/", "-d", out.path, "--include", "*.parquet"], environment: moto.environment())
        #expect(none.status == .exited(2), "\(none.standardError)")
        #expect(none.standardError.contains("none of the objects below s3://braid/data/ matches"))
    }

    @Test("keys that would leave the directory are refused, others made safe; the rest still arrives")
    func hostileKeys() async throws {
        try #require(await MotoS3Tests.isAvailable(), "python3 with moto[server] and boto3: run scripts/install-deps")
        let directory = try TemporaryDirectory(prefix: "braid-s3-hostile")
        defer { directory.remove() }
        let moto = try await MotoServer.start(
            setup: Self.setup, arguments: [directory.appending("expected").path], in: directory)
        defer { moto.stop() }
        let jail = directory.appending("jail")
        let out = jail.appendingPathComponent("a/b/out")

        let run = try await BraidCLI.run(
            ["s3://braid/hostile/", "-d", out.path, "--no-fsync"], environment: moto.environment())

        #expect(run.status == .exited(2), "\(run.standardError)")
        #expect(
            run.standardError.contains(
                "the key 'hostile/../escaped.txt' is not saved: its path below the prefix "
                    + "has a '..' component"))
        #expect(run.standardError.contains("hostile/../../../tmp/escaped.txt' is not saved"))
        // The file's name shows no control character, raw or hidden, on the terminal.
        #expect(!run.standardError.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{202E}" })
        let files = try Self.files(below: jail)
        #expect(
            Set(files.keys) == ["a/b/out/fine.txt", "a/b/out/txt.exe", "a/b/out/term_[2J.txt"],
            "nothing outside the directory: \(files.keys.sorted())")
        #expect(files["a/b/out/txt.exe"] == Data("hostile/\u{202E}txt.exe".utf8))
    }

    @Test("the library lists a prefix page by page, each page asked for with the last one's token")
    func pagination() async throws {
        try #require(await MotoS3Tests.isAvailable(), "python3 with moto[server] and boto3: run scripts/install-deps")
        let directory = try TemporaryDirectory(prefix: "braid-s3-pages")
        defer { directory.remove() }
        let expectedDirectory = directory.appending("expected")
        let moto = try await MotoServer.start(setup: Self.setup, arguments: [expectedDirectory.path], in: directory)
        defer { moto.stop() }
        let store = ObjectStore(endpoint: moto.endpoint)

        let objects = try await store.objects(in: "braid", prefix: "data/", pageSize: 7)

        // 300 + sha256.bin + big/multi.bin + the folder marker data/d0/, in key order, each once.
        #expect(objects.count == 303)
        #expect(objects.map(\.key) == objects.map(\.key).sorted())
        #expect(Set(objects.map(\.key)).count == 303)
        let expected = try Self.files(below: expectedDirectory)
        #expect(Set(objects.map(\.key).filter { !$0.hasSuffix("/") }) == Set(expected.keys.map { "data/" + $0 }))
        #expect(objects.first { $0.key == "data/big/multi.bin" }?.isMultipartUpload == true)
        #expect(objects.first { $0.key == "data/big/multi.bin" }?.size == 12 << 20)
    }

    /// Bucket `secure` with 20 objects, readable by IAM user `braid` and by the temporary credentials of role
    /// `reader`; then every request must be signed by a key moto's IAM knows, with a signature that matches. Prints
    /// the user's key and secret, then the role's key, secret and session token.
    static let signedSetup = """
        s3.create_bucket(Bucket="secure")
        for i in range(20):
            body = random.Random(i).randbytes(1000 + i)
            s3.put_object(Bucket="secure", Key=f"dir {i % 2}/f{i}.bin", Body=body)
            os.makedirs(os.path.join(arguments[0], f"dir {i % 2}"), exist_ok=True)
            open(os.path.join(arguments[0], f"dir {i % 2}", f"f{i}.bin"), "wb").write(body)
        iam = client("iam")
        policy = json.dumps({"Version": "2012-10-17",
                             "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]})
        iam.create_user(UserName="braid")
        iam.put_user_policy(UserName="braid", PolicyName="s3", PolicyDocument=policy)
        key = iam.create_access_key(UserName="braid")["AccessKey"]
        trust = json.dumps({"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}]})
        role = iam.create_role(RoleName="reader", AssumeRolePolicyDocument=trust)["Role"]
        iam.put_role_policy(RoleName="reader", PolicyName="s3", PolicyDocument=policy)
        temporary = client("sts").assume_role(RoleArn=role["Arn"], RoleSessionName="braid")["Credentials"]
        enforce_auth()
        ready += [key["AccessKeyId"], key["SecretAccessKey"],
                  temporary["AccessKeyId"], temporary["SecretAccessKey"], temporary["SessionToken"]]
        """

    /// moto checks signatures by recomputing them the way botocore signs, which for a listing's query differs from
    /// S3's own canonical form wherever a value needs percent-encoding (a prefix's `/`): botocore's own
    /// `list_objects_v2(Prefix="dir/")` is refused there too. So the signed listings here are of the whole bucket,
    /// whose keys (with a space and a `/`) are signed in the path, where moto and S3 agree.
    @Test("a store that checks signatures: the right key downloads, a wrong one gets S3's reason and exit 5")
    func credentials() async throws {
        try #require(await MotoS3Tests.isAvailable(), "python3 with moto[server] and boto3: run scripts/install-deps")
        let directory = try TemporaryDirectory(prefix: "braid-s3-signed")
        defer { directory.remove() }
        let expectedDirectory = directory.appending("expected")
        let moto = try await MotoServer.start(
            setup: Self.signedSetup, arguments: [expectedDirectory.path], in: directory)
        defer { moto.stop() }
        let (key, secret) = (moto.values[0], moto.values[1])
        let (temporaryKey, temporarySecret, token) = (moto.values[2], moto.values[3], moto.values[4])
        let expected = try Self.files(below: expectedDirectory)

        for (name, environment) in [
            ("user", moto.environment(key: key, secret: secret)),
            ("role", moto.environment(key: temporaryKey, secret: temporarySecret, token: token)),
        ] {
            let out = directory.appending("out-\(name)")
            let run = try await BraidCLI.run(
                ["s3://secure/", "-d", out.path, "--no-fsync", "-q"], environment: environment)
            #expect(run.status == .exited(0), "\(name): \(run.standardError)")
            #expect(try Self.files(below: out) == expected, "\(name)")
        }
        let one = directory.appending("one.bin")
        let single = try await BraidCLI.run(
            ["s3://secure/dir 1/f3.bin", "-o", one.path, "--no-fsync", "-q"],
            environment: moto.environment(key: key, secret: secret))
        #expect(single.status == .exited(0), "\(single.standardError)")
        #expect(try Data(contentsOf: one) == expected["dir 1/f3.bin"])

        // Each refusal is one line with S3's code and message, and exit status 5.
        let prefix = ["s3://secure/", "-d", directory.appending("refused").path, "-q"]
        let refusals: [(String, [String], [String: String], String)] = [
            ("wrong secret", prefix, moto.environment(key: key, secret: "wrong"), "SignatureDoesNotMatch"),
            (
                "unknown key", prefix, moto.environment(key: "AKIAUNKNOWN0000000000", secret: secret),
                "InvalidAccessKeyId"
            ),
            (
                "token missing", prefix, moto.environment(key: temporaryKey, secret: temporarySecret),
                "InvalidAccessKeyId"
            ),
            (
                "one object, wrong secret", ["s3://secure/dir 1/f3.bin", "-o", one.path + ".2", "-q"],
                moto.environment(key: key, secret: "wrong"), "SignatureDoesNotMatch"
            ),
            (
                "no such bucket", ["s3://absent/"] + prefix.dropFirst(), moto.environment(key: key, secret: secret),
                "NoSuchBucket"
            ),
        ]
        for (name, arguments, environment, code) in refusals {
            let run = try await BraidCLI.run(arguments, environment: environment)
            #expect(run.status == .exited(5), "\(name): \(run.standardError)")
            let errors = run.standardError.split(separator: "\n").filter { $0.hasPrefix("braid: ") }
            #expect(errors.count == 1 && errors[0].contains(": \(code): "), "\(name): \(run.standardError)")
            if code != "NoSuchBucket" {
                #expect(
                    errors.first?.hasSuffix("check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN")
                        == true,
                    "\(name)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: directory.appending("refused").path))

        // The library pages through the bucket, every page signed.
        let store = ObjectStore(
            endpoint: moto.endpoint,
            credentials: ObjectStore.Credentials(
                accessKeyID: temporaryKey, secretAccessKey: temporarySecret, sessionToken: token))
        let objects = try await store.objects(in: "secure", prefix: "", pageSize: 3)
        #expect(Set(objects.map(\.key)) == Set(expected.keys))
    }
}
