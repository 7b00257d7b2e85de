/// aria2's GET form of a JSON-RPC call, `/jsonrpc?method=M&id=I&params=BASE64[&jsoncallback=F]`, turned into the
/// JSON-RPC request text a POST would have carried: a pure value.
///
/// As in aria2, query values are percent-decoded without turning `+` into a space (base64 uses `+`), `id` becomes a
/// JSON string, and `params` is the base64 (standard or URL-safe, padding optional) of a JSON array, inserted as it is:
/// the endpoint parses it and answers malformed JSON with a JSON-RPC error.
struct JSONRPCGetForm: Equatable {
    /// Why a query could not be turned into a request; carries the JSON-RPC error aria2 gives for it.
    enum Failure: Error, Equatable {
        /// No `method` (or an empty one): JSON-RPC's invalid request.
        case missingMethod
        /// `params` is not base64.
        case malformedParams
        /// `jsoncallback` is not a plain JavaScript name, which could smuggle script into the JSONP answer.
        case malformedCallback

        /// The JSON-RPC error code.
        var code: Int { self == .missingMethod ? -32600 : -32700 }
        /// The JSON-RPC error message, with aria2's wording.
        var message: String { self == .missingMethod ? "Invalid Request." : "Parse error." }
    }

    /// The JSON-RPC request, as UTF-8 JSON text.
    let body: [UInt8]
    /// The JSONP function to wrap the answer in, when `jsoncallback` was given.
    let callback: String?

    init(query: Substring) throws(Failure) {
        var fields: [String: [UInt8]] = [:]
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let name = pair.prefix { $0 != "=" }
            let value = pair.dropFirst(name.count + 1)
            fields[String(decoding: Self.percentDecoded(name), as: UTF8.self)] = Self.percentDecoded(value)
        }
        guard let method = fields["method"], !method.isEmpty else { throw .missingMethod }

        var body = Array(#"{"jsonrpc":"2.0","method":"#.utf8)
        Self.appendJSONString(method, to: &body)
        if let id = fields["id"] {
            body += Array(#","id":"#.utf8)
            Self.appendJSONString(id, to: &body)
        }
        if let params = fields["params"], !params.isEmpty {
            guard let json = Base64.decoded(params) else { throw .malformedParams }
            body += Array(#","params":"#.utf8)
            body += json
        }
        body.append(UInt8(ascii: "}"))
        self.body = body

        if let callback = fields["jsoncallback"] {
            guard !callback.isEmpty, callback.allSatisfy(Self.isCallbackByte) else { throw .malformedCallback }
            self.callback = String(decoding: callback, as: UTF8.self)
        } else {
            self.callback = nil
        }
    }

    private static func isCallbackByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "$"), UInt8(ascii: "."):
            true
        default:
            false
        }
    }

    /// `%XX` sequences decoded to bytes; a `%` not followed by two hex digits stays as it is.
    static func percentDecoded(_ text: Substring) -> [UInt8] {
        let bytes = Array(text.utf8)
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
            {
                decoded.append(high << 4 | low)
                index += 3
            } else {
                decoded.append(bytes[index])
                index += 1
            }
        }
        return decoded
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// `bytes` as a JSON string literal: quotes, backslashes and control characters escaped, the rest as it is.
    static func appendJSONString(_ bytes: [UInt8], to json: inout [UInt8]) {
        let hexDigits = Array("0123456789abcdef".utf8)
        json.append(UInt8(ascii: "\""))
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                json += [UInt8(ascii: "\\"), byte]
            case 0..<0x20:
                json += Array(#"\u00"#.utf8) + [hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]]
            default:
                json.append(byte)
            }
        }
        json.append(UInt8(ascii: "\""))
    }
}
