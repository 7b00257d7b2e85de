import Testing

@testable import Braid

/// Which of a manager's downloads start on their lane's pool thread (`DownloadJob.startsOnPool`).
@Suite("pooled start rule")
struct PooledStartRuleTests {
    @Test("an HTTP or HTTPS URL starts there, its scheme written in any case; no other scheme does")
    func schemes() {
        let options = DownloadOptions()
        for url in ["https://example.org/f", "HTTPS://example.org/f", "Http://example.org/f", "http://example.org/f"] {
            #expect(DownloadJob.startsOnPool(url: url, options: options, limiter: nil), "\(url)")
        }
        for url in ["ftp://example.org/f", "s3://bucket/key", "httpx://example.org/f", "https:/example.org", "h"] {
            #expect(!DownloadJob.startsOnPool(url: url, options: options, limiter: nil), "\(url)")
        }
    }
}
