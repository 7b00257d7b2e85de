#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// Identifies the current boot of the machine, so that a checkpoint can tell whether the page cache that held its
/// unsynced data survived: data written by a killed process is still there on the same boot, not after a reboot.
enum BootID {
    static let current: String = {
        let path = "/proc/sys/kernel/random/boot_id"
        if let text = try? String(contentsOfFile: path, encoding: .utf8) {
            let id = text.trimmingWhitespace()
            if !id.isEmpty { return id }
        }
        // Without a boot id nothing unsynced is ever trusted across runs, which is safe, only slower.
        return "unknown-\(getpid())-\(Date().timeIntervalSince1970)"
    }()
}
