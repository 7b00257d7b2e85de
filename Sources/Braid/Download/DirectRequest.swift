import CCurl
import Logging
import SystemPackage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The start of a `DirectFile` on its lane's pool thread, as `PooledStart` starts a download there but with no
/// `Download` or job: the checks before the probe, the look at the destination, and the first GET, which the
/// download's `Prober` makes (`startFirstGet`: its redirects, its HTTP/2 fallback, its body read whole or paused).
/// A file read whole whose naming is all that is left is placed there, by the rules the full path places a file
/// read whole by (`ReadWhole`); one to be flushed is written there and flushed and named by the manager's
/// `NamingQueue` (`ReadWhole.namedInQueue`), else placed on a blocking thread. Whatever else the GET came to is
/// handed over with it, for a download to go on from where it got to (`PooledStart.Handover`), so that no request is
/// made twice.
final class DirectRequest: PoolErrand {
    /// How the start ended.
    enum End {
        case completed(DownloadResult, events: [DownloadEvent])
        case stopped(DirectFile.Stop, events: [DownloadEvent])
        /// For a download to start afresh: nothing was asked (a check failed, the destination is not free).
        case startAfresh
        /// For a download to go on from `handover`, having reported `events`.
        case goOn(PooledStart.Handover, events: [DownloadEvent])
        /// Checked and written, waiting in the manager's `NamingQueue` to be flushed and named: the request is
        /// done with, and `.named` follows.
        case naming
        /// Named after `.naming`, or not (`ReadWhole.error(of:at:)`), having reported `events`.
        case named(Result<DownloadResult, BraidError>, events: [DownloadEvent])
    }

    /// What the manager's downloads share, which a direct file uses as a download would.
    struct Shared: Sendable {
        let claims: DestinationClaims
        let directories: OpenDirectories
        let checksumFiles: ChecksumFiles
        /// Flushes and names the files read whole that are to be flushed (`ReadWhole.namedInQueue`).
        let naming: NamingQueue
    }

    private let file: DirectFile
    /// The pool of the file's lane.
    private let pool: TransferPool
    private let shared: Shared
    private let logger: Logger
    /// Told how the start ended, on the pool's thread, once; where that was `.naming`, told again (`.named`) on the
    /// naming queue's.
    private let onEnd: (End) -> Void
    private let started = TransferEngine.now()
    /// What the file has to report, in order, that it has not reported yet (`EventLog.events`).
    private let log: EventLog

    /// The events of a start, which its prober reports through `@Sendable` closures on the pool's thread.
    private final class EventLog: @unchecked Sendable {
        // @unchecked: touched by one thread at a time: the pool's, where the start and its request run, then the
        // blocking thread a flush is handed to.
        var events: [DownloadEvent] = [.state(.probing)]
        private let file: DirectFile

        init(_ file: DirectFile) {
            self.file = file
        }

        /// Reports what was noted and `more` now, as a body being read whole comes (`Prober.onWholeBodyStart`,
        /// `onWholeBody`).
        func report(_ more: [DownloadEvent]) {
            let now = events + more
            events = []
            file.onReport(file, .reported(now))
        }
    }

    init(_ file: DirectFile, on pool: TransferPool, shared: Shared, logger: Logger, onEnd: @escaping (End) -> Void) {
        self.file = file
        self.pool = pool
        log = EventLog(file)
        self.shared = shared
        self.logger = logger
        self.onEnd = onEnd
    }

    func attached(to driver: TransferPool.Driver) {
        if let stop = file.stopAsked { return end(.stopped(stop, events: [])) }
        let options = file.options
        let url = file.url
        let parsed = URLComponents(string: url)
        // Where anything fails, or anything of an earlier download is there, the full path starts from the start,
        // and says what it finds.
        guard
            (try? DownloadJob.checkBeforeStart(
                url: url, parsed: parsed, options: options, checksumFiles: shared.checksumFiles,
                directories: shared.directories)) != nil,
            case let nameFromURL = DestinationPaths.nameFromURL(parsed, for: options.destination),
            let place = try? DestinationPaths.resolve(
                options.destination, suggestedFilename: nil, nameFromURL: nameFromURL),
            case (true, let opened?) = ReadWhole.look(
                at: place, options: options, directories: shared.directories, claims: shared.claims)
        else { return end(.startAfresh) }
        var requestOptions = options.requestOptions
        requestOptions.credentials = file.credentials
        var prober = Prober(
            options: requestOptions, pool: pool, retryPolicy: options.retryPolicy,
            onNotice: { [log] message in log.events.append(DownloadEvent.notice(message).sanitised) },
            isCancelled: { [file] in file.stopAsked != nil })
        prober.isFirstContact = true
        prober.readsWhole = DownloadJob.oneRequestLength
        prober.requestLog = RequestLog(logger)
        // As a download reports a body read whole that comes in pieces (`DownloadJob.makeProber`).
        prober.onWholeBodyStart = { [log] resource in
            let place = try? DestinationPaths.resolve(
                options.destination, suggestedFilename: resource.suggestedFilename, nameFromURL: nameFromURL)
            log.report([
                .started(resource: resource, path: place?.path.string ?? "", resumedBytes: 0), .state(.downloading),
            ])
        }
        prober.onWholeBody = { [log] received, total, seconds in
            log.report([.progress(.oneRequest(received: received, of: total, seconds: seconds))])
        }
        prober.startFirstGet(url, firstBytes: DownloadJob.oneRequestLength) { [self] ended in
            switch ended {
            case let .found(resource, first):
                guard first.body != nil, options.syncOnCompletion, !ReadWhole.namedInQueue(options: options) else {
                    return endReadWhole(resource, first: first, nameFromURL: nameFromURL, opened: opened)
                }
                // A flush waits for the disk, which every request on the pool would wait for: on a blocking thread,
                // which the start, done with the pool, then ends on. (One the manager's naming queue flushes is
                // only written here, as one that is not flushed.)
                let request = Unchecked(self)
                BlockingThreads.shared.run {
                    request.value.endReadWhole(resource, first: first, nameFromURL: nameFromURL, opened: opened)
                }
            case let .unsettled(earlier):
                end(.goOn(handover(nil, looked: opened, earlier: earlier), events: log.events))
            case .stopped:
                end(.stopped(file.stopAsked ?? .interrupted, events: log.events))
            }
        }
    }

