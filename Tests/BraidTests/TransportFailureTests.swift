import CCurl
import Testing

@testable import Braid

/// The engine's boundary: libcurl's result codes become Braid's own kinds of failure, keeping libcurl's code only
/// as the cause, and each kind is retried or not as the code was.
@Suite("TransportFailure")
struct TransportFailureTests {
    static let transient = FailureKind.transient(.network, "detail", retryAfter: nil, refusedConnection: false)

    @Test(
        "Each libcurl code maps to its kind, and fails the download as it did",
        arguments: [
            (CURLE_COULDNT_RESOLVE_HOST, TransportFailure.Kind.nameNotResolved, transient),
            (CURLE_COULDNT_RESOLVE_PROXY, .nameNotResolved, transient),
            (CURLE_COULDNT_CONNECT, .couldNotConnect, transient),
            (CURLE_OPERATION_TIMEDOUT, .timedOut, transient),
            (CURLE_RECV_ERROR, .connectionBroken, transient),
            (CURLE_SEND_ERROR, .connectionBroken, transient),
            (CURLE_GOT_NOTHING, .connectionBroken, transient),
            (CURLE_PARTIAL_FILE, .connectionBroken, transient),
            (CURLE_HTTP2, .connectionBroken, transient),
            (CURLE_HTTP2_STREAM, .connectionBroken, transient),
            (CURLE_BAD_CONTENT_ENCODING, .connectionBroken, transient),
            (
                CURLE_TOO_MANY_REDIRECTS, .tooManyRedirects,
                .fatal(.protocolViolation, "too many redirects (a redirect loop?): detail")
            ),
            (
                CURLE_UNSUPPORTED_PROTOCOL, .unsupportedScheme,
                .fatal(.protocolViolation, "refusing a URL or redirect that is not http or https: detail")
            ),
            (CURLE_URL_MALFORMAT, .malformedURL, .fatal(.usage, "malformed URL: detail")),
            (
                CURLE_PEER_FAILED_VERIFICATION, .untrustedCertificate,
                .fatal(.network, "TLS certificate not trusted: detail")
            ),
            (CURLE_SSL_CACERT_BADFILE, .untrustedCertificate, .fatal(.network, "TLS certificate not trusted: detail")),
            (CURLE_SSL_CERTPROBLEM, .untrustedCertificate, .fatal(.network, "TLS certificate not trusted: detail")),
            (CURLE_SSL_CONNECT_ERROR, .tlsHandshakeFailed, .fatal(.network, "TLS handshake failed: detail")),
            (CURLE_WRITE_ERROR, .writeAborted, .fatal(.localIO, "writing the download failed: detail")),
            (
                CURLE_WEIRD_SERVER_REPLY, .malformedResponse,
                .transient(
                    .protocolViolation, "the server's answer is not valid HTTP: detail", retryAfter: nil,
                    refusedConnection: false)
            ),
            (CURLE_OUT_OF_MEMORY, .other, transient),
            (CURLE_SSL_ENGINE_NOTFOUND, .other, transient),
        ] as [(CURLcode, TransportFailure.Kind, FailureKind)]
    )
    func mapping(code: CURLcode, kind: TransportFailure.Kind, classified: FailureKind) {
        let failure = TransportFailure(code, detail: "detail")
        #expect(failure.kind == kind)
        #expect(failure.detail == "detail")
        #expect(failure.cause?.curlCode == Int(code.rawValue))
        #expect(FailureKind.classify(failure) == classified)
    }

    @Test("An answer that is not HTTP is a malformed response, though libcurl 7.88 gives it the code of a scheme")
    func notHTTP() {
        let failure = TransportFailure(CURLE_UNSUPPORTED_PROTOCOL, detail: "Received HTTP/0.9 when not allowed")
        #expect(failure.kind == .malformedResponse)
        #expect(
            FailureKind.classify(failure)
                == .transient(
                    .protocolViolation, "the server's answer is not valid HTTP: Received HTTP/0.9 when not allowed",
                    retryAfter: nil, refusedConnection: false))
    }

    @Test(
        "A head larger than libcurl takes is the server's violation, not retried; out of memory elsewhere is not one",
        arguments: [
            (CURLE_OUT_OF_MEMORY, "Out of memory", "a header line longer than 100 KB"),
            (
                CURLE_RECV_ERROR, "Too large response headers: 312377 > 307200",
                "Too large response headers: 312377 > 307200"
            ),
        ] as [(CURLcode, String, String)]
    )
    func oversizedHead(code: CURLcode, detail: String, said: String) {
        let failure = TransportFailure(code, detail: detail, inHead: true)
        #expect(failure.kind == .oversizedHead)
        #expect(
            FailureKind.classify(failure)
                == .fatal(.protocolViolation, "the server's response headers are larger than libcurl takes: \(said)"))
        #expect(TransportFailure(CURLE_OUT_OF_MEMORY, detail: "Out of memory", inHead: false).kind == .other)
    }

    @Test("Only an untrusted certificate has a remedy other than waiting")
    func remedies() {
        let kinds: [TransportFailure.Kind] = [
            .nameNotResolved, .couldNotConnect, .timedOut, .connectionBroken, .tooManyRedirects, .unsupportedScheme,
            .malformedURL, .tlsHandshakeFailed, .writeAborted, .other, .malformedResponse, .oversizedHead,
        ]
        #expect(FailureKind.remedies(for: .untrustedCertificate) == [.trustCertificate])
        #expect(kinds.allSatisfy { FailureKind.remedies(for: $0).isEmpty })
    }
}
