extension Metalink {
    /// Where a document came from, which decides whether the URLs it lists were named by the user, and so may be
    /// sent the user's credentials (`CredentialScope`).
    public enum Provenance: Sendable, Equatable {
        /// A file the user gave by its path: its URLs are the user's, as if typed, and each file's URLs are sent
        /// the credentials.
        case local
        /// A document a server sent in answer to `url`, the URL the user gave: only that URL's origin is sent the
        /// credentials, never another one the document names, nor the one a redirect fetched it from.
        case served(for: String)
    }
}
