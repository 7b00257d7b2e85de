import CLinuxIO
import COnDemand
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// Writing one entry: each kind to a temporary name in its directory, renamed into place once complete, in a
/// directory reached from the extraction's root one component at a time without following links.
extension ArchiveExtractor {
    func write(_ entry: OpaquePointer, index: Int, from archive: OpaquePointer, source: ArchiveSource)
        throws(BraidError)
    {
        let name = Self.text(archive_entry_pathname_utf8(entry) ?? archive_entry_pathname(entry)) ?? ""
        let path: [SafeName]
        do {
            path = try ArchiveMember.path(name)
        } catch {
            return refuse(name, "its name \(error.reason)")
        }
        guard let last = path.last, let root else { return }  // the directory itself: nothing to write
        let shown = SafeName.joined(path)
        let directory: OpenDirectory
        do {
            directory = try root.descend(into: Array(path.dropLast()), creating: true)
        } catch .tooManySymbolicLinkLevels {
            return refuse(name, "a directory on its way is a symbolic link, which is never followed")
        } catch .notDirectory {
            return refuse(name, "a directory on its way is a file")
        } catch {
            throw BraidError.localIO("cannot create the directories of \(shown) in \(root.path)", error)
        }
        let temporary = ".braid-entry-\(index).tmp"
        _ = unlinkat(directory.descriptor.rawValue, temporary, 0)
        let mode = mode_t(archive_entry_perm(entry)) & 0o777 & ~umask
        let type = archive_entry_filetype(entry)
        if let target = Self.text(archive_entry_hardlink_utf8(entry) ?? archive_entry_hardlink(entry)) {
            try hardLink(name, at: path, in: directory, to: target, temporary: temporary)
        } else if type == Self.directoryType {
            try makeDirectory(name, at: path, in: directory, mode: mode)
        } else if type == Self.symbolicLinkType {
            let target = Self.text(archive_entry_symlink_utf8(entry) ?? archive_entry_symlink(entry)) ?? ""
            guard ArchiveMember.linkStaysInside(at: path, target: target) else {
                return refuse(name, "a symbolic link to '\(target)', outside \(options.directory)")
            }
            guard symlinkat(target, directory.descriptor.rawValue, temporary) == 0 else {
                throw BraidError.localIO("cannot create the link \(shown)", Errno(rawValue: errno))
            }
            try place(temporary, as: last, in: directory, shown: shown)
        } else if type == Self.regularType {
            try writeFile(
                entry, from: archive, source: source, at: path, in: directory, mode: mode, temporary: temporary)
        } else {
            return refuse(name, "a device file, FIFO or socket, which is never created")
        }
        if shown != name.split(separator: "/").filter({ $0 != "." }).joined(separator: "/") {
            notice("archive: '\(PrintableText.escapingControlCharacters(name))' was unpacked as '\(shown)'")
        }
        counts(\.written)
    }

