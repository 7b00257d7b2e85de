/// One download of the daemon as it is listed and saved: what was asked, where it is, and what it last knew of
/// its file. The live figures of a running transfer (speed, segments) are in `TaskProgress`, never saved.
public struct DaemonTask: Sendable, Codable, Equatable {
    /// aria2's id: 16 lower-case hex digits.
    public var gid: String
    public var request: TaskRequest
    public var status: TaskStatus
    /// The file's path once the first probe chose it (or `directory/output` when given); nil before.
    public var path: String?
    /// The file's length once known.
    public var totalLength: Int64?
    /// Bytes on disk as last reported.
    public var completedLength: Int64
    /// aria2's error code (`3` not found, `6` network, `32` checksum …) and the message, for `error`.
    public var errorCode: Int?
    public var errorMessage: String?
    /// What the finished file was checked against, as the command line's last line says it.
    public var verification: String?

    public init(gid: String, request: TaskRequest, status: TaskStatus) {
        self.gid = gid
        self.request = request
        self.status = status
        completedLength = 0
    }
}

/// A running transfer's live figures, from its last progress event.
public struct TaskProgress: Sendable, Equatable {
    public var bytesPerSecond: Double = 0
    public var connections = 0
    public var etaSeconds: Double?
    /// Each segment: start, end (exclusive), bytes done from its start, and whether a connection is on it.
    public var segments: [Segment] = []
    public var state: String?

    public struct Segment: Sendable, Equatable {
        public var start: Int64
        public var end: Int64
        public var done: Int64
        public var active: Bool
    }

    public init() {}
}
