import BraidTestSupport
import Foundation
import Testing

/// moto's S3 server (PyPI `moto[server]`) on a free loopback port, in a python process of its own, filled by a
/// setup script, until `stop()`.
///
/// The script runs after a prelude that starts the server and defines `endpoint`, `client(service, key, secret)`
/// (a boto3 client of the server), `s3` (one for setting up, with any key: moto checks none until told to),
/// `enforce_auth()` (from then on every request must be signed by a key moto's IAM knows, and its signature must
/// match), `record_requests()` (from then on moto's recorder writes down every request it serves, for
/// `requests()`), `arguments` (the arguments given to `start`) and `ready`, a list the script appends values to:
/// the server prints `endpoint` and them on one line when the script is done, which `start` waits for.
struct MotoServer {
    let process: ChildProcess
    let endpoint: String
    /// What the script appended to `ready`, in order.
    let values: [String]
    /// Where moto's recorder writes the requests it serves, one JSON object a line.
    let recording: String

    /// One request moto served, as its recorder wrote it down when it came in.
    struct Request {
        var method: String
        /// The path, percent-decoded, without the query.
        var path: String
        /// The header lines, names lowercased.
        var headers: [String: String]
    }

    static let prelude = """
        import json, os, random, socket, sys, time
        import boto3
        from botocore.config import Config
        from moto.server import ThreadedMotoServer
        probe = socket.socket(); probe.bind(("127.0.0.1", 0)); port = probe.getsockname()[1]; probe.close()
        ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False).start()
        endpoint = f"http://127.0.0.1:{port}"
        arguments = sys.argv[1:]
        def client(service, key="setup", secret="setup", token=None):
            return boto3.client(service, endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id=key,
                                aws_secret_access_key=secret, aws_session_token=token,
                                config=Config(signature_version="s3v4"))
        s3 = client("s3")
        def enforce_auth():
            from moto import settings
            from moto.core.authorization import ActionAuthenticatorMixin
            settings.INITIAL_NO_AUTH_ACTION_COUNT = 0
            ActionAuthenticatorMixin.request_count = 0
        def record_requests():
            from moto.moto_api import recorder
            recorder.reset_recording()
            recorder.start_recording()
        ready = []

        """

    /// Starts moto, runs `setup` (python, at the top level) with `arguments`, and returns once it is done.
    static func start(setup: String, arguments: [String] = [], in directory: TemporaryDirectory) async throws
        -> MotoServer
    {
        // Not moto.py, which Python would import as moto.
        let script = directory.appending("serve_moto_\(UUID().uuidString.prefix(8)).py").path
        let text = prelude + setup + "\nprint(\" \".join([endpoint] + ready), flush=True)\ntime.sleep(3600)\n"
        try text.write(toFile: script, atomically: true, encoding: .utf8)
        let recording = directory.appending("moto_requests_\(UUID().uuidString.prefix(8)).jsonl").path
        let process = try ChildProcess(
            "/usr/bin/env", ["MOTO_RECORDER_FILEPATH=\(recording)", "python3", script] + arguments)
        do {
            try await Polling.until(
                "moto to be filled", timeout: .seconds(120),
                evidence: { process.standardOutput + process.standardError }
            ) {
                if let status = process.status {
                    throw TestSupportError.exitedEarly("moto", status: status, evidence: process.standardError)
                }
                return process.standardOutput.hasSuffix("\n")
            }
        } catch {
            _ = process.stop()
            throw error
        }
        let fields = process.standardOutput.split(separator: "\n")[0].split(separator: " ").map(String.init)
        return MotoServer(
            process: process, endpoint: fields[0], values: Array(fields.dropFirst()), recording: recording)
    }

    /// The requests moto has served since the setup script called `record_requests()`, in the order they came in.
    /// Each is written down before it is answered, so every request a finished client made is here.
    func requests() throws -> [Request] {
        guard FileManager.default.fileExists(atPath: recording) else { return [] }
        let text = try String(contentsOfFile: recording, encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            let entry = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let url = try #require(URLComponents(string: entry["url"] as? String ?? ""), "\(line)")
            let headers = (entry["headers"] as? [String: String] ?? [:]).map { ($0.key.lowercased(), $0.value) }
            return Request(
                method: entry["method"] as? String ?? "", path: url.percentEncodedPath.removingPercentEncoding ?? "",
                headers: Dictionary(headers, uniquingKeysWith: { first, _ in first }))
        }
    }

    func stop() {
        _ = process.stop()
    }

    /// The environment braid reads its store from: this server, signed with `key` and `secret` (and `token`), and
    /// nothing of this machine's own AWS settings.
    func environment(key: String = "test", secret: String = "test", token: String = "") -> [String: String] {
        [
            "AWS_ENDPOINT_URL": endpoint, "AWS_ENDPOINT_URL_S3": "", "AWS_REGION": "us-east-1",
            "AWS_DEFAULT_REGION": "", "AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": secret,
            "AWS_SESSION_TOKEN": token,
        ]
    }
}
