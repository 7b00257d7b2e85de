import CCurl
import Logging
import Synchronization

/// One request run on a `TransferPool` for a thread that waits for it, such as a probe's: its connection comes from
/// the pool's cache and goes back to it, for the transfer's requests (or the next download's) to use.
///
/// The caller configures `easy` (its callbacks included) before `perform`, and reads it after: while the request
/// runs, only the pool's thread touches it.
///
/// A request can also stop half-way, its body paused (its write callback returned `CURL_WRITEFUNC_PAUSE` and said
/// so through `parks`): `perform` then returns `.parked` while the request stays on the pool, until a transfer
/// engine adopts it (`adopt()`, on the pool's thread) or it is cancelled (`cancel()`, from any thread).
final class PoolRequest: PoolClient {
    /// How a request left its waiting caller.
    enum Outcome: Equatable {
        /// It ended with libcurl's result; a cancelled one with `CURLE_ABORTED_BY_CALLBACK`.
        case ended(CURLcode)
        /// Its response head arrived and its body waits, paused, on the pool.
        case parked
    }

    let easy: EasyHandle
    /// What `-vv` says of the request as it is sent, and of its answer; nil when nothing is logged.
    private let logged: RequestLog.Entry?
    private let isCancelled: @Sendable () -> Bool
    /// Whether the body has been paused to wait for an adopter; read on the pool's thread.
    private let parks: () -> Bool
    /// The object the callbacks are given as their context: kept alive while the request is on the pool.
    private let context: AnyObject?
    private let done = ConditionLock()
    /// Set on the pool's thread when the request ended or parked; read by the waiting thread under `done`.
    private var outcome: Outcome?
    /// Told how the request ended or parked, on the pool's thread, instead of a waiting thread (`start(on:then:)`).
    private var onOutcome: ((Outcome) -> Void)?
    /// What other threads share with the pool's: a cancellation asked for, and whether a transfer engine took the
    /// request over, under one lock so that adoption and cancellation never both happen.
    private let shared = Mutex(Shared())

    private struct Shared {
        var cancelled = false
        var adopted = false
        /// The pool's multi handle, to wake it when a cancellation is asked for.
        var wakeAddress: UInt?
    }

    init(
        _ easy: EasyHandle,
        context: AnyObject? = nil,
        logged: RequestLog.Entry? = nil,
        isCancelled: @escaping @Sendable () -> Bool,
        parks: @escaping () -> Bool = { false }
    ) {
        self.easy = easy
        self.logged = logged
        self.context = context
        self.isCancelled = isCancelled
        self.parks = parks
    }

    /// Runs the request on `pool` and returns once it ended or parked.
    func perform(on pool: TransferPool) -> Outcome {
        done.withLock { outcome = nil }
        send(on: pool)
        done.lock()
        defer { done.unlock() }
        while outcome == nil { done.wait() }
        return outcome!
    }

    /// Runs the request on `pool` without waiting for it: `then` is told, on the pool's thread, once it ended or
    /// parked. For a caller with no thread of its own to wait on (`PooledStart`).
    func start(on pool: TransferPool, then: @escaping (Outcome) -> Void) {
        onOutcome = then
        send(on: pool)
    }

    /// Puts the request on `pool`, which a cancellation then wakes.
    private func send(on pool: TransferPool) {
        easy.clearError()
        logged?.sent()
        shared.withLock { $0.wakeAddress = pool.driver.multiAddress }
        pool.attach(self)
    }

    /// Gives up a parked request (its connection is closed, its body unread), from any thread; nothing once an
    /// engine adopted it.
    func cancel() {
        let address = shared.withLock { shared in
            shared.cancelled = true
            return shared.wakeAddress
        }
        if let address { MultiHandle.wake(address: address) }
    }

    // MARK: On the pool's thread

    private var pool: TransferPool.Driver?
    /// How the request ended on the pool, once it did (handed over counts as ended: it is no longer this client's).
    private var ended: CURLcode?
    private var isParked = false

    /// Takes the parked request over for a transfer engine, which then owns `easy` on the pool (see
    /// `TransferPool.Driver.transfer`); nil when it was cancelled or never parked.
    func adopt() -> EasyHandle? {
        let parked = isParked && ended == nil
        let taken = shared.withLock { shared in
            guard !shared.cancelled, parked else { return false }
            shared.adopted = true
            return true
        }
        guard taken else { return nil }
        ended = CURLE_OK
        return easy
    }

    func attached(to pool: TransferPool.Driver) {
        self.pool = pool
        ended = nil
        isParked = false
        pool.add(easy, for: self)
    }

    func step(now: Double) -> Double {
        guard ended == nil else { return 0 }
        let cancelled = shared.withLock { $0.cancelled && !$0.adopted }
        if cancelled || isCancelled() {
            pool?.remove(easy)
            ended = CURLE_ABORTED_BY_CALLBACK
            return 0
        }
        // Often enough to notice a cancellation soon.
        return 0.05
    }

    func willPerform() {}

    func finished(_ handle: UnsafeMutableRawPointer, result: CURLcode) {
        pool?.remove(easy)
        ended = result
    }

    func didPerform() {
        guard ended == nil, !isParked, parks() else { return }
        isParked = true
        report(.parked)
    }

    var isFinished: Bool { ended != nil }

    func detached() {
        pool = nil
        // A parked request already answered its caller.
        if !isParked, let ended { report(.ended(ended)) }
    }

    var yieldsToVerifier: Bool { false }

    /// Wakes the waiting thread after the lock is released, not under it: woken under it, that thread found the lock
    /// still held and slept again until the pool's thread let go, two more sleeps and wakings for every request,
    /// which a list of small files makes one each. The pool's thread holds this request (`Driver.clients`) until
    /// the call returns, so it outlives the broadcast even when its caller has gone on and let it go.
    private func report(_ outcome: Outcome) {
        if let logged {
            switch outcome {
            case .parked: logged.answered(status: easy.responseCode, ["braid.body": "paused"])
            case .ended(CURLE_OK): logged.answered(status: easy.responseCode)
            case let .ended(code):
                logged.answered(status: easy.responseCode, ["braid.result": "\(easy.describe(code))"])
            }
        }
        if let onOutcome {
            // Told once, and let go of: the caller's closure may hold this request.
            self.onOutcome = nil
            onOutcome(outcome)
            return
        }
        done.withLock { self.outcome = outcome }
        done.broadcast()
    }
}

@available(*, unavailable)
extension PoolRequest: Sendable {}
