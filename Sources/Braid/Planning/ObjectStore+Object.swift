extension ObjectStore {
    /// One object of a listing, as S3 describes it.
    public struct Object: Sendable, Equatable {
        /// The whole key, prefix included.
        public var key: String
        /// Its length in bytes.
        public var size: Int64
        /// Its `ETag`, quotes included: for a single-part upload not encrypted with KMS or a customer key, the MD5
        /// of its bytes; for a multipart upload `"…-N"`, which is no digest of the bytes.
        public var entityTag: String?
        /// When it was last written, as S3 writes it (`2024-05-01T12:00:00.000Z`).
        public var lastModified: String?
        /// The algorithms of the checksums S3 keeps for it (`SHA256`, `CRC32`, …), whose values a download asks
        /// for (`x-amz-checksum-mode`).
        public var checksumAlgorithms: [String] = []

        public init(key: String, size: Int64, entityTag: String? = nil, lastModified: String? = nil) {
            self.key = key
            self.size = size
            self.entityTag = entityTag
            self.lastModified = lastModified
        }

        /// The object as a probe would find it at `url`, from the listing alone: its size, `ETag` and
        /// `LastModified` (as an HTTP date, to the second), and the MD5 its `ETag` has the shape of as its digest.
        /// Evidence for a file already in place (`DownloadJob.listedExisting`): a listing does not say whether an
        /// object is encrypted with KMS or a customer key, whose tags are no MD5s.
        func resource(at url: String) -> RemoteResource {
            let modified = lastModified.flatMap(HTTPDate.parse(listingTime:)).map {
                HTTPDate.format(secondsSince1970: Int64($0))
            }
            return RemoteResource(
                requestedURL: url, resolvedURL: url, length: size, acceptsRanges: true, etag: entityTag,
                lastModified: modified, suggestedFilename: nil,
                digests: entityTag.flatMap(DigestHeaders.md5(ofEntityTag:)).map { [$0] } ?? [])
        }

        /// Whether it was uploaded in parts, its `ETag` then no MD5 of its bytes.
        public var isMultipartUpload: Bool {
            // An MD5 in hexadecimal has no '-'; a multipart upload's tag ends in '-' and its part count.
            entityTag?.contains("-") == true
        }
    }
}
