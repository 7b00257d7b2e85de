import Testing

@testable import Braid

/// `Content-Range` comes from an untrusted server: only the exact grammar of RFC 9110 §14.4 is accepted.
@Suite("ContentRange")
struct ContentRangeTests {
    struct Accepted: Sendable, CustomTestStringConvertible {
        let header: String
        let range: ClosedRange<Int64>?
        let completeLength: Int64?
        var testDescription: String { "'\(header)'" }
    }

    @Test(
        "The three forms of the grammar parse to their range and complete length",
        arguments: [
            Accepted(header: "bytes 0-0/1", range: 0...0, completeLength: 1),
            Accepted(header: "bytes 0-499/1234", range: 0...499, completeLength: 1234),
            Accepted(header: "bytes 500-1233/1234", range: 500...1233, completeLength: 1234),
            Accepted(header: "bytes 42-99/*", range: 42...99, completeLength: nil),
            Accepted(header: "bytes */1234", range: nil, completeLength: 1234),
            Accepted(header: "bytes */0", range: nil, completeLength: 0),
            Accepted(header: "  bytes 1-2/3\r\n", range: 1...2, completeLength: 3),
            Accepted(header: "Bytes 1-2/3", range: 1...2, completeLength: 3),
            Accepted(
                header: "bytes 10737418240-10737418242/10737418243",
                range: 10_737_418_240...10_737_418_242,
                completeLength: 10_737_418_243
            ),
            Accepted(
                header: "bytes 0-999999999999999998/999999999999999999",
                range: 0...999_999_999_999_999_998,
                completeLength: 999_999_999_999_999_999
            ),
        ]
    )
    func accepts(_ example: Accepted) {
        let parsed = ContentRange(example.header)
        #expect(parsed == ContentRange(range: example.range, completeLength: example.completeLength))
    }

    @Test(
        "Anything outside the grammar is rejected",
        arguments: [
            "",
            "bytes",
            "bytes ",
            "0-1/2",
            "bits 0-1/2",
            "bytes=0-1/2",
            "bytes 0-1",
            "bytes 0-1/2/3",
            "bytes -1/2",
            "bytes 0-/2",
            "bytes -0-1/2",
            "bytes 0--1/2",
            "bytes 0-1/-2",
            "bytes +0-1/2",
            "bytes 0x0-1/2",
            "bytes 0 -1/2",
            "bytes 0-1 /2",
            "bytes 0.0-1/2",
            "bytes ０-1/2",
            "bytes */*",
            "bytes *-1/2",
            "bytes 0-*/2",
            "bytes 0-1/",
            "bytes 0-1/ 2x",
        ]
    )
    func rejectsGarbage(header: String) {
        #expect(ContentRange(header) == nil)
    }

    @Test(
        "A range that is inverted or does not fit its complete length is rejected",
        arguments: [
            "bytes 5-4/10",
            "bytes 0-10/10",
            "bytes 10-10/10",
            "bytes 0-0/0",
            "bytes 11-20/10",
        ]
    )
    func rejectsInconsistentBounds(header: String) {
        #expect(ContentRange(header) == nil)
    }

    @Test(
        "Numbers that could overflow 64 bits are rejected, never trapped on",
        arguments: [
            "bytes 0-1/9223372036854775807",
            "bytes 0-1/9223372036854775808",
            "bytes 0-1/99999999999999999999999999",
            "bytes 0-9223372036854775807/*",
            "bytes 18446744073709551615-18446744073709551616/*",
            "bytes 0000000000000000000000000000000001-2/3",
        ]
    )
    func rejectsOverflow(header: String) {
        #expect(ContentRange(header) == nil)
    }

    @Test("A huge header is rejected without being parsed")
    func rejectsHugeInput() {
        let padded = "bytes 0-1/2" + String(repeating: " ", count: 200) + "x"
        #expect(ContentRange(padded) == nil)
        #expect(ContentRange("bytes " + String(repeating: "1", count: 100_000) + "-2/3") == nil)
    }
}
