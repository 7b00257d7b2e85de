import CCurl
import CLinuxIO
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

extension TransferPool {
    /// The pool's loop and its multi handle. `attach`, `stop` and `wake` may be called from any thread; everything
    /// else runs on the pool's thread.
    final class Driver: @unchecked Sendable {
        // @unchecked: `inbox` is behind a Mutex, `multiAddress` is immutable, and the rest is touched only on the
        // pool's thread (`run()` and the clients' calls back into `add` and `remove`). The thread holds the driver
        // until `shutdown()` joins it; the pool calls that when it goes.
        private struct Inbox {
            var arrivals: [Arrival] = []
            var stopping = false
            /// Whether the pool's thread waits for the network, or is about to: only then does a client that
            /// arrives wake it. A list's downloads arrive by the thousand, mostly while the thread is busy anyway.
            var waiting = false
            /// The pool's thread, started with the first client.
            var thread: WorkerThread?
        }

        /// A client on its way to the pool's thread, which alone calls it from then on.
        private struct Arrival: @unchecked Sendable {
            // @unchecked: handed over once, under the inbox's lock, and never touched again by the sender.
            let client: any PoolClient
        }

        private let inbox = Mutex(Inbox())
        /// The origins whose HTTP/2 failed (a stream reset, a broken session): later requests use HTTP/1.1.
        private let http2Failures = Mutex<Set<Origin>>([])
        private let multi: MultiHandle
        /// The multi handle's address, for `curl_multi_wakeup` from other threads.
        let multiAddress: UInt
        private let share: OpaquePointer
        private var clients: [any PoolClient] = []
        /// The client each request on the multi handle belongs to, by the easy handle's address.
        private var owners: [UInt: any PoolClient] = [:]
        private var idleConnections = 0
        /// Easy handles whose first GET read a file whole, kept for the next first GET (`Prober.startFirstGet`):
        /// a list of small files made and cleaned up a handle a file, which cost it more than curl spends on one.
        private var spareHandles: [EasyHandle] = []
        private var yielding = 0
        private var previousNice: Int32?
        /// Whether the pool may take a limit of requests a connection, for a pool that learns it; nil for one that
        /// does not.
        private let mayCarry: (@Sendable (Int) -> Bool)?
        /// What the pool learns of how many requests share a connection (`StreamsPerConnection`), where it does.
        private var learning: StreamsPerConnection?
        /// Body bytes received by the requests, of which `counted` holds what was counted of each one on the pool,
        /// by the easy handle's address; requests started in all; when `learning` next looks; since when no client
        /// is attached. Counted only while learning.
        private var received: Int64 = 0
        private var counted: [UInt: Int64] = [:]
        private var started = 0
        private var nextLook = 0.0
        private var idleSince: Double?
        /// The requests that were on the pool as it turned to a connection a request, by the easy handle's address:
        /// streams of connections that get no new ones from then, one of which libcurl 7.88 may leave unread, its
        /// body in the stream's buffer, until the stall timeout. What each received, since when, and how often it was
        /// woken (`wakeStragglers`).
        private var stragglers: [UInt: (received: Int64, since: Double, wakes: Int)] = [:]
        private var nextWake = 0.0
        /// The requests handed to a client (`transfer(_:to:)`: a first GET's response, sent before on a connection
        /// that may carry others) while the pool gives each request a connection of its own (`separated`), by the
        /// easy handle's address, for `separateSharedRequests(among:)`.
        private var handedOver: [UInt] = []

        private let logger: Logger

        init(limits: Limits, learningStreams: (@Sendable (Int) -> Bool)?, logger: Logger) {
            self.logger = logger
            multi = MultiHandle(
                maximumPerHost: limits.maximumConnectionsPerHost, maximumTotal: limits.maximumConnections)
            multiAddress = UInt(bitPattern: multi.raw)
            guard let share = braid_share_create() else { fatalError("curl_share_init failed: out of memory") }
            self.share = share
            mayCarry = learningStreams
            if learningStreams != nil {
                learning = StreamsPerConnection(now: TransferEngine.now(), machine: Self.machineCPU())
            }
            keepIdleConnections(max(16, limits.maximumConnections ?? 0))
        }

        deinit {
            // The multi handle goes first: no easy handle uses the share after it.
            braid_share_destroy(share)
        }

