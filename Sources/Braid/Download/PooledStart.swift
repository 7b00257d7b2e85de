import CCurl

/// The start of a manager's download on its lane's pool thread, which then needs no thread of its own to wait for its
/// first request: the checks before the probe, the look at the destination and the first GET of a file that may come
/// in one request (`DownloadJob.startsOnPool`), which the pool's thread runs rather than a thread waiting for it
/// (`Prober.startFirstGet`); and when that GET brings the whole file and naming it is all that is left
/// (`DownloadJob.placeOnPool`), the download's end there too.
///
/// A download that waited on a thread of its own cost two hand-overs between threads a file, each a sleep and a
/// waking, and the thread's work around the wait: with them gone, a list of ten thousand small files took 15% less
/// CPU. See [the many-downloads note](../../../docs/design/many-downloads.md#small-files-on-the-pools-thread).
///
/// Anything else goes on on a blocking thread, as any download runs (`DownloadJob.run(continuing:)`): a file to
/// flush or to name otherwise, from the response read whole; a larger file, from its response, its body paused for
/// the transfer to adopt; anything else the GET came to (a failure to retry, an error status, a redirect it may not
/// follow), from there, which the blocking thread's first GET counts as its first attempt; a pause or a stop, from a
/// new first GET, with the same look at the destination; and a destination that is not free, from a probe anew.
final class PooledStart: PoolErrand {
    /// How far a start on the pool's thread went, for the blocking thread that goes on from there: the checks
    /// before the probe were made and `probing` reported.
    struct Handover: @unchecked Sendable {
        // @unchecked: made on the pool's thread and handed to one blocking thread, which alone uses it from then on.
        /// What the first GET found, when it read the file whole or paused its body; nil to probe anew.
        let probed: DownloadJob.Probed?
        /// How the first GET ended where it found no file: the first attempt of the probe anew, which settles it.
        let earlier: Prober.FirstGetEnd?
        /// The destination the look before the probe found free, if it did: a probe anew does not look again, so
        /// that a file appearing there meanwhile is found as it would be by a probe's retry.
        let looked: DestinationPaths.Opened?
        /// When the download started.
        let started: Double
    }

    /// How the start ended: the download's outcome, or where a blocking thread is to go on from.
    enum Ending {
        case done(Result<DownloadResult, BraidError>)
        case handOver(Handover)
    }

    private let job: DownloadJob
    private let started = TransferEngine.now()
    /// Told how the start ended, on the pool's thread.
    private let onEnd: (Ending) -> Void

    init(_ job: DownloadJob, onEnd: @escaping (Ending) -> Void) {
        self.job = job
        self.onEnd = onEnd
    }

    /// The checks before the probe, on the pool's thread, then the first GET, which is a client of the pool of its
    /// own (`Prober.startFirstGet`): this one is done once it is sent.
    func attached(to pool: TransferPool.Driver) {
        do {
            try job.checkBeforeStart()
        } catch {
            return onEnd(.done(.failure(error)))
        }
        job.emit(.state(.probing))
        guard case (true, let opened?) = job.lookBeforeProbe() else { return handOver(nil, looked: nil) }
        let prober = job.makeProber(DownloadLifecycle(), firstContact: true)
        prober.startFirstGet(job.url, firstBytes: job.probeBytes) { [self] ended in
            let (resource, first): (RemoteResource, ParkedResponse)
            switch ended {
            case let .found(file, response): (resource, first) = (file, response)
            case let .unsettled(end): return handOver(nil, looked: opened, earlier: end)
            case .stopped: return handOver(nil, looked: opened)
            }
            let probed = DownloadJob.Probed.found(resource, mirrors: [], first: first, opened: opened)
            do throws(BraidError) {
                guard let placed = try job.placeOnPool(probed, started: started) else {
                    return handOver(probed, looked: opened)
                }
                onEnd(.done(.success(placed)))
            } catch {
                onEnd(.done(.failure(error)))
            }
        }
    }

    private func handOver(
        _ probed: DownloadJob.Probed?, looked: DestinationPaths.Opened?, earlier: Prober.FirstGetEnd? = nil
    ) {
        onEnd(.handOver(Handover(probed: probed, earlier: earlier, looked: looked, started: started)))
    }
}

@available(*, unavailable)
extension PooledStart: Sendable {}
