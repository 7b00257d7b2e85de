extension TestServer {
    /// What the server answers for one path: a content and the faults to inject while serving it.
    public struct Route: Sendable, Hashable {
        /// The representation served, unless a fault replaces it.
        public var content: TestContent
        /// The misbehaviours, all applied; an empty list serves the content correctly.
        public var faults: [Fault]
        /// A small fixed document served instead of `content` (a Metalink describing other routes): `200` with its
        /// own `Content-Type`, no ranges. Only the refusal faults (a status, a redirect) apply to it.
        public var document: Document?

        /// A route serving `content` with `faults`.
        public init(content: TestContent, faults: [Fault] = []) {
            self.content = content
            self.faults = faults
        }

        /// A route serving the bytes of `document` with `faults`.
        public init(document: Document, faults: [Fault] = []) {
            self.init(content: TestContent(seed: 0, size: UInt64(document.bytes.count)), faults: faults)
            self.document = document
        }

        /// A route serving `size` bytes generated from `seed` with `faults`.
        public init(size: UInt64, seed: UInt64 = 1, faults: [Fault] = []) {
            self.init(content: TestContent(seed: seed, size: size), faults: faults)
        }
    }

    /// Fixed bytes a route serves, with their media type.
    public struct Document: Sendable, Hashable {
        public var bytes: [UInt8]
        public var contentType: String

        public init(bytes: [UInt8], contentType: String) {
            self.bytes = bytes
            self.contentType = contentType
        }
    }
}
