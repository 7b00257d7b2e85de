import Synchronization
import Testing

@testable import Braid

/// The writer's thread writes what the pool's thread hands over, in order, gathered into blocks; it reports
/// only what it wrote, and after a failed write none of that attempt's later bytes reaches the file.
@Suite("background writer")
struct BackgroundWriterTests {
    /// A sink that keeps its writes, and fails the one at `failingOffset`.
    final class RecordingSink: TransferSink {
        struct Write: Equatable {
            var offset: Int64
            var bytes: [UInt8]
        }

        let failingOffset: Int64?
        let writes = Mutex<[Write]>([])

        init(failingOffset: Int64? = nil) {
            self.failingOffset = failingOffset
        }

        func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(BraidError) {
            if offset == failingOffset { throw BraidError.localIO("no space left on device") }
            writes.withLock { $0.append(Write(offset: offset, bytes: Array(bytes))) }
        }

        /// The file the writes make, as far as they go.
        var file: [UInt8] {
            writes.withLock { writes in
                var file: [UInt8] = []
                for write in writes {
                    let end = Int(write.offset) + write.bytes.count
                    if file.count < end { file += [UInt8](repeating: 0, count: end - file.count) }
                    file.replaceSubrange(Int(write.offset)..<end, with: write.bytes)
                }
                return file
            }
        }
    }

    static func bytes(_ count: Int, from start: Int) -> [UInt8] {
        (start..<start + count).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    }

    @Test("small chunks are gathered into blocks, written in order, and reported once written")
    func gathersAndReports() {
        let sink = RecordingSink()
        let writer = BackgroundWriter(sink: sink, blockSize: 1000, capacity: 4000)
        let attempt = BackgroundWriter.Attempt(slot: 0, request: 1)
        let data = Self.bytes(10_500, from: 0)
        var offset = 0
        // Chunks of 300 bytes: 35 of them, gathered into 11 writes of at most 1,000 bytes.
        while offset < data.count {
            let count = min(300, data.count - offset)
            data[offset..<offset + count].withUnsafeBytes {
                writer.write($0, at: Int64(offset), for: attempt)
            }
            offset += count
        }
        writer.drain()
        let completed = writer.takeCompleted()
        writer.stop()

        #expect(sink.file == data)
        #expect(sink.writes.withLock { $0.count } == 11)
        #expect(sink.writes.withLock { $0.allSatisfy { $0.bytes.count <= 1000 } })
        #expect(completed.allSatisfy { $0.attempt == attempt && $0.error == nil })
        #expect(completed.reduce(0) { $0 + $1.count } == data.count)
        #expect(writer.takeCompleted().isEmpty, "each completion is taken once")
    }

    @Test("two connections' bytes each go to their own place")
    func interleavedConnections() {
        let sink = RecordingSink()
        let writer = BackgroundWriter(sink: sink, blockSize: 4096, capacity: 16384)
        let first = Self.bytes(20_000, from: 0)
        let second = Self.bytes(20_000, from: 20_000)
        for chunk in stride(from: 0, to: 20_000, by: 700) {
            let end = min(chunk + 700, 20_000)
            first[chunk..<end].withUnsafeBytes {
                writer.write($0, at: Int64(chunk), for: .init(slot: 0, request: 1))
            }
            second[chunk..<end].withUnsafeBytes {
                writer.write($0, at: Int64(20_000 + chunk), for: .init(slot: 1, request: 1))
            }
        }
        writer.drain()
        writer.stop()

        #expect(sink.file == first + second)
    }

    @Test("after a failed write, none of that attempt's later bytes is written; other attempts go on")
    func failureStopsItsAttempt() {
        let sink = RecordingSink(failingOffset: 2000)
        let writer = BackgroundWriter(sink: sink, blockSize: 1000, capacity: 2000)
        let failing = BackgroundWriter.Attempt(slot: 0, request: 1)
        let other = BackgroundWriter.Attempt(slot: 1, request: 1)
        let data = Self.bytes(5000, from: 0)
        for start in stride(from: 0, to: 5000, by: 1000) {
            data[start..<start + 1000].withUnsafeBytes { writer.write($0, at: Int64(start), for: failing) }
            data[start..<start + 1000].withUnsafeBytes { writer.write($0, at: Int64(10_000 + start), for: other) }
        }
        writer.drain()
        let completed = writer.takeCompleted()
        writer.stop()

        let failingOffsets = sink.writes.withLock { $0.map(\.offset).filter { $0 < 10_000 } }
        #expect(failingOffsets == [0, 1000], "nothing past the failed write at 2000")
        #expect(completed.filter { $0.attempt == failing }.map(\.count) == [1000, 1000, 0])
        #expect(completed.filter { $0.attempt == failing }.last?.error?.code == .localIO)
        #expect(completed.filter { $0.attempt == other }.reduce(0) { $0 + $1.count } == 5000)
    }

    @Test("a new request on the same slot starts a block of its own")
    func newRequestNewBlock() {
        let sink = RecordingSink()
        let writer = BackgroundWriter(sink: sink, blockSize: 1000, capacity: 4000)
        let data = Self.bytes(600, from: 0)
        data[0..<300].withUnsafeBytes { writer.write($0, at: 0, for: .init(slot: 0, request: 1)) }
        // The next request of the slot continues at the same offset: still written apart, in order.
        data[300..<600].withUnsafeBytes { writer.write($0, at: 300, for: .init(slot: 0, request: 2)) }
        writer.drain()
        let completed = writer.takeCompleted()
        writer.stop()

        #expect(sink.writes.withLock { $0.map(\.offset) } == [0, 300])
        #expect(completed.map(\.attempt.request) == [1, 2])
        #expect(sink.file == data)
    }
}
