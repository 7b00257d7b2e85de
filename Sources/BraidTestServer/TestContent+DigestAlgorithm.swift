extension TestContent {
    /// The digest algorithms the server can advertise and tests can compute over a content.
    ///
    /// Nested so that tests importing both this module and Braid (which has its own `DigestAlgorithm`) can name
    /// either without ambiguity.
    public enum DigestAlgorithm: String, Sendable, Hashable, CaseIterable {
        /// MD5, still what `Content-MD5` and many mirrors publish.
        case md5
        /// SHA-256, the algorithm `Repr-Digest` senders are expected to support.
        case sha256
        /// SHA-512, for checking that longer digests are handled.
        case sha512
    }
}
