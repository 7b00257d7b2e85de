import CCurl

extension TransportFailure {
    /// libcurl's failure `code` in Braid's terms, with libcurl's `detail` and the code kept as the cause; `inHead`
    /// says whether it came while a response's head was arriving (`ResponseHeaders.isHeadOpen`).
    init(_ code: CURLcode, detail: String, inHead: Bool = false) {
        let cause = BraidError.Cause.curl(code: Int(code.rawValue))
        // libcurl 7.88 refuses a header line longer than CURL_MAX_HTTP_HEADER with the code of a failed allocation
        // and no message of its own. Its allocations failing just then, and only then, is all but impossible;
        // elsewhere the code keeps its meaning.
        if code == CURLE_OUT_OF_MEMORY && inHead {
            self.init(
                kind: .oversizedHead, detail: "a header line longer than \(CURL_MAX_HTTP_HEADER >> 10) KB",
                cause: cause)
            return
        }
        self.init(kind: Self.kind(of: code, detail: detail), detail: detail, cause: cause)
    }

    private static func kind(of code: CURLcode, detail: String) -> Kind {
        switch code {
        // libcurl's cap on a whole head, since 8.3 and in Debian's 7.88: "Too large response headers: N > 307200".
        case CURLE_RECV_ERROR where detail.contains("Too large response headers"): .oversizedHead
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
