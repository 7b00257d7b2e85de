/// The page `braid daemon` serves at `/`: `page.html` beside this file, one self-contained HTML document (inline
/// CSS and JavaScript, nothing fetched from anywhere else) that drives the daemon through aria2's JSON-RPC over a
/// WebSocket to `/jsonrpc` on the same host (`ws:` or `wss:` following the page's own scheme).
///
/// The token comes from `location.hash` (`#token=SECRET`), else from `localStorage`, else from the field in the
/// header; when set, every call carries `"token:SECRET"` as its first parameter (inside `system.multicall`, each
/// inner call carries it, as aria2 expects). The list is refreshed with one `system.multicall` of
/// `aria2.tellActive`, `aria2.tellWaiting` [0, 1000], `aria2.tellStopped` [0, 1000] and `aria2.getGlobalStat` on
/// every `aria2.onDownload…` notification and once a second while the socket is open; a closed socket is reopened
/// with backoff. Every server-provided string reaches the page through `textContent`, never as HTML.
///
/// Stable hooks for browser tests:
/// - `#token`: the token field; `#add-url`: the URL field; `#add-button`: submits `aria2.addUri` with `[[url]]`.
/// - `#connection`: the socket's state; its text is exactly `connected` while the socket is open.
/// - `#message`: the status line where failed calls are reported.
/// - `#global-speed`, `#num-active`, `#num-waiting`, `#num-stopped`: `aria2.getGlobalStat`.
/// - Each download is a `tr.download` with `data-gid`, `data-status` (aria2's status), `data-completed` and
///   `data-total` (bytes, aria2's decimal strings); inside it, buttons `.pause` (active or waiting), `.resume`
///   (paused) and `.remove` (always: `aria2.remove` while active, waiting or paused, `aria2.removeDownloadResult`
///   once complete, failed or removed), a `.progress` bar, and a `.segment-map` canvas drawing each of Braid's
///   segments (done part filled, active segments highlighted) over the total length.
public enum DaemonPage {
    /// The page's HTML document, UTF-8, embedded in the binary at build time (`.embedInCode` in `Package.swift`):
    /// one file to install, nothing looked up at run time.
    public static let html: [UInt8] = PackageResources.page_html
}
