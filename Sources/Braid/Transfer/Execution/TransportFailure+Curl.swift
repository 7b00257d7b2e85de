import CCurl

extension TransportFailure {
    /// libcurl's failure `code` in Braid's terms, with libcurl's `detail` and the code kept as the cause.
    init(_ code: CURLcode, detail: String) {
        self.init(kind: Self.kind(of: code, detail: detail), detail: detail, cause: .curl(code: Int(code.rawValue)))
    }

    private static func kind(of code: CURLcode, detail: String) -> Kind {
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: .nameNotResolved
        case CURLE_COULDNT_CONNECT: .couldNotConnect
        case CURLE_OPERATION_TIMEDOUT: .timedOut
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_HTTP2,
            CURLE_HTTP2_STREAM, CURLE_BAD_CONTENT_ENCODING:
            .connectionBroken
        case CURLE_TOO_MANY_REDIRECTS: .tooManyRedirects
        case CURLE_WEIRD_SERVER_REPLY: .malformedResponse
        // libcurl 7.88 says so of an answer that is not HTTP ("Received HTTP/0.9 when not allowed") too.
        case CURLE_UNSUPPORTED_PROTOCOL: detail.contains("HTTP/0.9") ? .malformedResponse : .unsupportedScheme
        case CURLE_URL_MALFORMAT: .malformedURL
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM: .untrustedCertificate
        case CURLE_SSL_CONNECT_ERROR: .tlsHandshakeFailed
        case CURLE_WRITE_ERROR: .writeAborted
        default: .other
        }
    }
}
