import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `posix_spawn` and `waitpid` with the settings a test's child needs, behind two typed functions.
enum Spawn {
    /// Starts `path` with stdin from /dev/null and stdout and stderr written to the given files.
    ///
    /// The child starts with no blocked signals and every catchable signal at its default action, whatever the
    /// spawning thread had, and inherits no file descriptors beyond the three standard ones. With
    /// `newProcessGroup`, it leads a process group of its own, as a shell's foreground job does on a terminal.
    static func launch(
        _ path: String,
        arguments: [String],
        environment: [String: String]?,
        standardOutput: String,
        standardError: String,
        newProcessGroup: Bool = false
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        try check("posix_spawn_file_actions_init", posix_spawn_file_actions_init(&actions))
        defer { posix_spawn_file_actions_destroy(&actions) }
        let created = O_WRONLY | O_CREAT | O_TRUNC
        try check("addopen stdin", posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0))
        try check("addopen stdout", posix_spawn_file_actions_addopen(&actions, 1, standardOutput, created, 0o644))
        try check("addopen stderr", posix_spawn_file_actions_addopen(&actions, 2, standardError, created, 0o644))
        if let closeFrom = addCloseFrom {
            try check("addclosefrom", closeFrom(&actions, 3))
        }

        var attributes = posix_spawnattr_t()
        try check("posix_spawnattr_init", posix_spawnattr_init(&attributes))
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var catchableSignals = sigset_t()
        sigemptyset(&catchableSignals)
        for signal in Int32(1)..<32 where signal != SIGKILL && signal != SIGSTOP {
            sigaddset(&catchableSignals, signal)
        }
        try check("setsigmask", posix_spawnattr_setsigmask(&attributes, &noSignals))
        try check("setsigdefault", posix_spawnattr_setsigdefault(&attributes, &catchableSignals))
        var flags = Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        if newProcessGroup {
            try check("setpgroup", posix_spawnattr_setpgroup(&attributes, 0))
            flags |= Int16(POSIX_SPAWN_SETPGROUP)
        }
        try check("setflags", posix_spawnattr_setflags(&attributes, flags))

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let environment = environment ?? ProcessInfo.processInfo.environment
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }

        var pid: pid_t = 0
        try check("posix_spawn", posix_spawn(&pid, path, &actions, &attributes, argv, envp))
        return pid
    }

    /// Reaps `pid` if it has exited, without blocking; `nil` while it is still running.
    static func reap(_ pid: pid_t) -> ChildProcess.ExitStatus? {
        var rawStatus: Int32 = 0
        var result: pid_t
        repeat {
            result = waitpid(pid, &rawStatus, WNOHANG)
        } while result == -1 && errno == EINTR
        guard result == pid else {
            // ECHILD means something else in this process reaped it; the status is lost, but it is not running.
            return result == -1 ? .exited(-1) : nil
        }
        // The POSIX W* macros are not imported into Swift: the low 7 bits hold the terminating signal, 0 if none.
        let signal = rawStatus & 0x7f
        return signal == 0 ? .exited((rawStatus >> 8) & 0xff) : .signalled(signal)
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), looked up at run time.
    ///
    /// Swift's Glibc module leaves out declarations behind `_GNU_SOURCE`, and this target has no C shim. Without
    /// it, descriptors some library opened without `O_CLOEXEC` leak into children; harmless, so it is optional.
    private static let addCloseFrom:
        (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
            guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np") else {
                return nil
            }
            return unsafeBitCast(
                symbol,
                to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self
            )
        }()

    /// posix_spawn functions return the error number rather than setting `errno`.
    private static func check(_ name: String, _ result: Int32) throws {
        guard result == 0 else { throw TestSupportError.systemCall(name, errno: result) }
    }
}
