import ArgumentParser
import Braid

/// A byte count as `--stream-window` and `--max-unpacked` take it: `1048576`, `512K`, `256M`, `2G`.
struct SizeArgument {
    var bytes: Int64

    init(parsing text: String) throws {
        do throws(BraidError) {
            bytes = try ByteCount.parse(text, examples: "1048576, 512K, 256M or 2G")
        } catch {
            throw ValidationError(error.message)
        }
    }
}
