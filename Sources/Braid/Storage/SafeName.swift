/// A file or directory name that came from outside (a server, a served document, a daemon client) made safe to
/// create and to show: the one rule for every such name, so that no feature re-decides it.
///
/// A safe name is one path component that
/// - is not empty, `.` or `..`, and has no `/` or `\`;
/// - has no control character (C0, DEL, C1), which a terminal would obey rather than show: each becomes `_`;
/// - has no invisible character (bidirectional overrides, embeddings, isolates and marks such as U+202E, U+2066–2069,
///   U+200E/200F and U+061C; zero-width characters U+200B–200D, U+2060 and U+FEFF; line and paragraph separators
///   U+2028/2029), which would make the name read as something else: each is removed;
/// - has no `:`, which some file systems and tools read as a separator: each becomes `_`;
/// - does not start with blanks, nor end with them: those are removed; nor, unless it is to keep them, with dots (no
///   hidden file a server plants, no `..`);
/// - does not start with `-`, which the next command given the name (`rm *`) would read as an option: it gets a `_`
///   in front;
/// - is at most 200 bytes of UTF-8, so that Braid's own names beside it (`.part`, `.braid.reserve`) still fit the
///   file system's 255: a longer one is cut before its extension, which it keeps;
/// - does not end as the names of those files do (`.part`, `.braid`, `.braid.tmp`, `.braid.reserve`:
///   `DestinationPaths.ownSuffixes`), which a download of the file it names would take for its own partial data or
///   manifest and resume from: the last dot becomes `_` (`big.iso.braid` becomes `big.iso_braid`).
///
/// Whether a name is made safe or refused depends on who chose it. A server's name (`Content-Disposition`, the
/// URL's last path component) is made safe by replacement, as browsers and wget do: the user asked for the file,
/// not for the name (`init(sanitising:)`, `lastComponent(of:)`). A served document's path (a Metalink `name`) has its
/// characters replaced the same way, but a path that would leave the directory (absolute, with an empty, `.` or `..`
/// component) is refused: the document is wrong, and guessing what it meant could overwrite another of its files
/// (`path(sanitising:)`). A name a client gives the daemon (aria2's `out` and `dir`) is refused unless it is safe as
/// it is, since the client is there to read the one-line answer (`init(validating:)`, `path(validating:)`).
///
/// Leading dots depend on who chose the name too. A server's name loses them (`.bashrc` becomes `bashrc`): nothing
/// asked for a hidden file. A name the user chose in a list (`out=.gitattributes`), a daemon client's, and an object
/// store's key (`.gitattributes` in a bucket the user lists) keep them, as aria2 and `aws s3 cp` do: model
/// repositories and datasets carry such files.
///
/// Making a name safe twice changes nothing, so a name that was made safe passes `init(validating:)`.
/// Names the user types (`-o`, `-d`) are the user's own and do not pass through here.
public struct SafeName: Sendable, Hashable, CustomStringConvertible {
    /// The name: one path component.
    public let string: String

    public var description: String { string }

