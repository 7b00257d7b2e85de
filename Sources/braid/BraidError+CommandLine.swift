import ArgumentParser
import Braid

/// The library's errors in the command's words: the library says what happened and, in its own terms, what would
/// help and which input it refused; the command names its flags for them (or, with `-i`, the list's option lines).
extension BraidError {
    /// The line the command prints: the message, then each remedy as the flag that applies it. `inList` when the
    /// download is an entry of a list, whose file is named with `out=`, not `-o`.
    func commandLineMessage(inList: Bool = false) -> String {
        let hints = remedies.compactMap { $0.commandLineHint(inList: inList) }
        guard !hints.isEmpty else { return message }
        return message + "; " + hints.joined(separator: ", or ")
    }

    /// The error as a refused argument, named by its flag: `--max-tries: the number of attempts must be …`.
    var validationError: ValidationError {
        ValidationError(option?.flag.map { "\($0): \(message)" } ?? message)
    }
}

extension BraidError.Remedy {
    /// What the user of the command does to apply the remedy; nil for one the command has no flag for.
    func commandLineHint(inList: Bool) -> String? {
        switch self {
        case .overwrite: "use --force to replace it"
        case .discardPartialDownload: "use --force to discard it and start over"
        case .chooseAnotherDestination:
            inList ? "give this one another name with out=NAME" : "choose another output name with -o"
        case .trustCertificate: "use --cacert FILE, or --insecure"
        case .allowRedirectScheme: "allow it with --proto-redir"
        case .saveIntoDirectory: inList ? "name a file inside it with out=" : "use -d to save into it"
        case .repair: "run again with --repair to fetch it again and rewrite only the bytes that differ"
        case .objectStoreCredentials: "check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN"
        case .objectStoreRegion: "set AWS_REGION to the bucket's region"
        case .expectDigest: inList ? "give its digest with checksum=ALG=HEX" : "give its digest with --checksum"
        case .trustCachePeers: "use --trust-cache-peers to use the caches unchecked"
        case .raiseUnpackedCap: "raise the cap with --max-unpacked SIZE if you trust the archive"
        default: nil
        }
    }
}

extension BraidError.Option {
    /// The flag of `braid get` or `braid bench` that sets the option; nil for one no flag sets.
    var flag: String? {
        switch self {
        case .connections, .connectionCounts: "-n"
        case .repeats: "--repeat"
        case .byteLimit: "--bytes"
        case .maximumAttempts: "--max-tries"
        case .stallTimeoutSeconds: "--stall-timeout"
        case .connectTimeoutSeconds: "--connect-timeout"
        case .caCertificatePath: "--cacert"
        case .headers: "-H"
        case .proxy: "--proxy"
        case .userAgent: "--user-agent"
        case .netrcPath: "--netrc-file"
        case .cookieFilePath: "--cookie"
        case .noProxy: "--noproxy"
        case .redirectSchemes: "--proto-redir"
        case .expectedDigest: "--checksum"
        case .checksumFile: "--checksum-file"
        case .rateLimit: "--limit-rate"
        case .cachePeers: "--cache-peers"
        case .sliceSize: "--slice-size"
        default: nil
        }
    }
}