    /// Ends the start whose GET found `resource`: placed, where its body was read whole and naming it is all that
    /// is left (`placeReadWhole`), else for a download to go on from the response.
    private func endReadWhole(
        _ resource: RemoteResource, first: ParkedResponse, nameFromURL: String?, opened: DestinationPaths.Opened
    ) {
        if let body = first.body,
            let placed = placeReadWhole(body, of: resource, first: first, nameFromURL: nameFromURL, opened: opened)
        {
            return end(placed)
        }
        let probed = DownloadJob.Probed.found(resource, mirrors: [], first: first, opened: opened)
        end(.goOn(handover(probed, looked: opened), events: log.events))
    }

    /// The start, handed to the blocking thread that ends it, which alone touches it from then on.
    private struct Unchecked: @unchecked Sendable {
        let value: DirectRequest
        init(_ value: DirectRequest) { self.value = value }
    }

    private func handover(
        _ probed: DownloadJob.Probed?, looked: DestinationPaths.Opened, earlier: Prober.FirstGetEnd? = nil
    ) -> PooledStart.Handover {
        PooledStart.Handover(probed: probed, earlier: earlier, looked: looked, started: started)
    }

    /// Places the file read whole as `DownloadJob.placeOnPool` places it, where that is all there is to do; nil for
    /// the download to go on from the response (a name the server gave, a digest that fails, a file that cannot
    /// be placed so), which then says what it finds.
    private func placeReadWhole(
        _ body: [UInt8], of resource: RemoteResource, first: ParkedResponse, nameFromURL: String?,
        opened: DestinationPaths.Opened
    ) -> End? {
        let options = file.options
        do throws(BraidError) {
            // A name the server gives counts only where the destination does not name the file.
            let place =
                resource.suggestedFilename == nil || options.destination.namesFile
                ? opened.place
                : try DestinationPaths.resolve(
                    options.destination, suggestedFilename: resource.suggestedFilename, nameFromURL: nameFromURL)
            let (paths, lookedAt) = try ReadWhole.claim(
                place, opened: opened, for: file.url, by: file.label, options: options, in: shared.claims,
                directories: shared.directories)
            guard lookedAt else { return nil }
            var notices: [DownloadEvent] = []
            let notice = { (message: String) in notices.append(DownloadEvent.notice(message).sanitised) }
            let length = Int64(body.count)
            // The events up to its end, and the result, of the file placed at `paths` with `digest`.
            func placed(_ digest: ExpectedDigest?) -> DownloadResult {
                var result = DownloadResult(
                    path: paths.finalPath.string, bytes: length, verifiedDigest: digest, resumedBytes: 0,
                    seconds: TransferEngine.now() - started,
                    statistics: ReadWhole.statistics(length: length, firstByteSeconds: first.firstByteSeconds))
                result.lengthVerified = resource.length != nil
                log.events += notices
                if !first.startReported {
                    log.events += [
                        .started(resource: resource, path: result.path, resumedBytes: 0), .state(.downloading),
                    ]
                }
                log.events += [.state(.verifying)]
                return result
            }
            guard ReadWhole.namedInQueue(options: options) else {
                guard
                    let done = try ReadWhole.checkAndPlace(
                        body, of: resource, at: paths, options: options, checksumFiles: shared.checksumFiles,
                        notice: notice)
                else { return nil }
                let result = placed(done.digest)
                log.events += [.completed(result), .state(.completed)]
                return .completed(result, events: log.events)
            }
            guard
                let written = try ReadWhole.checkAndWrite(
                    body, of: resource, at: paths, options: options, checksumFiles: shared.checksumFiles,
                    notice: notice)
            else { return nil }
            shared.naming.add(written.file, length: length, as: paths.final) { [self] named in
                // On the queue's thread, once the name is durable: its time is counted to here.
                let result = placed(written.digest)
                switch named {
                case .success:
                    log.events += [.completed(result), .state(.completed)]
                    end(.named(.success(result), events: log.events))
                case let .failure(failure):
                    end(.named(.failure(ReadWhole.error(of: failure, at: paths)), events: log.events))
                }
            }
            return .naming
        } catch {
            // Said by the full path, which meets it again, or not, and owns what it says.
            return nil
        }
    }

    private func end(_ end: End) {
        if logger.logLevel <= .debug { write(end) }
        onEnd(end)
    }

    /// Logs the events of `end` as a download logs them.
    private func write(_ end: End) {
        var logger = logger
        logger[metadataKey: "braid.url"] = .string(PrintableText.sanitised(url: file.url))
        switch end {
        case let .completed(_, events), let .stopped(_, events), let .goOn(_, events), let .named(_, events):
            for event in events { Download.log(event, to: logger) }
        case .startAfresh, .naming:
            break
        }
    }
}

@available(*, unavailable)
extension DirectRequest: Sendable {}