        /// Runs `client` on the pool's thread, starting the thread with the first client.
        func attach(_ client: any PoolClient) {
            let waiting = inbox.withLock { inbox in
                precondition(!inbox.stopping, "Invalid state: a client attached to a pool that was shut down")
                inbox.arrivals.append(Arrival(client: client))
                guard inbox.thread == nil else { return inbox.waiting }
                let thread = WorkerThread { [self] in run() }
                thread.start()
                inbox.thread = thread
                return false
            }
            if waiting { wake() }
        }

        /// Ends the thread once no client is attached, and waits for it; calling it again does nothing.
        func shutdown() {
            let thread = inbox.withLock { inbox in
                defer { inbox.thread = nil }
                inbox.stopping = true
                return inbox.thread
            }
            wake()
            thread?.join()
        }

        /// Whether requests to `url`'s origin use HTTP/1.1 because its HTTP/2 failed, from any thread.
        func http2Failed(_ url: String) -> Bool {
            // Asked before every request: the URL is parsed only once some origin failed.
            guard !http2Failures.withLock({ $0.isEmpty }), let origin = Origin(url: url) else { return false }
            return http2Failures.withLock { $0.contains(origin) }
        }

        /// Remembers that HTTP/2 failed at `url`'s origin, from any thread; returns whether it is news.
        @discardableResult
        func recordHTTP2Failure(_ url: String) -> Bool {
            guard let origin = Origin(url: url) else { return false }
            return http2Failures.withLock { $0.insert(origin).inserted }
        }

        /// Wakes the pool's wait for the network, from any thread.
        func wake() {
            MultiHandle.wake(address: multiAddress)
        }

        // MARK: On the pool's thread

        /// Starts `easy`'s request for `client`.
        func add(_ easy: EasyHandle, for client: any PoolClient) {
            easy.set(CURLOPT_SHARE, pointer: UnsafeMutableRawPointer(braid_share_handle(share)))
            owners[UInt(bitPattern: easy.raw)] = client
            started += 1
            multi.add(easy)
        }

        /// Whether the pool gives each request it starts a connection of its own: the limit `learning` holds is the
        /// one the multi handle has, since every change of it is set there or refused.
        private var separated: Bool {
            (learning?.limit ?? StreamsPerConnection.unlimited) < StreamsPerConnection.unlimited
        }

        /// Hands `easy`'s request, already on the pool, to `client`: its end is reported there from now on.
        func transfer(_ easy: EasyHandle, to client: any PoolClient) {
            owners[UInt(bitPattern: easy.raw)] = client
            if separated { handedOver.append(UInt(bitPattern: easy.raw)) }
        }

        /// Takes `easy`'s request off the pool; its connection stays in the cache if it can be used again.
        func remove(_ easy: EasyHandle) {
            let address = UInt(bitPattern: easy.raw)
            if learning?.isLearning == true {
                let counted = counted.removeValue(forKey: address) ?? 0
                received += max(0, EasyHandle.bodyBytesReceived(raw: easy.raw) - counted)
            }
            multi.remove(easy)
            owners[address] = nil
            stragglers[address] = nil
        }

        /// A handle a first GET may reuse (`keepSpare(_:)`), if there is one.
        func takeSpareHandle() -> EasyHandle? {
            spareHandles.popLast()
        }

        /// Keeps `handle`, off the multi handle and used by no one, for a later first GET: a few, not every one.
        func keepSpare(_ handle: EasyHandle) {
            if spareHandles.count < 32 { spareHandles.append(handle) }
        }

        /// Keeps at least `count` idle connections alive for later requests.
        func keepIdleConnections(_ count: Int) {
            guard count > idleConnections else { return }
            idleConnections = count
            multi.setIdleConnections(count)
        }

