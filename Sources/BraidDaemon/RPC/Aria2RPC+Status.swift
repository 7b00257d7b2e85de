import BraidJSON

extension Aria2RPC {
    /// aria2 tracks a download in pieces of this size when it does not know better; its clients draw the
    /// `bitfield` in them.
    static let pieceLength: Int64 = 1 << 20

    /// A download's status object, as `tellStatus` answers: aria2's fields, every number a decimal string, only
    /// `keys` when given. Braid's own figures are under `braid`: its state, the segment map, what the file was
    /// verified against, the time left.
    func status(of snapshot: DaemonService.Snapshot, keys: Set<String>?) -> JSON {
        let task = snapshot.task
        let progress = snapshot.progress
        let total = task.totalLength ?? 0
        let pieces = total > 0 ? (total + Self.pieceLength - 1) / Self.pieceLength : 0
        var fields: [(String, () -> JSON)] = [
            ("gid", { .string(task.gid) }),
            ("status", { .string(task.status.rawValue) }),
            ("totalLength", { .decimal(total) }),
            ("completedLength", { .decimal(task.completedLength) }),
            ("uploadLength", { .string("0") }),
            ("downloadSpeed", { .decimal(Int64(progress?.bytesPerSecond ?? 0)) }),
            ("uploadSpeed", { .string("0") }),
            ("connections", { .decimal(progress?.connections ?? 0) }),
            ("numPieces", { .decimal(pieces) }),
            ("pieceLength", { .decimal(Self.pieceLength) }),
            ("dir", { .string(task.request.directory) }),
            ("files", { .array(self.files(of: task)) }),
        ]
        if pieces > 0 {
            fields.append(("bitfield", { .string(Self.bitfield(of: task, progress: progress, pieces: pieces)) }))
        }
        if task.status.isStopped {
            fields.append(("errorCode", { .decimal(task.errorCode ?? 0) }))
            fields.append(("errorMessage", { .string(task.errorMessage ?? "") }))
        }
        fields.append(("braid", { Self.braidFields(of: task, progress: progress) }))
        return .object(fields.filter { keys?.contains($0.0) ?? true }.map { ($0.0, $0.1()) })
    }

    /// aria2's `files`: one file, its path (empty until chosen), lengths and URIs.
    func files(of task: DaemonTask) -> [JSON] {
        let uris = task.request.uris.enumerated().map { index, uri in
            JSON.object([
                ("status", .string(index == 0 && task.status == .active ? "used" : "waiting")),
                ("uri", .string(uri)),
            ])
        }
        return [
            .object([
                ("completedLength", .decimal(task.completedLength)),
                ("index", .string("1")),
                ("length", .decimal(task.totalLength ?? 0)),
                ("path", .string(path(of: task))),
                ("selected", .string("true")),
                ("uris", .array(uris)),
            ])
        ]
    }

    private func path(of task: DaemonTask) -> String {
        if let path = task.path { return path }
        if let output = task.request.output { return task.request.directory + "/" + output }
        return ""
    }

    private static func braidFields(of task: DaemonTask, progress: TaskProgress?) -> JSON {
        let segments = (progress?.segments ?? []).map { segment in
            JSON.object([
                ("start", .integer(segment.start)), ("end", .integer(segment.end)), ("done", .integer(segment.done)),
                ("active", .bool(segment.active)),
            ])
        }
        return .object([
            ("state", .string(progress?.state ?? task.status.rawValue)),
            ("segments", .array(segments)),
            ("verification", task.verification.map { .string($0) } ?? .null),
            ("etaSeconds", progress?.etaSeconds.map { .number($0.rounded()) } ?? .null),
        ])
    }

    /// aria2's `bitfield`: a hex string, one bit per piece, high bit first, set when the piece is all on disk.
    /// A running download's pieces come from its segments; a stopped or paused one has only its byte count,
    /// which counts as the first pieces (complete: all of them).
    static func bitfield(of task: DaemonTask, progress: TaskProgress?, pieces: Int64) -> String {
        var bits = [UInt8](repeating: 0, count: Int((pieces + 7) / 8))
        func set(_ piece: Int64) { bits[Int(piece / 8)] |= 0x80 >> UInt8(piece % 8) }
        let total = task.totalLength ?? 0
        if let segments = progress?.segments, !segments.isEmpty, task.status != .complete {
            // Done ranges, merged: a piece is done when one range covers it.
            var done = segments.map { ($0.start, min($0.end, $0.start + $0.done)) }.filter { $0.0 < $0.1 }
            done.sort { $0.0 < $1.0 }
            var merged: [(Int64, Int64)] = []
            for range in done {
                if let last = merged.last, range.0 <= last.1 {
                    merged[merged.count - 1].1 = max(last.1, range.1)
                } else {
                    merged.append(range)
                }
            }
            for (start, end) in merged {
                var piece = (start + pieceLength - 1) / pieceLength
                while piece < pieces, min((piece + 1) * pieceLength, total) <= end {
                    set(piece)
                    piece += 1
                }
            }
        } else {
            let completed = task.status == .complete ? total : task.completedLength
            var piece: Int64 = 0
            while piece < pieces, min((piece + 1) * pieceLength, total) <= completed {
                set(piece)
                piece += 1
            }
        }
        return bits.map { byte in
            let hex = String(byte, radix: 16)
            return hex.count == 1 ? "0" + hex : hex
        }.joined()
    }
}
