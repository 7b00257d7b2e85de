extension TestServer {
    /// What the server answers for one path: a content and the faults to inject while serving it.
    public struct Route: Sendable, Hashable {
        /// The representation served, unless a fault replaces it.
        public var content: TestContent
        /// The misbehaviours, all applied; an empty list serves the content correctly.
        public var faults: [Fault]

        /// A route serving `content` with `faults`.
        public init(content: TestContent, faults: [Fault] = []) {
            self.content = content
            self.faults = faults
        }

        /// A route serving `size` bytes generated from `seed` with `faults`.
        public init(size: UInt64, seed: UInt64 = 1, faults: [Fault] = []) {
            self.init(content: TestContent(seed: seed, size: size), faults: faults)
        }
    }
}