        func run() {
            while true {
                let (arrivals, stopping) = inbox.withLock { inbox in
                    defer { inbox.arrivals = [] }
                    return (inbox.arrivals, inbox.stopping)
                }
                for arrival in arrivals { join(arrival.client) }
                if stopping && clients.isEmpty { break }
                let now = TransferEngine.now()
                var timeout = 1.0
                for client in clients { timeout = min(timeout, client.step(now: now)) }
                detachFinished()
                // The wake-up that came with `stopping` may have been taken by the last wait already.
                if stopping && clients.isEmpty { break }
                // A client that arrived since the inbox was read is joined at once; one that arrives from now on
                // sees `waiting` and wakes the wait.
                let waits = inbox.withLock { inbox in
                    inbox.waiting = inbox.arrivals.isEmpty
                    return inbox.waiting
                }
                if waits {
                    multi.poll(timeoutMilliseconds: clients.isEmpty ? 60_000 : Int(max(0, timeout) * 1000))
                    inbox.withLock { $0.waiting = false }
                }
                for client in clients { client.willPerform() }
                _ = multi.perform()
                while let finished = multi.nextFinished() {
                    owners[UInt(bitPattern: finished.handle)]?.finished(finished.handle, result: finished.result)
                }
                for client in clients { client.didPerform() }
                detachFinished()
                learnStreamsPerConnection()
                if !handedOver.isEmpty {
                    separateSharedRequests(among: handedOver)
                    handedOver = []
                }
                wakeStragglers()
            }
            if let previousNice { _ = braid_set_thread_nice(previousNice) }
        }

        private func join(_ client: any PoolClient) {
            if clients.isEmpty { resumeLearning() }
            clients.append(client)
            if client.yieldsToVerifier {
                // With a digest to verify, hashing is the critical path whenever the network outruns one core's
                // worth of MD5: the verifier threads have the CPU first while such a client runs.
                yielding += 1
                if yielding == 1 { previousNice = braid_set_thread_nice(5) }
            }
            client.attached(to: self)
        }

        /// Counts what the pool received, a few times a second, and sets the connections' streams to what
        /// `learning` makes of it.
        private func learnStreamsPerConnection() {
            guard var current = learning, current.isLearning, let mayCarry else { return }
            let now = TransferEngine.now()
            guard now >= nextLook else { return }
            nextLook = now + 0.25
            let trying = current.phase.isTrying
            for address in owners.keys {
                guard let raw = UnsafeMutableRawPointer(bitPattern: address) else { continue }
                // A request that starts again (a redirect followed) counts from nothing again.
                let bytes = EasyHandle.bodyBytesReceived(raw: raw)
                received += max(0, bytes - counted[address, default: 0])
                counted[address] = bytes
            }
            if let limit = current.observe(
                now: now, received: received, running: owners.count, started: started, machine: Self.machineCPU())
            {
                if mayCarry(limit) {
                    multi.setStreamsPerConnection(limit)
                    // Held before the clients hear of it: a response a transfer adopts meanwhile is separated too.
                    learning = current
                    var moving = 0
                    if limit < StreamsPerConnection.unlimited {
                        keepStragglers(now: now)
                        moving = separateSharedRequests(among: Array(owners.keys))
                    }
                    log(current, sharing: moving)
                } else {
                    current.refused(now: now, received: received, machine: Self.machineCPU())
                }
            } else if trying, !current.isLearning {
                log(current)
            }
            learning = current
            // Settled: nothing is counted until it learns again.
            if !current.isLearning { counted = [:] }
        }

        /// Notes the requests on the pool now, as it turns to a connection a request.
        private func keepStragglers(now: Double) {
            for address in owners.keys {
                guard let raw = UnsafeMutableRawPointer(bitPattern: address) else { continue }
                stragglers[address] = (EasyHandle.bodyBytesReceived(raw: raw), now, 0)
            }
        }

        /// Tells the clients of `requests` (easy handles' addresses) which of them are streams of a connection that
        /// carries others too, once the pool gives each request a connection of its own: as it turns, every request
        /// on it; from then, a first GET's response handed to a transfer. A list's files of a few MiB all started on
        /// the shared connections before the pool learned, and finished behind their cap (10 files of 4 MiB behind
        /// 1 MiB/s a connection: 12 s, where moving the rest of their pieces took 5).
        @discardableResult
        private func separateSharedRequests(among requests: [UInt]) -> Int {
            var perConnection: [String: Int] = [:]
            var endpoints: [UInt: String] = [:]
            for address in owners.keys {
                guard let raw = UnsafeMutableRawPointer(bitPattern: address),
                    let endpoint = EasyHandle.connectionEndpoint(raw: raw)
                else { continue }
                perConnection[endpoint, default: 0] += 1
                endpoints[address] = endpoint
            }
            var sharing: [ObjectIdentifier: (client: any PoolClient, handles: [UnsafeMutableRawPointer])] = [:]
            for address in requests {
                guard let endpoint = endpoints[address], perConnection[endpoint, default: 0] >= 2,
                    let client = owners[address], let raw = UnsafeMutableRawPointer(bitPattern: address)
                else { continue }
                sharing[ObjectIdentifier(client), default: (client, [])].handles.append(raw)
            }
            for (client, handles) in sharing.values { client.connectionsSeparated(sharing: handles) }
            return sharing.values.reduce(0) { $0 + $1.handles.count }
        }

