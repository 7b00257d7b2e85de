import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Turns SIGINT and SIGTERM into a call, so the download can checkpoint and exit cleanly instead of dying.
final class SignalTrap {
    private let sources: [any DispatchSourceSignal]
    private let caught = CaughtSignal()

    private final class CaughtSignal: Sendable {
        let number = Mutex<Int32?>(nil)
    }

    init(_ handler: @escaping @Sendable () -> Void) {
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            sources.append(source)
        }
        self.sources = sources
        for (source, number) in zip(sources, [SIGINT, SIGTERM]) {
            source.setEventHandler { [caught] in
                caught.number.withLock { if $0 == nil { $0 = number } }
                handler()
            }
            source.resume()
        }
    }

    /// The first signal caught, if any.
    var caughtSignal: Int32? { caught.number.withLock { $0 } }

    func cancel() {
        for source in sources { source.cancel() }
    }
}
