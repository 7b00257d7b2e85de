import CCurl

/// Something with requests on a `TransferPool`: a transfer engine, or one probe request.
///
/// A client is attached from any thread. From then on every call below is made on the pool's thread, each round in
/// this order: `step`, then (once the network has something) `willPerform`, `finished` for each of its requests
/// that ended, and `didPerform`. Once `isFinished`, it is detached: `detached()` is the last call.
protocol PoolClient: AnyObject {
    /// Joined the pool: the client adds its first requests with `pool.add`.
    func attached(to pool: TransferPool.Driver)
    /// Timed work before the pool waits for the network; returns how many seconds the client lets it wait.
    func step(now: Double) -> Double
    /// libcurl is about to run callbacks.
    func willPerform()
    /// One of the client's requests ended with `result`; it is still on the pool until the client removes it.
    func finished(_ handle: UnsafeMutableRawPointer, result: CURLcode)
    /// libcurl has run this round's callbacks, and every ended request was reported.
    func didPerform()
    /// Whether the client is done: none of its requests is on the pool, and none will be added.
    var isFinished: Bool { get }
    /// Left the pool. The pool keeps no reference to the client afterwards.
    func detached()
    /// Whether the pool's thread should let verifier threads have the CPU first while the client runs.
    var yieldsToVerifier: Bool { get }
    /// The pool now gives each request it starts a connection of its own (`StreamsPerConnection`), and `handles`,
    /// the client's requests, are streams of a connection that carries others too: what they have still to fetch
    /// may go on requests of its own.
    func connectionsSeparated(sharing handles: [UnsafeMutableRawPointer])
}

extension PoolClient {
    /// A client whose requests each fetch one response whole keeps them where they are.
    func connectionsSeparated(sharing handles: [UnsafeMutableRawPointer]) {}
}

/// A client that only does something on the pool's thread as it is attached (`attached(to:)`), such as a start that
/// sends a request, which is a client of its own: done at once, with no timed work and no request of its own.
protocol PoolErrand: PoolClient {}

extension PoolErrand {
    func step(now: Double) -> Double { .infinity }
    func willPerform() {}
    func finished(_ handle: UnsafeMutableRawPointer, result: CURLcode) {}
    func didPerform() {}
    var isFinished: Bool { true }
    func detached() {}
    var yieldsToVerifier: Bool { false }
}