        /// Tells `-v` what `learning` just changed, or kept, and at what rates; `sharing` of the running requests
        /// shared a connection as it turned.
        private func log(_ learning: StreamsPerConnection, sharing: Int = 0) {
            func rate(_ bytesPerSecond: Double?) -> String {
                bytesPerSecond.map { "\(Int(($0 / 1024).rounded())) KiB/s" } ?? "?"
            }
            let (shared, separate) = (rate(learning.rates.shared), rate(learning.rates.separate))
            let message: String
            switch (learning.limit < StreamsPerConnection.unlimited, learning.phase.isTrying) {
            case (true, true):
                message =
                    "each request gets a connection of its own, to try: \(shared) as streams of shared ones; "
                    + "\(sharing) of the running requests share one"
            case (true, false):
                message = "each request keeps a connection of its own: \(separate), against \(shared) shared"
            case (false, _):
                message =
                    "requests share connections again: \(separate) on connections of their own, against "
                    + "\(shared) shared"
            }
            logger.debug("\(message)")
        }

        /// Wakes a straggler that received nothing for a second (`braid_easy_wake_receiving`), up to three times: a
        /// body libcurl left in its stream's buffer is then handed over, where the stall timeout would have waited
        /// 30 seconds and asked again. One that is merely slow, or paused by its client, loses nothing.
        private func wakeStragglers() {
            guard !stragglers.isEmpty else { return }
            let now = TransferEngine.now()
            guard now >= nextWake else { return }
            nextWake = now + 0.25
            for (address, straggler) in stragglers {
                guard owners[address] != nil, let raw = UnsafeMutableRawPointer(bitPattern: address),
                    straggler.wakes < 3
                else {
                    stragglers[address] = nil
                    continue
                }
                let received = EasyHandle.bodyBytesReceived(raw: raw)
                if received != straggler.received {
                    stragglers[address] = (received, now, straggler.wakes)
                } else if now - straggler.since >= 1 {
                    braid_easy_wake_receiving(raw)
                    stragglers[address] = (received, now, straggler.wakes + 1)
                }
            }
        }

        /// The machine's CPU time and the process's, nil where they cannot be read.
        private static func machineCPU() -> StreamsPerConnection.CPUTime? {
            var total = 0.0
            var process = timespec()
            guard braid_machine_cpu_seconds(&total) == 0, clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &process) == 0
            else { return nil }
            return StreamsPerConnection.CPUTime(
                total: total, process: Double(process.tv_sec) + Double(process.tv_nsec) / 1e9)
        }

        /// A client joins a pool that had none since `idleSince`: after a while, it learns afresh.
        private func resumeLearning() {
            guard let idleSince, var current = learning else { return }
            self.idleSince = nil
            if let limit = current.resume(
                idleSince: idleSince, now: TransferEngine.now(), received: received, machine: Self.machineCPU()),
                mayCarry?(limit) != false
            {
                multi.setStreamsPerConnection(limit)
                logger.debug("requests share connections again, to learn afresh after a while with none")
            }
            learning = current
        }

        private func detachFinished() {
            guard clients.contains(where: \.isFinished) else { return }
            var remaining: [any PoolClient] = []
            for client in clients {
                guard client.isFinished else {
                    remaining.append(client)
                    continue
                }
                if client.yieldsToVerifier {
                    yielding -= 1
                    if yielding == 0, let previous = previousNice {
                        _ = braid_set_thread_nice(previous)
                        previousNice = nil
                    }
                }
                client.detached()
            }
            clients = remaining
            if clients.isEmpty && learning != nil { idleSince = TransferEngine.now() }
        }
    }
}
