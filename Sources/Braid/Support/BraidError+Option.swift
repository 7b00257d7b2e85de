extension BraidError {
    /// An input the library refused, named as the library names it, so that a program can point at its own field
    /// or flag for it.
    public struct Option: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Base: String, Sendable {
            case connections, piecesPerConnection, maximumAttempts, byteLimit, stallTimeoutSeconds
            case connectTimeoutSeconds, durableCheckpointInterval, caCertificatePath, headers, redirectSchemes
            case proxy, noProxy, userAgent, netrcPath, cookieFilePath, expectedDigest, checksumFile, rateLimit,
                connectionCounts, repeats, metalink, awsSignature, objectStore, cachePeers, sliceSize
        }
        fileprivate let base: Base

        /// `DownloadOptions.connections`.
        public static let connections = Option(base: .connections)
        /// `DownloadOptions.piecesPerConnection`.
        public static let piecesPerConnection = Option(base: .piecesPerConnection)
        /// `DownloadOptions.maximumAttempts`.
        public static let maximumAttempts = Option(base: .maximumAttempts)
        /// `DownloadOptions.byteLimit`.
        public static let byteLimit = Option(base: .byteLimit)
        /// `DownloadOptions.stallTimeoutSeconds`.
        public static let stallTimeoutSeconds = Option(base: .stallTimeoutSeconds)
        /// `DownloadOptions.connectTimeoutSeconds`.
        public static let connectTimeoutSeconds = Option(base: .connectTimeoutSeconds)
        /// `DownloadOptions.durableCheckpointInterval`.
        public static let durableCheckpointInterval = Option(base: .durableCheckpointInterval)
        /// `DownloadOptions.caCertificatePath`.
        public static let caCertificatePath = Option(base: .caCertificatePath)
        /// `DownloadOptions.headers`.
        public static let headers = Option(base: .headers)
        /// `DownloadOptions.redirectSchemes`.
        public static let redirectSchemes = Option(base: .redirectSchemes)
        /// `DownloadOptions.proxy`.
        public static let proxy = Option(base: .proxy)
        /// `DownloadOptions.noProxy`.
        public static let noProxy = Option(base: .noProxy)
        /// `DownloadOptions.netrcPath`.
        public static let netrcPath = Option(base: .netrcPath)
        /// `DownloadOptions.cookieFilePath`.
        public static let cookieFilePath = Option(base: .cookieFilePath)
        /// `DownloadOptions.userAgent`.
        public static let userAgent = Option(base: .userAgent)
        /// `DownloadOptions.expectedDigest`, and the text `ExpectedDigest(checksumArgument:)` parses.
        public static let expectedDigest = Option(base: .expectedDigest)
        /// `DownloadOptions.checksumFile`: the file cannot be read, or has no line for the file downloaded.
        public static let checksumFile = Option(base: .checksumFile)
        /// `DownloadOptions.rateLimit`, and the text `ByteCount.rate(_:)` parses.
        public static let rateLimit = Option(base: .rateLimit)
        /// `BenchSchedule`'s `connectionCounts`.
        public static let connectionCounts = Option(base: .connectionCounts)
        /// `BenchSchedule`'s `repeats`.
        public static let repeats = Option(base: .repeats)
        /// A Metalink document (`Metalink(parsing:source:)`): it cannot be read, is not Metalink 4, or is unsafe.
        public static let metalink = Option(base: .metalink)
        /// `DownloadOptions.awsSignature`: a key, secret, token, region or service libcurl cannot sign with.
        public static let awsSignature = Option(base: .awsSignature)
        /// An `ObjectStore` or the `s3://` URL of an object or prefix in one: its endpoint, region or credentials
        /// (as the environment gives them), or the bucket and key the URL names.
        public static let objectStore = Option(base: .objectStore)
        /// `DownloadOptions.cachePeers`: a template that cannot name a peer's URL, or peers whose slices cannot be
        /// verified.
        public static let cachePeers = Option(base: .cachePeers)
        /// `DownloadOptions.sliceSize`.
        public static let sliceSize = Option(base: .sliceSize)

        /// The type and property the option is, such as `DownloadOptions.maximumAttempts`.
        public var description: String {
            switch base {
            case .connectionCounts, .repeats: "BenchSchedule.\(base.rawValue)"
            case .metalink: "Metalink"
            case .objectStore: "ObjectStore"
            default: "DownloadOptions.\(base.rawValue)"
            }
        }
    }
}
