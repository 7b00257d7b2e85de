import Braid
import Testing

/// The versions `braid --version` prints, read from the libraries loaded at run time.
@Suite("BraidVersion")
struct BraidVersionTests {
    @Test("Braid's own version is three dot-separated numbers, as sent in the User-Agent")
    func braidVersion() {
        let parts = BraidVersion.current.split(separator: ".")
        #expect(parts.count == 3 && parts.allSatisfy { Int($0) != nil }, "\(BraidVersion.current)")
    }

    @Test("libcurl reports a dotted version, built with OpenSSL")
    func libcurl() {
        #expect(BraidVersion.libcurl.split(separator: ".").allSatisfy { Int($0) != nil }, "\(BraidVersion.libcurl)")
        #expect(BraidVersion.libcurl.split(separator: ".").count == 3)
        #expect(BraidVersion.libcurlTLS?.hasPrefix("OpenSSL/") == true, "\(BraidVersion.libcurlTLS ?? "no TLS")")
    }

    @Test("libcurl's TLS and Braid's digests run on the same OpenSSL")
    func openSSL() throws {
        let words = BraidVersion.openSSL.split(separator: " ")
        #expect(words.first == "OpenSSL", "\(BraidVersion.openSSL)")
        let tls = try #require(BraidVersion.libcurlTLS)
        #expect(tls == "OpenSSL/" + (words.dropFirst().first ?? ""), "\(tls) vs \(BraidVersion.openSSL)")
    }
}
