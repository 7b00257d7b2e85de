import BraidTestSupport
import Foundation

/// moto's S3 server (PyPI `moto[server]`) on a free loopback port, in a python process of its own, filled by a
/// setup script, until `stop()`.
///
/// The script runs after a prelude that starts the server and defines `endpoint`, `client(service, key, secret)`
/// (a boto3 client of the server), `s3` (one for setting up, with any key: moto checks none until told to),
/// `enforce_auth()` (from then on every request must be signed by a key moto's IAM knows, and its signature must
/// match), `arguments` (the arguments given to `start`) and `ready`, a list the script appends values to: the
/// server prints `endpoint` and them on one line when the script is done, which `start` waits for.
struct MotoServer {
    let process: ChildProcess
    let endpoint: String
    /// What the script appended to `ready`, in order.
    let values: [String]

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
        let process = try ChildProcess("/usr/bin/env", ["python3", script] + arguments)
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
        return MotoServer(process: process, endpoint: fields[0], values: Array(fields.dropFirst()))
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
