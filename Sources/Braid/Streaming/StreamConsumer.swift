/// What takes a streamed download's bytes in order from its `StreamFeed`, on a thread of its own: it reads until
/// the feed says the file is over, releasing what it is done with, and throws when it cannot go on.
protocol StreamConsumer: Sendable {
    /// Where in the file it starts reading (an archive resumed at an entry's header); 0 for most.
    var start: Int64 { get }
    func consume(_ feed: StreamFeed) throws(BraidError)
}
