import Foundation

extension NginxFixture {
    /// The text of `nginx.conf` for one start attempt: a configuration plus the paths and ports chosen at run time.
    ///
    /// Everything nginx writes (pid, lock, logs, temp files) goes under `prefix`, so parallel fixtures never
    /// touch each other or the system's nginx.
    struct ConfigFile {
        /// The access log line format; `AccessLogEntry` parses exactly this.
        static let logFormat =
            #"$status $bytes_sent $body_bytes_sent $connection $scheme $ssl_session_reused "$request_completion" "$http_range" "$request""#
        /// The URI the readiness probe asks for; it answers 204 without writing to the access log.
        static let readinessPath = "/.braid-fixture-ready"
        /// The response header carrying `readinessToken`, proving the answer came from this fixture's nginx.
        static let readinessHeader = "X-Braid-Fixture"

        let configuration: Configuration
        let prefix: String
        let documentRoot: String
        let port: Int
        let tls: (port: Int, certificate: String, key: String)?
        /// The port for HTTP/2 in clear text with prior knowledge, when the configuration offers HTTP/2.
        let h2cPort: Int?
        let readinessToken: String
        /// Whether to keep workers running as root: the default `nobody` cannot read a test's 0700 temp dirs.
        let runsWorkersAsRoot: Bool

        var text: String {
            var lines = [
                "daemon off;",
                "master_process on;",
                "worker_processes \(configuration.workerProcesses);",
                "pid \(quoted(prefix + "/nginx.pid"));",
                "lock_file \(quoted(prefix + "/nginx.lock"));",
                "error_log \(quoted(prefix + "/logs/error.log")) notice;",
                "events { worker_connections 4096; }",
                "http {",
                "    default_type application/octet-stream;",
                "    types {}",
                "    sendfile on;",
                "    tcp_nopush on;",
                "    keepalive_requests 100000;",
                "    keepalive_timeout 60s;",
            ]
            if runsWorkersAsRoot { lines.insert("user root;", at: 0) }
            for temp in ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"] {
                lines.append("    \(temp)_temp_path \(quoted(prefix + "/temp/" + temp));")
            }
            if configuration.locations.contains(where: { $0.cache != nil }) {
                lines.append(
                    "    proxy_cache_path \(quoted(prefix + "/temp/cache")) keys_zone=braid:16m max_size=64g "
                        + "inactive=1d use_temp_path=off;")
            }
            lines += [
                "    log_format braid '\(Self.logFormat)';",
                "    access_log \(quoted(prefix + "/logs/access.log")) braid;",
                "    server {",
                "        listen 127.0.0.1:\(port);",
            ]
            if let tls {
                lines += [
                    "        listen 127.0.0.1:\(tls.port) ssl\(configuration.offersHTTP2 ? " http2" : "");",
                    "        ssl_certificate \(quoted(tls.certificate));",
                    "        ssl_certificate_key \(quoted(tls.key));",
                    "        ssl_protocols TLSv1.2 TLSv1.3;",
                ]
            }
            if let h2cPort { lines.append("        listen 127.0.0.1:\(h2cPort) http2;") }
            lines += [
                "        server_name localhost;",
                "        root \(quoted(documentRoot));",
                "        location = \(Self.readinessPath) {",
                "            access_log off;",
                "            add_header \(Self.readinessHeader) \(quoted(readinessToken)) always;",
                "            return 204;",
                "        }",
            ]
            for location in configuration.locations {
                lines += block(for: location).map { "        " + $0 }
            }
            lines += ["    }", "}"]
            return lines.joined(separator: "\n") + "\n"
        }

        private func block(for location: Location) -> [String] {
            let modifier: String
            let uri: String
            switch location.match {
            case .prefix(let prefix): (modifier, uri) = ("^~", prefix)
            case .exact(let path): (modifier, uri) = ("=", path)
            }
            var lines = ["location \(modifier) \(quoted(uri)) {"]
            if let redirect = location.redirect {
                return lines + ["    return \(redirect.status) \(quoted(redirect.location));", "}"]
            }
            if let cache = location.cache {
                // Concurrent misses of one slice wait for the first to fill it (a loaded machine may take a while),
                // so the origin serves each slice once.
                if let bytesPerSecond = location.bytesPerSecond {
                    lines += ["    limit_rate \(bytesPerSecond);", "    sendfile_max_chunk 64k;"]
                }
                return lines + [
                    "    slice \(cache.sliceSize);",
                    "    proxy_cache braid;",
                    "    proxy_cache_key $uri$slice_range;",
                    "    proxy_set_header Range $slice_range;",
                    "    proxy_cache_valid 200 206 1h;",
                    "    proxy_cache_lock on;",
                    "    proxy_cache_lock_timeout 5m;",
                    "    proxy_cache_lock_age 5m;",
                    "    proxy_http_version 1.1;",
                    "    proxy_set_header Connection \"\";",
                    "    proxy_pass \(quoted(cache.origin));",
                    "}",
                ]
            }
            lines.append("    alias \(quoted(documentRoot + location.target));")
            if location.resetsHTTP2Streams {
                lines.append(#"    if ($server_protocol = "HTTP/2.0") { return 444; }"#)
            }
            if let bytesPerSecond = location.bytesPerSecond {
                // Strict pacing: without a cap on each sendfile chunk, every request sends its first ~2 MiB at once,
                // and a response cut short by a steal has sent that much past where it was needed.
                lines.append("    limit_rate \(bytesPerSecond);")
                lines.append("    sendfile_max_chunk 64k;")
            }
            for header in location.headers {
                lines.append("    add_header \(quoted(header.name)) \(quoted(header.value)) always;")
            }
            lines.append("}")
            return lines
        }

        /// A double-quoted nginx string; `$` is refused because nginx would expand it as a variable.
        private func quoted(_ value: String) -> String {
            precondition(!value.contains("$") && !value.contains("\n"), "nginx cannot quote '\(value)' literally")
            let escaped = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(
                of: "\"", with: "\\\"")
            return "\"\(escaped)\""
        }
    }
}
