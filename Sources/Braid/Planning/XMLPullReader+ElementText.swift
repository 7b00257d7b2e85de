extension XMLPullReader {
    /// The text of the element being read, gathered only for an element whose text matters, and bounded: a
    /// document cannot grow one element's text past `maximumBytes`.
    struct ElementText {
        let maximumBytes: Int
        private var gathered: String?
        private var bytes = 0

        init(maximumBytes: Int) { self.maximumBytes = maximumBytes }

        /// Starts gathering the text of the element just opened.
        mutating func start() {
            gathered = ""
            bytes = 0
        }

        /// Adds `string` when gathering; false when the text would then pass `maximumBytes`.
        mutating func append(_ string: String) -> Bool {
            guard gathered != nil else { return true }
            bytes += string.utf8.count
            guard bytes <= maximumBytes else { return false }
            gathered? += string
            return true
        }

        /// Stops gathering: the element open now has no text that matters.
        mutating func stop() { gathered = nil }

        /// The text gathered (nil when none was), and gathering stops.
        mutating func take() -> String? {
            defer { stop() }
            return gathered
        }
    }
}
