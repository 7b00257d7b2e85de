import ArgumentParser
import Braid

/// How requests are made, shared by `braid get` and `braid bench`: extra headers, TLS trust, retries, timeouts.
struct RequestArguments: ParsableArguments {
    @Option(name: [.customShort("H"), .customLong("header")], help: "Extra request header 'Name: value' (repeatable).")
    var headers: [String] = []

    @Option(help: ArgumentHelp("Trust the CA certificates in FILE (PEM) for HTTPS.", valueName: "FILE"))
    var cacert: String?

    @Flag(
        name: [.customShort("k"), .long],
        help: "Do not verify TLS certificates (insecure: anyone on the path can swap the file)."
    )
    var insecure = false

    @Option(help: "Attempts per segment without progress before giving up.")
    var maxTries = 6

    @Option(help: "Seconds a connection may stall before it is replaced.")
    var stallTimeout = 30

    @Option(help: "Seconds allowed to connect.")
    var connectTimeout = 30

    func validate() throws {
        if maxTries < 1 { throw ValidationError("--max-tries must be at least 1, got \(maxTries)") }
    }

    func apply(to options: inout DownloadOptions) {
        options.headers = headers
        options.caCertificatePath = cacert
        options.insecure = insecure
        options.maximumAttempts = maxTries
        options.stallTimeoutSeconds = stallTimeout
        options.connectTimeoutSeconds = connectTimeout
    }
}
