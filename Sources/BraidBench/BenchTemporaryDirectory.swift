import Braid

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// The private directory a benchmark's runs write their temporary file in, removed when the benchmark ends.
enum BenchTemporaryDirectory {
    /// Makes a fresh directory in `parent` (`$TMPDIR` or `/tmp` when `nil`) and returns its path.
    static func make(in parent: String?) throws(BraidError) -> String {
        let parent = parent ?? getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array((parent + "/braid-bench-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw BraidError(
                .localIO, "cannot create a temporary directory in \(parent): \(String(cString: strerror(errno)))")
        }
        return String(cString: made)
    }

    /// Removes `path` and whatever is left in it.
    static func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }
}
