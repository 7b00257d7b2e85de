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

        /// Whether it was uploaded in parts, its `ETag` then no MD5 of its bytes.
        public var isMultipartUpload: Bool {
            // An MD5 in hexadecimal has no '-'; a multipart upload's tag ends in '-' and its part count.
            entityTag?.contains("-") == true
        }
    }
}
