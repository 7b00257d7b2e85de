import Testing

@testable import Braid

/// A streamed download's checkpoints claim none of the bytes freed from `FILE.part`, so that any Braid reading the
/// manifest fetches them again rather than trusting holes.
@Suite("Manifest stream")
struct ManifestStreamTests {
    static let segments = [
        Manifest.Segment(start: 0, end: 100, done: 100, durable: 100),
        Manifest.Segment(start: 100, end: 200, done: 80, durable: 50),
        Manifest.Segment(start: 200, end: 300, done: 10, durable: 0),
    ]

    @Test("Segments below the released mark are empty; the one across it is split there")
    func releasedBelow() {
        #expect(
            Manifest.segments(Self.segments, releasedBelow: 130) == [
                Manifest.Segment(start: 0, end: 100, done: 0, durable: 0),
                Manifest.Segment(start: 100, end: 130, done: 0, durable: 0),
                Manifest.Segment(start: 130, end: 200, done: 50, durable: 20),
                Manifest.Segment(start: 200, end: 300, done: 10, durable: 0),
            ])
        #expect(Manifest.segments(Self.segments, releasedBelow: 0) == Self.segments)
        #expect(Manifest.segments(Self.segments, releasedBelow: 100).first?.done == 0)
        #expect(Manifest.segments(Self.segments, releasedBelow: 100).count == 3, "no empty split at a boundary")
    }

    @Test("A manifest with a stream record passes validation, and one without still reads")
    func validates() throws {
        var manifest = Manifest(
            url: "https://example.com/a.tar", resolvedURL: "https://example.com/a.tar", length: 300, etag: nil,
            lastModified: nil, bootID: "boot", segments: Manifest.segments(Self.segments, releasedBelow: 150))
        manifest.stream = Manifest.Stream(
            released: 150,
            extraction: Manifest.Extraction(directory: "out", entries: 3, resumeOffset: 1024, resumeEntry: 2))
        try manifest.validate()
    }
}
