import Dispatch
import Foundation

/// A deterministic HTTP/1.1 server on 127.0.0.1 that serves generated contents and misbehaves on request.
///
/// Each connection gets its own thread doing blocking I/O, so pacing, latency and stalls are plain waits and
/// tests see exactly the bytes the faults describe. Start it, point a client at ``url(_:)``, then call
/// ``shutdown()``; forgetting to shut down trips a precondition when the server is released.
///
/// ```swift
/// let flaky = TestServer.Route(size: 1 << 20, faults: [.onlyFirst(requests: 1, .closeAfter(bytes: 1000))])
/// let server = TestServer(routes: ["/file": flaky])
/// try server.start()
/// defer { server.shutdown() }
/// ```
public final class TestServer: @unchecked Sendable {
    // @unchecked: all mutable state is in `state`, read and written only under `lock`; sockets are values.
    let lock = NSLock()
    var state: State
    /// Left by the accept thread when it stops.
    private let acceptor = DispatchGroup()
    /// Left by each connection thread when it stops.
    private let connectionThreads = DispatchGroup()
    /// Held from reading a request until its record is in the log, so tests can wait for quiescence.
    let responses = DispatchGroup()

    /// Called with each response's record as it joins ``requestLog``, on the connection's thread.
    private let onResponse: (@Sendable (RequestRecord) -> Void)?

    /// A server for `routes` that will listen on `port` (0 for a free port chosen by the kernel), calling
    /// `onResponse` with the record of every finished response, for a live log.
    public init(
        port: Int = 0, routes: [String: Route] = [:], onResponse: (@Sendable (RequestRecord) -> Void)? = nil
    ) {
        state = State(requestedPort: port, routes: routes)
        self.onResponse = onResponse
    }

    deinit {
        precondition(state.listener == nil, "TestServer released while running; call shutdown() first")
    }

    /// Binds 127.0.0.1 and starts accepting connections; ``port`` is valid afterwards.
    public func start() throws {
        let requestedPort = lock.withLock {
            precondition(state.port == nil && !state.isShutDown, "TestServer.start() called twice")
            return state.requestedPort
        }
        let (listener, port) = try Socket.listen(port: requestedPort)
        lock.withLock {
            state.listener = listener
            state.port = port
        }
        acceptor.enter()
        let acceptor = acceptor
        // Weak, so that a server nobody shuts down is released and its precondition reports the mistake.
        Thread { [weak self] in
            while let (connection, peer) = listener.accept() {
                guard let self else {
                    connection.close()
                    break
                }
                self.adopt(connection, peer: peer)
            }
            acceptor.leave()
        }.start()
    }

    /// Stops accepting, wakes and closes every connection (stalled and paced ones too), and waits for all
    /// server threads to end. Calling it again does nothing.
    public func shutdown() {
        let listener: Socket? = lock.withLock {
            state.isShutDown = true
            defer { state.listener = nil }
            return state.listener
        }
        guard let listener else { return }
        listener.shutdown()
        acceptor.wait()
        lock.withLock {
            for connection in state.connections.values {
                connection.shutdown()
            }
        }
        connectionThreads.wait()
        listener.close()
    }

    /// The port the server listens on.
    public var port: Int {
        lock.withLock {
            guard let port = state.port else { preconditionFailure("TestServer.port read before start()") }
            return port
        }
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    public var baseURL: String {
        "http://127.0.0.1:\(port)"
    }

    /// The absolute URL of `path` (which starts with `/`) on this server.
    public func url(_ path: String) -> String {
        baseURL + path
    }

    /// Adds, replaces or (with `nil`) removes the route for `path`; applies to requests read from now on, and
    /// restarts the route's request count (and forgets which ranges corrupted once were served).
    public func setRoute(_ path: String, _ route: Route?) {
        lock.withLock {
            state.routes[path] = route
            state.requestCounts[path] = nil
            state.corruptionsServed[path] = nil
        }
    }

    /// Replaces the content at `path` by one of the same size generated from `seed`, as a file changing on
    /// the origin between two downloads would; the faults and request count stay.
    public func changeContent(path: String, seed: UInt64) {
        lock.withLock {
            guard let content = state.routes[path]?.content else {
                preconditionFailure("TestServer.changeContent: no route for \(path)")
            }
            state.routes[path]?.content = TestContent(seed: seed, size: content.size)
        }
    }

    /// Every finished response so far, in completion order; call ``waitUntilIdle(timeout:)`` first so that
    /// responses a client has already received are included.
    public var requestLog: [RequestRecord] {
        lock.withLock { state.log }
    }

    /// Body bytes sent over all responses, including ones still being sent.
    public var totalBodyBytesSent: UInt64 {
        lock.withLock { state.totalBodyBytesSent }
    }

    /// Connections accepted since ``start()``.
    public var connectionsAccepted: Int {
        lock.withLock { state.connectionsAccepted }
    }

    /// Waits until no response is being sent, so that the log and counters include everything a client has
    /// received; `false` when `timeout` passed first (a stalled response the client has not abandoned).
    @discardableResult
    public func waitUntilIdle(timeout: Duration = .seconds(10)) -> Bool {
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        return responses.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success
    }

    /// Adds `record` to the log and tells ``onResponse``.
    func logResponse(_ record: RequestRecord) {
        lock.withLock { state.log.append(record) }
        onResponse?(record)
    }

    /// Registers an accepted connection and serves it on its own thread, unless the server is shutting down.
    private func adopt(_ connection: Socket, peer: String) {
        let number: Int? = lock.withLock {
            guard !state.isShutDown else { return nil }
            state.connectionsAccepted += 1
            state.connections[connection.descriptor] = connection
            return state.connectionsAccepted
        }
        guard let number else {
            connection.close()
            return
        }
        connectionThreads.enter()
        Thread {
            self.serve(connection, number: number, peer: peer)
            self.lock.withLock { self.state.connections[connection.descriptor] = nil }
            connection.close()
            self.connectionThreads.leave()
        }.start()
    }
}
