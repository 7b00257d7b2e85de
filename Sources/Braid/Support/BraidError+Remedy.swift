extension BraidError {
    /// What would let a failed download succeed, in the library's terms. A program says it in its own words: the
    /// `braid` command, for one, names the flag that sets the option.
    public struct Remedy: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Base: String, Sendable {
            case overwrite, discardPartialDownload, chooseAnotherDestination, trustCertificate, allowRedirectScheme
            case saveIntoDirectory, repair, objectStoreCredentials, objectStoreRegion, raiseUnpackedCap, expectDigest,
                trustCachePeers
        }
        fileprivate let base: Base

        /// Setting `DownloadOptions.overwrite` replaces the file already at the destination.
        public static let overwrite = Remedy(base: .overwrite)
        /// Setting `DownloadOptions.overwrite` discards the partial download that cannot be resumed (its manifest
        /// and partial file) and starts over.
        public static let discardPartialDownload = Remedy(base: .discardPartialDownload)
        /// Another `DownloadOptions.destination` avoids the file, or the other download, at this one.
        public static let chooseAnotherDestination = Remedy(base: .chooseAnotherDestination)
        /// Trusting the server's certificate: a CA bundle in `DownloadOptions.caCertificatePath`, or
        /// `DownloadOptions.insecure`.
        public static let trustCertificate = Remedy(base: .trustCertificate)
        /// A `DownloadOptions.Destination.directory` saves the file inside the directory named as its path.
        public static let saveIntoDirectory = Remedy(base: .saveIntoDirectory)
        /// Setting `DownloadOptions.repair` fetches the file again and rewrites only the bytes of the kept partial
        /// file that differ, after its complete data failed a digest.
        public static let repair = Remedy(base: .repair)
        /// Other `ObjectStore.credentials`: the store refused the key, the signature or the session token, or an
        /// unsigned request.
        public static let objectStoreCredentials = Remedy(base: .objectStoreCredentials)
        /// Another `ObjectStore.region`: the bucket is in another region than the requests were signed for.
        public static let objectStoreRegion = Remedy(base: .objectStoreRegion)
        /// A digest the file must match (`DownloadOptions.expectedDigest` or `checksumFile`), which vouches for
        /// what cache peers serve.
        public static let expectDigest = Remedy(base: .expectDigest)
        /// Setting `DownloadOptions.trustsCachePeers` keeps what cache peers serve without checking it.
        public static let trustCachePeers = Remedy(base: .trustCachePeers)
        /// Adding the redirect's scheme to `DownloadOptions.redirectSchemes`.
        public static let allowRedirectScheme = Remedy(base: .allowRedirectScheme)

        /// A larger `ExtractionOptions.maximumUnpackedBytes` lets an archive declare more bytes unpacked.
        public static let raiseUnpackedCap = Remedy(base: .raiseUnpackedCap)

        public var description: String { base.rawValue }
    }
}