    /// Why a name or a path was refused.
    public struct Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        /// What is wrong with it, as the end of a sentence: "has a '..' component".
        public let reason: String
        public var description: String { reason }
    }

    /// The most bytes a safe name has.
    public static let maximumLength = 200
    /// The most bytes a path of safe names may have before it is made safe.
    public static let maximumPathLength = 4096

    /// `proposed`, one component, made safe by replacement; nil when nothing usable is left (a name of only dots,
    /// blanks or invisible characters). A `/` or `\` in it is replaced too: use `lastComponent(of:)` for a server's
    /// name, which may be a path.
    public init?(sanitising proposed: String, keepingLeadingDots: Bool = false) {
        let (cleaned, _) = Self.clean(Substring(proposed).unicodeScalars, keepingLeadingDots: keepingLeadingDots)
        guard let cleaned else { return nil }
        string = cleaned
    }

    /// `proposed` when it is a safe name as it is (leading dots kept); refused, saying why, when making it safe would
    /// change it.
    public init(validating proposed: String) throws(Refusal) {
        let (cleaned, reason) = Self.clean(Substring(proposed).unicodeScalars, keepingLeadingDots: true)
        guard let cleaned, cleaned.unicodeScalars.elementsEqual(proposed.unicodeScalars) else {
            throw Refusal(reason: reason ?? "is not a plain file name")
        }
        string = proposed
    }

    /// The name a server proposes, which may be a path (`../../etc/passwd`, `C:\x\y`): its last component, split
    /// at `/` and `\`, made safe; nil when nothing usable is left.
    public static func lastComponent(of proposed: String) -> SafeName? {
        // Unicode scalars, not Characters: a combining mark after "/" would hide the slash inside one Character.
        let components = proposed.unicodeScalars.split { $0 == "/" || $0 == "\\" }
        guard let last = components.last else { return nil }
        let (cleaned, _) = clean(last)
        return cleaned.map(SafeName.init(checked:))
    }

    /// A relative path that a document names (`dir/sub/file`), each component made safe by replacement, keeping
    /// its leading dots when `keepingLeadingDots` (an object store's key). Refused when it is empty, absolute, longer
    /// than `maximumPathLength`, or has an empty, `.` or `..` component, or one with nothing usable left.
    public static func path(sanitising proposed: String, keepingLeadingDots: Bool = false) throws(Refusal)
        -> [SafeName]
    {
        try path(proposed) { component throws(Refusal) in
            guard let name = SafeName(sanitising: component, keepingLeadingDots: keepingLeadingDots) else {
                throw Refusal(
                    reason: "has a component with nothing usable in it, "
                        + "'\(PrintableText.escapingControlCharacters(component))'")
            }
            return name
        }
    }

    /// A relative path that a client names (`dir/sub/file`), accepted only when every component is a safe name as
    /// it is; refused, saying why, otherwise.
    public static func path(validating proposed: String) throws(Refusal) -> [SafeName] {
        try path(proposed) { component throws(Refusal) in try SafeName(validating: component) }
    }

    /// `names` joined with `/`, as a relative path.
    public static func joined(_ names: some Sequence<SafeName>) -> String {
        names.map(\.string).joined(separator: "/")
    }

    private init(checked: String) {
        string = checked
    }

    private static func path(
        _ proposed: String,
        component: (String) throws(Refusal) -> SafeName
    ) throws(Refusal) -> [SafeName] {
        guard !proposed.isEmpty else { throw Refusal(reason: "is empty") }
        guard proposed.utf8.count <= maximumPathLength else {
            throw Refusal(reason: "is longer than \(maximumPathLength) bytes")
        }
        guard !proposed.hasPrefix("/") else { throw Refusal(reason: "is an absolute path") }
        var names: [SafeName] = []
        // Split at the byte of `/`, which UTF-8 never uses inside another scalar: the same parts as the scalars'
        // split, each taken whole rather than scalar by scalar.
        for part in proposed.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            let text = String(proposed[part.startIndex..<part.endIndex])
            guard !text.isEmpty else { throw Refusal(reason: "has an empty component") }
            guard text != "." && text != ".." else { throw Refusal(reason: "has a '\(text)' component") }
            names.append(try component(text))
        }
        return names
    }

    /// The rule itself: the safe name `proposed` becomes (nil when nothing usable is left), and the first reason it
    /// had to change, for a refusal.
    private static func clean(
        _ proposed: Substring.UnicodeScalarView, keepingLeadingDots: Bool = false
    ) -> (String?, reason: String?) {
        if let plain = plainASCII(proposed, keepingLeadingDots: keepingLeadingDots) { return (plain, nil) }
        var reason: String?
        func note(_ text: String) { if reason == nil { reason = text } }
        var kept: [Unicode.Scalar] = []
        for scalar in proposed {
            if isInvisible(scalar) {
                note("has an invisible character, \(PrintableText.escapingControlCharacters(String(scalar)))")
            } else if scalar.properties.generalCategory == .control {
                note("has a control character, \(PrintableText.escapingControlCharacters(String(scalar)))")
                kept.append("_")
            } else if scalar == "/" || scalar == "\\" || scalar == ":" {
                note("has a '\(scalar)'")
                kept.append("_")
            } else {
                kept.append(scalar)
            }
        }
        while let first = kept.first, first.properties.isWhitespace || (first == "." && !keepingLeadingDots) {
            note(first == "." ? "starts with a dot" : "starts with a blank")
            kept.removeFirst()
        }
        while let last = kept.last, last.properties.isWhitespace {
            note("ends with a blank")
            kept.removeLast()
        }
        guard !kept.isEmpty else { return (nil, reason ?? "is empty") }
        var cleaned = String(String.UnicodeScalarView(kept))
        if cleaned.hasPrefix("-") {
            note("starts with '-'")
            cleaned = "_" + cleaned
        }
        if cleaned.utf8.count > maximumLength {
            note("is longer than \(maximumLength) bytes")
            cleaned = cut(cleaned)
        }
        if let suffix = DestinationPaths.ownSuffix(of: cleaned) {
            note("ends in '\(suffix)', as Braid's own files beside a download do")
            cleaned = withoutOwnSuffix(cleaned, suffix)
        }
        return (cleaned, reason)
    }

    /// `name`, which ends in `suffix`, with the suffix's last dot made `_`: `big.iso.braid.tmp` becomes
    /// `big.iso.braid_tmp`, which ends in none of them.
    private static func withoutOwnSuffix(_ name: String, _ suffix: String) -> String {
        let dot = suffix.utf8.lastIndex(of: UInt8(ascii: "."))!
        let fromEnd = suffix.utf8.distance(from: dot, to: suffix.utf8.endIndex)
        let position = name.utf8.index(name.utf8.endIndex, offsetBy: -fromEnd)
        return String(name[..<position]) + "_" + String(name[name.utf8.index(after: position)...])
    }

    /// `name`, longer than `maximumLength`, cut to it where it keeps its extension (`.safetensors`, `.tar.gz`'s
    /// `.gz`: a dot and at most 16 bytes of no blank after it), which says what the file is and what opens it: the
    /// rest is cut before it.
    private static func cut(_ name: String) -> String {
        var scalars = Array(name.unicodeScalars)
        var extensionStart = scalars.count
        if let dot = scalars.lastIndex(of: "."), dot > 0,
            case let tail = scalars[(dot + 1)...], !tail.isEmpty,
            String(String.UnicodeScalarView(tail)).utf8.count <= 16, !tail.contains(where: \.properties.isWhitespace)
        {
            extensionStart = dot
        }
        let kept = Array(scalars[extensionStart...])
        scalars.removeSubrange(extensionStart...)
        let room = maximumLength - String(String.UnicodeScalarView(kept)).utf8.count
        // By scalars: one Character can be longer than the whole name (a letter with a thousand marks).
        var length = String(String.UnicodeScalarView(scalars)).utf8.count
        while length > room, let last = scalars.popLast() { length -= String(last).utf8.count }
        while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() }
        return String(String.UnicodeScalarView(scalars + kept))
    }

    /// `proposed` as it is when it is printable ASCII that no rule of `clean` changes, as most names are (a list's
    /// `out=`, a URL's last segment): each of a list's thousand files is placed several times, and this needs no
    /// look-up of a character's properties.
    private static func plainASCII(_ proposed: Substring.UnicodeScalarView, keepingLeadingDots: Bool) -> String? {
        let text = Substring(proposed)
        let bytes = text.utf8
        guard let first = bytes.first, let last = bytes.last, bytes.count <= maximumLength,
            first != UInt8(ascii: ".") || keepingLeadingDots, first != UInt8(ascii: " "), first != UInt8(ascii: "-"),
            last != UInt8(ascii: " "), DestinationPaths.ownSuffix(ofBytes: bytes) == nil
        else { return nil }
        for byte in bytes {
            guard (0x20...0x7E).contains(byte), byte != UInt8(ascii: "/"), byte != UInt8(ascii: "\\"),
                byte != UInt8(ascii: ":")
            else { return nil }
        }
        return String(text)
    }

    /// Characters that show nothing yet change how a name reads: format characters (the bidirectional controls,
    /// the zero-width ones, U+FEFF) and line and paragraph separators.
    static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .format, .lineSeparator, .paragraphSeparator: true
        default: false
        }
    }
}
