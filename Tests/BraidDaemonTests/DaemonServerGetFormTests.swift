import Testing

@testable import BraidDaemon

/// `JSONRPCGetForm`: aria2's GET query turned into the JSON-RPC text a POST would carry.
@Suite("DaemonServer GET form")
struct DaemonServerGetFormTests {
    private func request(_ query: String) throws -> String {
        String(decoding: try JSONRPCGetForm(query: query[...]).body, as: UTF8.self)
    }

    @Test("method, id (as a string) and base64 params make the request, in that order")
    func wholeRequest() throws {
        // base64 of ["token:x",["http://a/b"]]
        let params = "WyJ0b2tlbjp4IixbImh0dHA6Ly9hL2IiXV0="
        #expect(
            try request("method=aria2.addUri&id=7&params=\(params)")
                == #"{"jsonrpc":"2.0","method":"aria2.addUri","id":"7","params":["token:x",["http://a/b"]]}"#
        )
    }

    @Test("Without id the request is a notification; without params it has none")
    func optionalFields() throws {
        #expect(try request("method=aria2.getVersion") == #"{"jsonrpc":"2.0","method":"aria2.getVersion"}"#)
        #expect(try request("params=&method=m&id=") == #"{"jsonrpc":"2.0","method":"m","id":""}"#)
    }

    @Test("Values are percent-decoded, `+` stays a plus (base64 needs it), and strings are JSON-escaped")
    func decodingAndEscaping() throws {
        #expect(
            try request("method=a%2Eb&id=%22q%22%5C%0A+x")
                == #"{"jsonrpc":"2.0","method":"a.b","id":"\"q\"\\\u000a+x"}"#)
        #expect(try request("method=%zz%4") == #"{"jsonrpc":"2.0","method":"%zz%4"}"#)
    }

    @Test("Base64 in both alphabets, padded or not, URL-encoded or raw")
    func base64Alphabets() throws {
        // [">?"] is WyI+PyJd in standard base64 and WyI-PyJd in the URL-safe alphabet.
        for params in ["WyI+PyJd", "WyI-PyJd", "WyI%2BPyJd"] {
            #expect(try request("method=m&params=\(params)") == #"{"jsonrpc":"2.0","method":"m","params":[">?"]}"#)
        }
        #expect(Base64.decoded(Array("YQ".utf8)) == Array("a".utf8))
        #expect(Base64.decoded(Array("YQ==".utf8)) == Array("a".utf8))
        #expect(Base64.decoded(Array("".utf8)) == [])
    }

    @Test(
        "Queries that cannot be requests fail with aria2's JSON-RPC error",
        arguments: [
            ("id=1", JSONRPCGetForm.Failure.missingMethod),
            ("method=&id=1", .missingMethod),
            ("method=m&params=%25%25", .malformedParams),
            ("method=m&params=Y", .malformedParams),
            ("method=m&params=YQ===", .malformedParams),
            ("method=m&params=Y*Q=", .malformedParams),
            ("method=m&jsoncallback=alert(1)", .malformedCallback),
            ("method=m&jsoncallback=", .malformedCallback),
        ] as [(String, JSONRPCGetForm.Failure)]
    )
    func failures(query: String, failure: JSONRPCGetForm.Failure) {
        #expect(throws: failure) { try JSONRPCGetForm(query: query[...]) }
    }

    @Test("jsoncallback names the JSONP function")
    func callback() throws {
        #expect(try JSONRPCGetForm(query: "method=m&jsoncallback=jQuery_1.cb$"[...]).callback == "jQuery_1.cb$")
        #expect(try JSONRPCGetForm(query: "method=m"[...]).callback == nil)
    }
}
