import ArgumentParser
import Braid

/// A rate as `--limit-rate` and `--max-overall-limit` take it: `512K`, `10M`, `1.5G` bytes a second; 0 for none.
struct RateArgument {
    /// Nil for no limit.
    var bytesPerSecond: Int64?

    init(parsing text: String) throws {
        do throws(BraidError) {
            bytesPerSecond = try ByteCount.rate(text)
        } catch {
            throw ValidationError(error.message)
        }
    }
}
