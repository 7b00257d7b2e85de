import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// The names in a directory held open (`OpenDirectory`), read in one pass (`readdir`): how a list of thousands of
/// downloads into one directory learns which of their names are free without looking each of them up, three failed
/// `stat` calls a file (`OpenDirectories.lacksAll(_:in:)`).
///
/// A name's presence is compared as Swift compares strings, which treats canonically equivalent names as equal: a
/// listing can take a name for present that a lookup would not find, never the other way round (except on a file
/// system that ignores case, where the lookup finds another case's name and the listing does not).
struct DirectoryListing: Sendable {
    /// The names in the directory when it was read, without `.` and `..`; names made meanwhile may be missing.
    let names: Set<String>

    /// Reads the names in `directory`; nil when it cannot be listed (opened as a path only, where it may be
    /// searched but not read) or holds more than `limit` names, too many to keep for the sake of a few lookups.
    static func read(_ directory: OpenDirectory, limit: Int) -> DirectoryListing? {
        // A descriptor of its own: `readdir` moves the one it reads, and `closedir` closes it.
        let descriptor = openat(directory.descriptor.rawValue, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        guard let stream = fdopendir(descriptor) else {
            close(descriptor)
            return nil
        }
        defer { closedir(stream) }
        var names = Set<String>()
        errno = 0
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name != "." && name != ".." else { continue }
            guard names.count < limit else { return nil }
            names.insert(name)
        }
        // A read that failed part-way says nothing of the names it did not reach.
        guard errno == 0 else { return nil }
        return DirectoryListing(names: names)
    }
}
