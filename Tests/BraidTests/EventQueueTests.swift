import Testing

@testable import Braid

@Suite("EventQueue")
struct EventQueueTests {
    static func progress(_ bytes: Int64) -> DownloadEvent {
        .progress(
            DownloadProgress(
                downloadedBytes: bytes, totalBytes: 100, bytesPerSecond: 0, activeConnections: 1, retries: 0,
                segments: []))
    }

    @Test("A consumer that falls behind gets every event in order, with unread progress replaced by the latest")
    func slowConsumerKeepsAllButStaleProgress() async {
        let queue = EventQueue<DownloadEvent>()
        queue.push(.state(.probing))
        queue.push(Self.progress(1))
        queue.push(Self.progress(2))
        queue.push(.notice("a"))
        queue.push(Self.progress(3))
        queue.push(.retry(reason: "reset", delay: 1))
        queue.push(Self.progress(4))
        queue.push(Self.progress(5))
        queue.push(.state(.completed))
        queue.finish()
        var received: [DownloadEvent] = []
        for await event in queue.stream { received.append(event) }
        #expect(
            received == [
                .state(.probing), Self.progress(2), .notice("a"), Self.progress(3), .retry(reason: "reset", delay: 1),
                Self.progress(5), .state(.completed),
            ])
    }

    @Test("A waiting consumer is handed each event as it comes, and the stream ends after finish")
    func waitingConsumer() async {
        let queue = EventQueue<DownloadEvent>()
        let consumer = Task {
            var received: [DownloadEvent] = []
            for await event in queue.stream { received.append(event) }
            return received
        }
        for bytes in 1...50 as ClosedRange<Int64> { queue.push(Self.progress(bytes)) }
        queue.push(.notice("done"))
        queue.finish()
        let received = await consumer.value
        #expect(received.last == .notice("done"))
        let progress = received.compactMap { event -> Int64? in
            if case let .progress(value) = event { return value.downloadedBytes }
            return nil
        }
        #expect(progress == progress.sorted(), "progress never goes back")
        #expect(progress.last == 50, "the latest progress is never the one dropped")
    }

    /// An event of one of several sources, as a manager's stream carries them.
    struct Tagged: CoalescingEvent, Equatable {
        let source: Int
        let value: String
        var isSnapshot: Bool { value.hasPrefix("p") }
    }

    @Test(
        "With several sources, a source's unread snapshot is replaced only by its own next one, and only while latest")
    func sourcesCoalesceApart() async {
        let queue = EventQueue<Tagged>()
        for (source, value) in [(1, "p1"), (2, "p1"), (1, "p2"), (2, "state"), (2, "p2"), (1, "p3"), (2, "p3")] {
            queue.push(Tagged(source: source, value: value))
        }
        queue.finish()
        var received: [Tagged] = []
        for await event in queue.stream { received.append(event) }
        #expect(
            received == [
                Tagged(source: 1, value: "p3"), Tagged(source: 2, value: "p1"), Tagged(source: 2, value: "state"),
                Tagged(source: 2, value: "p3"),
            ])
    }
}
