import NIOCore
import NIOHTTP1

extension HTTPReply {
    /// Writes the reply on `channel` and returns once its last byte has been handed to the kernel, so that a close
    /// that follows (`Connection: close`, an error) cannot cut it short, however large it is: the writes go to the
    /// channel itself, whose futures complete only when written, not to `NIOAsyncChannel`'s writer, whose `write`
    /// returns once the writer holds the data and whose close drops what the channel has not written yet.
    ///
    /// - Throws: the channel's error when the client went away first.
    func send(on channel: any Channel, version: HTTPVersion, keepAlive: Bool) async throws {
        let parts = parts(version: version, keepAlive: keepAlive)
        for part in parts.dropLast() {
            channel.write(part, promise: nil)
        }
        if let last = parts.last {
            try await channel.writeAndFlush(last).get()
        }
    }
}
