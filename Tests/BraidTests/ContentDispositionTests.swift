import Testing

@testable import Braid

/// The file name a server proposes is untrusted: it is parsed per RFC 6266 / RFC 8187 and then reduced to one
/// harmless path component.
@Suite("ContentDisposition")
struct ContentDispositionTests {
    struct Example: Sendable, CustomTestStringConvertible {
        let header: String
        let filename: String?
        var testDescription: String { "'\(header)'" }
    }

    @Test(
        "The filename parameter is read in its token, quoted and extended forms",
        arguments: [
            Example(header: "attachment; filename=report.pdf", filename: "report.pdf"),
            Example(header: "attachment;filename=report.pdf", filename: "report.pdf"),
            Example(header: "attachment; FILENAME = report.pdf ", filename: "report.pdf"),
            Example(header: "inline; filename=\"annual report.pdf\"", filename: "annual report.pdf"),
            Example(header: "attachment; filename=\"a;b.txt\"; size=3", filename: "a;b.txt"),
            Example(header: #"attachment; filename="say \"hi\".txt""#, filename: #"say "hi".txt"#),
            Example(header: #"attachment; filename="back\\slash.txt""#, filename: "slash.txt"),
            Example(header: "attachment; filename*=UTF-8''%E2%82%AC%20rates.txt", filename: "€ rates.txt"),
            Example(header: "attachment; filename*=utf-8'en'na%C3%AFve.txt", filename: "naïve.txt"),
            Example(header: "attachment; filename*=ISO-8859-1''%E9t%E9.txt", filename: "été.txt"),
            Example(header: "attachment; size=3; creation-date=\"x\"; filename=late.bin", filename: "late.bin"),
        ]
    )
    func parsesFilename(_ example: Example) {
        #expect(ContentDisposition.filename(from: example.header) == example.filename)
    }

    @Test(
        "filename* wins over filename, in either order",
        arguments: [
            "attachment; filename=\"fallback.txt\"; filename*=UTF-8''%E2%82%AC.txt",
            "attachment; filename*=UTF-8''%E2%82%AC.txt; filename=\"fallback.txt\"",
        ]
    )
    func extendedWins(header: String) {
        #expect(ContentDisposition.filename(from: header) == "€.txt")
    }

    @Test(
        "A filename* that cannot be decoded falls back to filename",
        arguments: [
            "attachment; filename*=UTF-8''%ZZbad; filename=good.txt",
            "attachment; filename*=UTF-8''%E2%82; filename=good.txt",
            "attachment; filename*=KOI8-R''%C1; filename=good.txt",
            "attachment; filename*=no-quotes.txt; filename=good.txt",
            "attachment; filename*=UTF-8''%4; filename=good.txt",
        ]
    )
    func undecodableExtendedFallsBack(header: String) {
        #expect(ContentDisposition.filename(from: header) == "good.txt")
    }

    @Test(
        "A header without a usable name gives nil",
        arguments: [
            "",
            "attachment",
            "inline",
            "attachment; filename=",
            "attachment; filename=\"\"",
            "attachment; filename=\"..\"",
            "attachment; filename=../",
            "attachment; name=x.txt",
            "attachment; filename*=UTF-8''%2F%2E%2E%2F",
        ]
    )
    func noUsableName(header: String) {
        #expect(ContentDisposition.filename(from: header) == nil)
    }

    @Test("Path traversal in filename* is stripped after decoding")
    func traversalAfterDecoding() {
        let header = "attachment; filename*=UTF-8''..%2F..%2Fetc%2Fpasswd"
        #expect(ContentDisposition.filename(from: header) == "passwd")
    }

    @Test("An oversized header is ignored")
    func oversizedHeader() {
        let header = "attachment; filename=" + String(repeating: "a", count: 5000)
        #expect(ContentDisposition.filename(from: header) == nil)
    }
}
