/// Where one download is in its life, as a pure value: the job performs each stage and reports how it ended,
/// and the lifecycle says what comes next.
///
/// - `probing` → `preparing` (the probe answered) → `transferring` → `verifying` → `committing` → `finished`;
/// - `preparing` → `finished` when the destination already holds the verified file (or, with timestamping, a file
///   as new as the server's), `probing` → `finished` when a conditional probe was answered `304 Not Modified`,
///   and `transferring` → `finished` when the transfer was only measured;
/// - `transferring` → `paused` on `pause()`, and `paused` → `probing` on `resume()` (the server is probed anew);
///   `probing` → `paused` too, when the probe reads a small file whole (`Prober.readsWhole`): none of it is kept;
/// - `transferring` → `probing` when the transfer must start over: the remote file changed, the server ignores
///   ranges (every later attempt is one stream), or its ranges contradict its HEAD (later probes use a ranged
///   GET). After `maximumRestarts` such restarts the download gives up;
/// - `finished` is final; a failure in any stage ends the download with its error.
///
/// Design: `docs/design/README.md#a-downloads-life`.
struct DownloadLifecycle: Sendable, Equatable {
    enum Stage: Equatable, Sendable {
        case probing, preparing, transferring, paused, verifying, committing, finished
    }

    /// Why a transfer sends the download back to the probe.
    enum Restart: Equatable, Sendable {
        case remoteChanged(String)
        case rangesIgnored
        case lengthDisagrees(String)

        /// The restart a transfer's outcome asks for, if it asks for one.
        init?(_ outcome: TransferMachine.Outcome) {
            switch outcome {
            case let .remoteChanged(message): self = .remoteChanged(message)
            case .rangesIgnored: self = .rangesIgnored
            case let .lengthDisagrees(message): self = .lengthDisagrees(message)
            case .completed, .failed, .stopped: return nil
            }
        }
    }

    static let maximumRestarts = 3

    private(set) var stage = Stage.probing
    private(set) var restarts = 0
    /// The server ignored byte ranges: every later attempt is a single stream.
    private(set) var forcesSingleStream = false
    /// A server's ranges contradicted its HEAD: every later probe asks with a ranged GET.
    private(set) var distrustsHead = false
    /// What every transfer of this download cost so far, across pauses and restarts.
    private(set) var spent = TransferMachine.Statistics(fetchedBytes: 0, retries: 0, timeToFirstByte: nil)

    /// Adds what a transfer cost; the time to first byte is the first transfer's.
    mutating func record(_ statistics: TransferMachine.Statistics) {
        spent.fetchedBytes += statistics.fetchedBytes
        spent.retries += statistics.retries
        spent.timeToFirstByte = spent.timeToFirstByte ?? statistics.timeToFirstByte
        spent.connections = statistics.connections ?? spent.connections
        spent.peerBytes += statistics.peerBytes
    }

    /// The stage that just ended without an error moves the download on.
    mutating func advance() {
        switch stage {
        case .probing: stage = .preparing
        case .preparing: stage = .transferring
        case .transferring: stage = .verifying
        case .verifying: stage = .committing
        case .committing: stage = .finished
        case .paused: stage = .probing
        case .finished: preconditionFailure("Invalid state: a finished download cannot advance")
        }
    }

    /// The destination already holds the verified file: nothing to transfer.
    mutating func alreadyComplete() {
        guard stage == .preparing else { preconditionFailure("Invalid state: already complete while \(stage)") }
        stage = .finished
    }

    /// The server answered the conditional probe `304 Not Modified`: the local copy stays as it is.
    mutating func notModified() {
        guard stage == .probing else { preconditionFailure("Invalid state: not modified while \(stage)") }
        stage = .finished
    }

    /// A measured transfer (`braid bench`) is over: nothing is verified or kept.
    mutating func measured() {
        guard stage == .transferring else { preconditionFailure("Invalid state: measured while \(stage)") }
        stage = .finished
    }

    mutating func paused() {
        guard stage == .transferring || stage == .probing else {
            preconditionFailure("Invalid state: paused while \(stage)")
        }
        stage = .paused
    }

    /// The transfer must start over; returns the notice saying why, or throws once the restarts ran out.
    mutating func restart(_ reason: Restart) throws(BraidError) -> String {
        guard stage == .transferring else { preconditionFailure("Invalid state: restarted while \(stage)") }
        let notice: String
        switch reason {
        case let .remoteChanged(message):
            notice = "\(message); discarding the partial download and starting again"
        case .rangesIgnored:
            notice =
                "the server answered a range request with the whole file (HTTP 200): it ignores byte ranges; "
                + "downloading in a single stream"
            forcesSingleStream = true
        case let .lengthDisagrees(message):
            notice = "\(message); probing again with a range request"
            distrustsHead = true
        }
        restarts += 1
        guard restarts <= Self.maximumRestarts else {
            throw BraidError.protocolViolation("\(notice); gave up after \(restarts - 1) restarts")
        }
        stage = .probing
        return notice
    }
}
