import BraidTestServer
import Foundation
import Glibc

// Serves one generated content with the faults given on the command line, for manual runs and for scripts
// that compare downloaders; see `ServerOptions.usage`.

let options: ServerOptions
do {
    options = try ServerOptions(arguments: Array(CommandLine.arguments.dropFirst()))
} catch {
    if let message = error.message {
        FileHandle.standardError.write(Data("braid-test-server: \(message)\n\n".utf8))
    }
    FileHandle.standardError.write(Data((ServerOptions.usage + "\n").utf8))
    exit(error.message == nil ? 0 : 64)
}

// Blocked before any server thread exists, so that every thread inherits the mask and sigwait gets them.
var stopSignals = sigset_t()
sigemptyset(&stopSignals)
sigaddset(&stopSignals, SIGINT)
sigaddset(&stopSignals, SIGTERM)
pthread_sigmask(SIG_BLOCK, &stopSignals, nil)

let route = TestServer.Route(size: options.size, seed: options.seed, faults: options.faults)
let printRecord: @Sendable (TestServer.RequestRecord) -> Void = { record in
    FileHandle.standardError.write(Data((record.logLine + "\n").utf8))
}
let server = TestServer(
    port: options.port, routes: [options.path: route], onResponse: options.logRequests ? printRecord : nil)
do {
    try server.start()
} catch {
    FileHandle.standardError.write(Data("braid-test-server: \(error)\n".utf8))
    exit(1)
}
FileHandle.standardOutput.write(Data((server.url(options.path) + "\n").utf8))

var received: Int32 = 0
sigwait(&stopSignals, &received)
server.shutdown()
exit(0)