    private func writeFile(
        _ entry: OpaquePointer, from archive: OpaquePointer, source: ArchiveSource, at path: [SafeName],
        in directory: OpenDirectory, mode: mode_t, temporary: String
    ) throws(BraidError) {
        let shown = SafeName.joined(path)
        let size = archive_entry_size_is_set(entry) != 0 ? archive_entry_size(entry) : 0
        declared += max(0, size)
        guard declared <= maximumUnpacked else { throw bomb() }
        let opened = openat(
            directory.descriptor.rawValue, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard opened >= 0 else { throw BraidError.localIO("cannot create \(shown)", Errno(rawValue: errno)) }
        let file = FileDescriptor(rawValue: opened)
        defer { try? file.close() }
        var end: Int64 = 0
        var written: Int64 = 0
        while true {
            var block: UnsafeRawPointer?
            var count = 0
            var offset: Int64 = 0
            let status = archive_read_data_block(archive, &block, &count, &offset)
            if status == ARCHIVE_EOF { break }
            try check(status, archive, source: source, doing: "reading \(shown)")
            guard count > 0, let block else { continue }
            written += Int64(count)
            // A size the header did not declare (a zip entry with a data descriptor) counts as it arrives.
            if offset + Int64(count) > max(size, end) {
                declared += offset + Int64(count) - max(size, end)
                guard declared <= maximumUnpacked else { throw bomb() }
            }
            do {
                _ = try file.writeAll(toAbsoluteOffset: offset, UnsafeRawBufferPointer(start: block, count: count))
            } catch {
                throw BraidError.localIO("cannot write \(shown)", error)
            }
            end = max(end, offset + Int64(count))
        }
        do {
            // A sparse file's last hole, and an empty file's length.
            if max(size, end) > end { try file.resize(to: max(size, end)) }
            try file.setPermissions(FilePermissions(rawValue: mode))
            if archive_entry_mtime_is_set(entry) != 0 {
                let time = Double(archive_entry_mtime(entry)) + Double(archive_entry_mtime_nsec(entry)) / 1e9
                try file.setModificationTime(secondsSince1970: time)
            }
        } catch {
            throw BraidError.localIO("cannot finish \(shown)", error)
        }
        try place(temporary, as: path[path.count - 1], in: directory, shown: shown)
        placed.insert(shown)
        wrote(bytes: written)
    }

    private func makeDirectory(_ name: String, at path: [SafeName], in directory: OpenDirectory, mode: mode_t)
        throws(BraidError)
    {
        do {
            // Made open to its owner while entries go in; its own permissions come once every entry is in place.
            let made = try directory.descend(into: path[path.count - 1], creating: true)
            try? made.descriptor.setPermissions(FilePermissions(rawValue: mode | 0o700))
            directoryModes.append((path, mode))
        } catch .tooManySymbolicLinkLevels {
            refuse(name, "a symbolic link is in its place, which is never followed")
        } catch .notDirectory {
            refuse(name, "a file is in its place")
        } catch {
            throw BraidError.localIO("cannot create the directory \(SafeName.joined(path))", error)
        }
    }

    /// A hard link to an entry of this archive already in place: one this run wrote, or after a resume, a regular
    /// file at that name (never through a link on the way, and never a link itself).
    private func hardLink(
        _ name: String, at path: [SafeName], in directory: OpenDirectory, to target: String, temporary: String
    ) throws(BraidError) {
        guard let root, let targetPath = try? ArchiveMember.path(target), let targetName = targetPath.last else {
            return refuse(name, "a hard link to '\(target)', outside \(options.directory)")
        }
        let key = SafeName.joined(targetPath)
        let targetDirectory = try? root.descend(into: Array(targetPath.dropLast()), creating: false)
        let status = try? FilePath(targetName.string).stat(
            relativeTo: targetDirectory?.descriptor ?? root.descriptor, flags: .symlinkNoFollow)
        guard let targetDirectory, status?.type == .regular, placed.contains(key) || completeBefore > 0 else {
            return refuse(name, "a hard link to '\(target)', which is not a file unpacked from this archive")
        }
        guard
            linkat(
                targetDirectory.descriptor.rawValue, targetName.string, directory.descriptor.rawValue, temporary, 0)
                == 0
        else {
            throw BraidError.localIO("cannot link \(SafeName.joined(path)) to \(key)", Errno(rawValue: errno))
        }
        try place(temporary, as: path[path.count - 1], in: directory, shown: SafeName.joined(path))
        placed.insert(SafeName.joined(path))
    }

    /// Renames a finished entry into place, replacing a file or link there (never what a link points to); a
    /// directory in its place refuses it.
    private func place(_ temporary: String, as name: SafeName, in directory: OpenDirectory, shown: String)
        throws(BraidError)
    {
        let fd = directory.descriptor.rawValue
        guard renameat(fd, temporary, fd, name.string) == 0 else {
            let error = Errno(rawValue: errno)
            _ = unlinkat(fd, temporary, 0)
            if error == .isDirectory || error == .directoryNotEmpty {
                return refuse(shown, "a directory is in its place")
            }
            throw BraidError.localIO("cannot put \(shown) in place", error)
        }
    }

    /// Gives the directories this run made their own permissions, deepest first, once nothing more goes in.
    func applyDirectoryModes() throws(BraidError) {
        guard let root else { return }
        for (path, mode) in directoryModes.sorted(by: { $0.0.count > $1.0.count }) {
            guard let directory = try? root.descend(into: path, creating: false) else { continue }
            try? directory.descriptor.setPermissions(FilePermissions(rawValue: mode))
        }
    }

    /// The error for an archive that declares more than the cap: a decompression bomb, most likely.
    func bomb() -> BraidError {
        BraidError(
            .integrity,
            "the archive's entries declare more than \(maximumUnpacked) bytes unpacked, far more than an archive of "
                + "its size holds (a decompression bomb?); nothing more was unpacked",
            remedies: [.raiseUnpackedCap])
    }

    // libarchive's AE_IF* file types, macros with casts that Swift does not import.
    static let regularType: mode_t = 0o100000
    static let directoryType: mode_t = 0o040000
    static let symbolicLinkType: mode_t = 0o120000

    static func text(_ pointer: UnsafePointer<CChar>?) -> String? {
        pointer.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: strlen($0)), as: UTF8.self) }
    }
}
