import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A command prefix that runs what it executes in a mount namespace of its own, after `script` changed it:
/// `unshare` gives `sh` the namespace, `script` mounts, and `exec "$0" "$@"` runs the command, which keeps the
/// process id. Nil where this machine allows no mount namespace (neither root nor user namespaces), or `script`
/// fails there.
enum MountNamespace {
    static func wrapper(script: String) -> [String]? {
        let script = script + #" && exec "$0" "$@""#
        for flags in geteuid() == 0 ? [["-m"], ["-r", "-m"]] : [["-r", "-m"]] {
            let wrapper = ["/usr/bin/unshare"] + flags + ["/bin/sh", "-c", script]
            let probe = Process()
            probe.executableURL = URL(fileURLWithPath: wrapper[0])
            probe.arguments = Array(wrapper.dropFirst()) + ["/bin/true"]
            probe.standardError = FileHandle.nullDevice
            guard (try? probe.run()) != nil else { continue }
            probe.waitUntilExit()
            if probe.terminationStatus == 0 { return wrapper }
        }
        return nil
    }
}
