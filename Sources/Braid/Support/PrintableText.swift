/// Text that came from the network or a file, made safe to print or log.
///
/// A server chooses its headers, its redirect targets and its file names, and a list file can hold anything: any of
/// them reaching a terminal raw could move the cursor, rewrite earlier lines or retitle the window. Control
/// characters (C0, DEL, C1), the bidirectional controls that reorder what a line appears to say, and the invisible
/// characters that hide what it says (zero-width characters, line and paragraph separators) are shown as escapes
/// instead (`\x1B`, `\u{202E}`), and the password of any `scheme://user:password@host` in the text is replaced with
/// `***`, so neither a message nor a log line repeats a secret; a URL in a log line has its signature hidden too
/// (`sanitised(url:)`).
///
/// `escapingControlCharacters(_:)` is the one function every name and path goes through on its way to a terminal.
public enum PrintableText {
    /// `text` with control characters escaped and URL passwords hidden.
    public static func sanitised(_ text: String) -> String {
        escapingControlCharacters(hidingPasswords(text))
    }

    /// `url` as a log line shows it: `sanitised`, and the value of every query parameter that signs or authorises
    /// the request replaced with `***` (`isSecretParameter`). A presigned URL works for anyone who holds it until it
    /// expires: a `-vv` log pasted into an issue must not hand it over. Messages keep the query, which tells a user
    /// which URL failed; the manifest keeps it too, readable by its owner only.
    public static func sanitised(url: String) -> String {
        sanitised(hidingSecretParameters(url))
    }

    /// `url` with the values of its secret query parameters (`isSecretParameter`) replaced with `***`.
    private static func hidingSecretParameters(_ url: String) -> String {
        guard let question = url.firstIndex(of: "?") else { return url }
        let end = url[question...].firstIndex(of: "#") ?? url.endIndex
        let parameters = url[url.index(after: question)..<end].split(separator: "&", omittingEmptySubsequences: false)
        guard parameters.contains(where: { isSecretParameter($0.prefix { $0 != "=" }) }) else { return url }
        let query = parameters.map { parameter -> Substring in
            let name = parameter.prefix { $0 != "=" }
            return isSecretParameter(name) && name.endIndex < parameter.endIndex ? name + "=***" : parameter
        }
        return String(url[...question]) + query.joined(separator: "&") + url[end...]
    }

    /// Whether a query parameter named `name` carries a secret: a signature (S3's and GCS's `X-Amz-Signature`,
    /// `X-Goog-Signature`, Azure's `sig`, CloudFront's `Signature`), a credential or token (`X-Amz-Credential`,
    /// `X-Amz-Security-Token`, `access_token`), a key (`key`, `api_key`, `Key-Pair-Id`), a password. Matched on
    /// parts of the name, so that a store's own spelling of them is hidden too: a harmless parameter hidden costs a
    /// log line some detail, a secret shown costs the secret.
    private static func isSecretParameter(_ name: Substring) -> Bool {
        let lowered = name.lowercased()
        return secretParameterParts.contains { lowered.contains($0) }
    }

    private static let secretParameterParts = ["sig", "token", "key", "credential", "secret", "pass", "auth"]

    /// `text` with C0, DEL, C1, bidirectional control and invisible characters written as visible escapes: a name or
    /// a path as a terminal is to show it. Escaping twice changes nothing more.
    public static func escapingControlCharacters(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnprintable) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if isUnprintable(scalar) {
                result += scalar.value <= 0xFF ? "\\x" + hex(scalar.value, digits: 2) : "\\u{" + hex(scalar.value) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// `text` with the password of every `scheme://user:password@` in it replaced by `***`.
    public static func hidingPasswords(_ text: String) -> String {
        guard text.contains("@") else { return text }
        var result = Substring()
        var rest = Substring(text)
        while let marker = rest.firstRange(of: "://") {
            // In a message, a URL's text ends where the words around it go on: at a space or a quote.
            let end = rest[marker.upperBound...].firstIndex { $0 == " " || $0 == "'" || $0 == "\"" } ?? rest.endIndex
            let url = rest[marker.lowerBound..<end]
            if let userinfo = URLUserinfo.range(in: url), let colon = url[userinfo].firstIndex(of: ":") {
                result += rest[...colon] + "***"
                rest = rest[url.index(before: userinfo.upperBound)...]
            } else {
                result += rest[..<marker.upperBound]
                rest = rest[marker.upperBound...]
            }
        }
        return String(result + rest)
    }

    /// Characters that change how a terminal shows what follows them, or show nothing, rather than showing
    /// themselves: controls (C0, DEL, C1), bidirectional controls (U+202A–202E, U+2066–2069, U+200E/200F, U+061C),
    /// zero-width characters (U+200B–200D, U+2060, U+FEFF) and line and paragraph separators (U+2028/2029).
    public static func isUnprintable(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: true
        case 0x200B...0x200D, 0x2060, 0xFEFF, 0x2028, 0x2029: true
        default: false
        }
    }

    private static func hex(_ value: UInt32, digits: Int = 0) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
