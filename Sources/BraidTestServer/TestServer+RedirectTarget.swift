extension TestServer {
    /// Where a ``Fault/redirect(status:to:)`` points.
    public enum RedirectTarget: Sendable, Hashable {
        /// A path on this server (the request's own path makes a loop), as an absolute `http://127.0.0.1` URL.
        case path(String)
        /// A path on this server under the host name `localhost`, which a client must treat as another host
        /// (and so not forward credentials to).
        case otherHost(path: String)
        /// This exact `Location` value, e.g. `file:///etc/passwd`.
        case location(String)
    }
}
