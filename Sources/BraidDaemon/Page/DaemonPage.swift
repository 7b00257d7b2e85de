/// The page `braid daemon` serves at `/`: one self-contained HTML document (inline CSS and JavaScript, nothing
/// fetched from anywhere else) that drives the daemon through aria2's JSON-RPC over a WebSocket to `/jsonrpc` on
/// the same host (`ws:` or `wss:` following the page's own scheme).
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
    /// The page's HTML document, UTF-8.
    public static let html: [UInt8] = Array(document.utf8)

    private static let document = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <title>braid</title>
        <style>
        :root {
          color-scheme: light dark;
          --bg: #f6f7f9; --panel: #ffffff; --text: #1d2330; --muted: #6a7385; --line: #dde1e8;
          --accent: #2f6fde; --active: #f29d1d; --done: #2f9e5b; --error: #d1433b; --track: #e7eaf0;
        }
        @media (prefers-color-scheme: dark) {
          :root {
            --bg: #14171c; --panel: #1c2027; --text: #e3e6eb; --muted: #8d96a6; --line: #2c323c;
            --accent: #5b93f0; --active: #f5b041; --done: #4fbf7c; --error: #ef6a61; --track: #2a2f38;
          }
        }
        * { box-sizing: border-box; }
        body {
          margin: 0; background: var(--bg); color: var(--text);
          font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
        }
        header {
          display: flex; flex-wrap: wrap; align-items: center; gap: 12px 24px;
          padding: 12px 20px; background: var(--panel); border-bottom: 1px solid var(--line);
        }
        header h1 { margin: 0; font-size: 18px; letter-spacing: 0.02em; }
        .stats { display: flex; gap: 16px; color: var(--muted); font-variant-numeric: tabular-nums; }
        .stats b { color: var(--text); font-weight: 600; }
        .spacer { flex: 1; }
        #connection {
          padding: 2px 10px; border-radius: 999px; font-size: 12px; border: 1px solid var(--line); color: var(--muted);
        }
        #connection[data-state="open"] { color: var(--done); border-color: var(--done); }
        #connection[data-state="closed"] { color: var(--error); border-color: var(--error); }
        label.token { display: flex; align-items: center; gap: 6px; color: var(--muted); }
        input {
          font: inherit; color: var(--text); background: var(--bg); border: 1px solid var(--line);
          border-radius: 6px; padding: 6px 8px;
        }
        input:focus { outline: 2px solid var(--accent); outline-offset: -1px; }
        #token { width: 11em; }
        button {
          font: inherit; cursor: pointer; color: var(--text); background: var(--panel);
          border: 1px solid var(--line); border-radius: 6px; padding: 5px 12px;
        }
        button:hover { border-color: var(--accent); }
        button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
        button.remove:hover { border-color: var(--error); color: var(--error); }
        main { padding: 16px 20px; max-width: 1280px; margin: 0 auto; }
        #add-form { display: flex; gap: 8px; margin-bottom: 10px; }
        #add-url { flex: 1; min-width: 0; }
        #message { min-height: 1.45em; margin: 0 0 10px; color: var(--muted); }
        #message[data-kind="error"] { color: var(--error); }
        table { width: 100%; border-collapse: collapse; background: var(--panel); border: 1px solid var(--line);
          border-radius: 8px; overflow: hidden; }
        th, td { padding: 8px 10px; text-align: left; border-bottom: 1px solid var(--line); vertical-align: middle; }
        th {
          font-size: 12px; font-weight: 600; color: var(--muted); text-transform: uppercase; letter-spacing: 0.04em;
        }
        tr:last-child td { border-bottom: none; }
        td.num { font-variant-numeric: tabular-nums; white-space: nowrap; }
        .name { font-weight: 600; word-break: break-all; }
        .detail { color: var(--muted); font-size: 12px; word-break: break-word; }
        tr[data-status="error"] .detail { color: var(--error); }
        .status {
          font-size: 12px; padding: 1px 8px; border-radius: 999px; border: 1px solid var(--line); white-space: nowrap;
        }
        tr[data-status="active"] .status { color: var(--accent); border-color: var(--accent); }
        tr[data-status="complete"] .status { color: var(--done); border-color: var(--done); }
        tr[data-status="error"] .status { color: var(--error); border-color: var(--error); }
        .progress {
          position: relative; height: 8px; border-radius: 4px; background: var(--track); overflow: hidden;
          min-width: 120px;
        }
        .progress > div { position: absolute; inset: 0 auto 0 0; background: var(--accent); }
        tr[data-status="complete"] .progress > div { background: var(--done); }
        tr[data-status="error"] .progress > div { background: var(--error); }
        .percent { font-size: 12px; color: var(--muted); font-variant-numeric: tabular-nums; }
        canvas.segment-map { display: block; width: 220px; height: 14px; border-radius: 3px; background: var(--track); }
        .actions { display: flex; gap: 6px; justify-content: flex-end; }
        .empty td { text-align: center; color: var(--muted); padding: 24px; }
        </style>
        </head>
        <body>
        <header>
          <h1>braid</h1>
          <div class="stats" aria-label="global statistics">
            <span>↓ <b id="global-speed">0 B/s</b></span>
            <span>active <b id="num-active">0</b></span>
            <span>waiting <b id="num-waiting">0</b></span>
            <span>stopped <b id="num-stopped">0</b></span>
          </div>
          <div class="spacer"></div>
          <label class="token">token <input id="token" type="password" autocomplete="off" spellcheck="false"
            placeholder="rpc secret"></label>
          <span id="connection" data-state="closed" role="status">disconnected</span>
        </header>
        <main>
          <form id="add-form" autocomplete="off">
            <input id="add-url" type="text" inputmode="url" spellcheck="false"
              placeholder="https://example.com/file.iso" aria-label="URL to download">
            <button id="add-button" class="primary" type="submit">Add</button>
          </form>
          <p id="message" role="status"></p>
          <table>
            <thead>
              <tr><th>Name</th><th>Status</th><th>Progress</th><th>Speed</th><th>ETA</th><th>Segments</th><th></th></tr>
            </thead>
            <tbody id="downloads">
              <tr class="empty"><td colspan="7">No downloads.</td></tr>
            </tbody>
          </table>
        </main>
        <script>
        "use strict";
        (function () {
          const $ = (id) => document.getElementById(id);
          const tokenField = $("token"), connection = $("connection"), message = $("message");
          const rows = $("downloads"), emptyRow = rows.querySelector("tr.empty");
          const TOKEN_KEY = "braid.token";

          // ---- the token: #token=SECRET, else localStorage, else the field ----
          let token = "";
          try { token = localStorage.getItem(TOKEN_KEY) || ""; } catch (e) { /* storage may be disabled */ }
          const fromHash = new URLSearchParams(location.hash.replace(/^#/, "")).get("token");
          if (fromHash) { token = fromHash; remember(token); }
          tokenField.value = token;
          window.addEventListener("hashchange", () => {
            const changed = new URLSearchParams(location.hash.replace(/^#/, "")).get("token");
            if (changed && changed !== token) { token = changed; tokenField.value = token; remember(token); refresh(); }
          });
          tokenField.addEventListener("change", () => {
            token = tokenField.value.trim();
            remember(token);
            refresh();
          });
          function remember(value) {
            try { value ? localStorage.setItem(TOKEN_KEY, value) : localStorage.removeItem(TOKEN_KEY); } catch (e) { }
          }
          function withToken(params) { return token ? ["token:" + token].concat(params) : params; }

          // ---- the status line ----
          function say(text, kind) {
            message.textContent = text || "";
            message.dataset.kind = kind || "info";
          }

          // ---- JSON-RPC over the WebSocket ----
          let socket = null, nextId = 1, retryDelay = 500, retryTimer = null, refreshTimer = null;
          const pending = new Map();

          function setConnection(state, text) {
            connection.dataset.state = state;
            connection.textContent = text;
          }

          function connect() {
            retryTimer = null;
            const scheme = location.protocol === "https:" ? "wss:" : "ws:";
            setConnection("connecting", "connecting…");
            let ws;
            try { ws = new WebSocket(scheme + "//" + location.host + "/jsonrpc"); }
            catch (e) { scheduleReconnect(); return; }
            socket = ws;
            ws.onopen = () => {
              retryDelay = 500;
              setConnection("open", "connected");
              refresh();
              refreshTimer = setInterval(refresh, 1000);
            };
            ws.onmessage = (event) => {
              let data;
              try { data = JSON.parse(event.data); } catch (e) { return; }
              for (const item of Array.isArray(data) ? data : [data]) { receive(item); }
            };
            ws.onclose = () => {
              if (socket !== ws) { return; }
              socket = null;
              clearInterval(refreshTimer);
              refreshTimer = null;
              for (const entry of pending.values()) { entry.reject(new Error("connection closed")); }
              pending.clear();
              scheduleReconnect();
            };
          }

          function scheduleReconnect() {
            const seconds = Math.round(retryDelay / 100) / 10;
            setConnection("closed", "disconnected, retrying in " + seconds + " s");
            retryTimer = setTimeout(connect, retryDelay);
            retryDelay = Math.min(retryDelay * 2, 10000);
          }

          function receive(item) {
            if (!item || typeof item !== "object") { return; }
            if (typeof item.method === "string") {
              if (item.method.startsWith("aria2.onDownload") || item.method.startsWith("aria2.onBt")) { refresh(); }
              return;
            }
            const entry = pending.get(item.id);
            if (!entry) { return; }
            pending.delete(item.id);
            clearTimeout(entry.timer);
            if (item.error) {
              entry.reject(new Error(String(item.error.message || "error " + item.error.code)));
            } else {
              entry.resolve(item.result);
            }
          }

          function call(method, params, raw) {
            return new Promise((resolve, reject) => {
              if (!socket || socket.readyState !== WebSocket.OPEN) { reject(new Error("not connected")); return; }
              const id = "braid-page-" + nextId++;
              const timer = setTimeout(() => {
                pending.delete(id);
                reject(new Error(method + " timed out"));
              }, 15000);
              pending.set(id, { resolve, reject, timer });
              const request = {
                jsonrpc: "2.0", id: id, method: method, params: raw ? params : withToken(params || []),
              };
              socket.send(JSON.stringify(request));
            });
          }

          // ---- refreshing the list ----
          let refreshing = false, refreshAgain = false, refreshFailed = false;
          async function refresh() {
            if (!socket || socket.readyState !== WebSocket.OPEN) { return; }
            if (refreshing) { refreshAgain = true; return; }
            refreshing = true;
            try {
              const calls = [
                ["aria2.tellActive", []],
                ["aria2.tellWaiting", [0, 1000]],
                ["aria2.tellStopped", [0, 1000]],
                ["aria2.getGlobalStat", []],
              ].map(([name, params]) => ({ methodName: name, params: withToken(params) }));
              const results = await call("system.multicall", [calls], true);
              const value = (index) => {
                const entry = Array.isArray(results) ? results[index] : null;
                if (Array.isArray(entry)) { return entry[0]; }
                if (entry && typeof entry === "object" && entry.message) { throw new Error(String(entry.message)); }
                return null;
              };
              const list = [].concat(value(0) || [], value(1) || [], value(2) || []);
              render(list.filter((item) => item && typeof item === "object"));
              showGlobal(value(3) || {});
              if (refreshFailed) { refreshFailed = false; say(""); }
            } catch (e) {
              refreshFailed = true;
              say("Refresh failed: " + e.message, "error");
            } finally {
              refreshing = false;
              if (refreshAgain) { refreshAgain = false; refresh(); }
            }
          }

          // ---- formatting ----
          function number(value) {
            const n = Number(value);
            return Number.isFinite(n) ? n : 0;
          }
          function bytes(value) {
            let n = number(value);
            const units = ["B", "KiB", "MiB", "GiB", "TiB"];
            let unit = 0;
            while (n >= 1024 && unit < units.length - 1) { n /= 1024; unit++; }
            return (unit === 0 ? String(Math.round(n)) : n.toFixed(n < 10 ? 2 : 1)) + " " + units[unit];
          }
          function duration(seconds) {
            if (seconds === null || seconds === undefined || !Number.isFinite(Number(seconds))) { return "–"; }
            let s = Math.max(0, Math.round(Number(seconds)));
            const h = Math.floor(s / 3600); s -= h * 3600;
            const m = Math.floor(s / 60); s -= m * 60;
            if (h > 0) { return h + "h " + m + "m"; }
            if (m > 0) { return m + "m " + s + "s"; }
            return s + "s";
          }
          function basename(path) {
            const clean = String(path || "").split(/[?#]/)[0].replace(/[\/\\]+$/, "");
            const parts = clean.split(/[\/\\]/);
            return parts[parts.length - 1] || "";
          }
          function nameOf(item) {
            const files = Array.isArray(item.files) ? item.files : [];
            const first = files[0] || {};
            if (first.path) { return basename(first.path); }
            const uris = Array.isArray(first.uris) ? first.uris : [];
            if (uris[0] && uris[0].uri) {
              try { return decodeURIComponent(basename(uris[0].uri)) || uris[0].uri; }
              catch (e) { return basename(uris[0].uri); }
            }
            return String(item.gid || "download");
          }
          function etaOf(item, braid) {
            if (braid && braid.etaSeconds !== null && braid.etaSeconds !== undefined) {
              return duration(braid.etaSeconds);
            }
            const speed = number(item.downloadSpeed), left = number(item.totalLength) - number(item.completedLength);
            if (item.status !== "active" || speed <= 0 || left <= 0) { return "–"; }
            return duration(left / speed);
          }

          // ---- rendering: one row per gid, updated in place ----
          const byGid = new Map();
          function render(list) {
            const seen = new Set();
            let previous = null;
            for (const item of list) {
              const gid = String(item.gid || "");
              if (!gid || seen.has(gid)) { continue; }
              seen.add(gid);
              let row = byGid.get(gid);
              if (!row) { row = makeRow(gid); byGid.set(gid, row); }
              update(row, item);
              const anchor = previous ? previous.nextSibling : rows.firstChild;
              if (row !== anchor) { rows.insertBefore(row, anchor); }
              previous = row;
            }
            for (const [gid, row] of byGid) {
              if (!seen.has(gid)) { row.remove(); byGid.delete(gid); }
            }
            emptyRow.hidden = byGid.size > 0;
            if (byGid.size === 0 && emptyRow.parentNode !== rows) { rows.appendChild(emptyRow); }
          }

          function cell(row, className) {
            const td = document.createElement("td");
            if (className) { td.className = className; }
            row.appendChild(td);
            return td;
          }
          function element(tag, className, parent) {
            const node = document.createElement(tag);
            if (className) { node.className = className; }
            if (parent) { parent.appendChild(node); }
            return node;
          }

          function makeRow(gid) {
            const row = document.createElement("tr");
            row.className = "download";
            row.dataset.gid = gid;
            const nameCell = cell(row);
            const parts = {
              name: element("div", "name", nameCell),
              detail: element("div", "detail", nameCell),
              status: element("span", "status", cell(row)),
            };
            const progressCell = cell(row);
            parts.bar = element("div", "", element("div", "progress", progressCell));
            parts.percent = element("div", "percent", progressCell);
            parts.speed = cell(row, "num");
            parts.eta = cell(row, "num");
            parts.map = element("canvas", "segment-map", cell(row));
            parts.map.width = 220;
            parts.map.height = 14;
            parts.actions = element("div", "actions", cell(row));
            parts.actionsFor = null;
            row._parts = parts;
            return row;
          }

          function update(row, item) {
            const p = row._parts;
            const status = String(item.status || "unknown");
            const braid = item.braid && typeof item.braid === "object" ? item.braid : null;
            const total = number(item.totalLength), done = number(item.completedLength);
            row.dataset.status = status;
            row.dataset.completed = String(item.completedLength || "0");
            row.dataset.total = String(item.totalLength || "0");
            p.name.textContent = nameOf(item);
            p.name.title = item.dir ? String(item.dir) : "";
            let detail = "";
            if (status === "error") {
              detail = String(item.errorMessage || ("error " + (item.errorCode || "")));
            } else if (braid) {
              detail = [braid.state, braid.verification].filter((x) => typeof x === "string" && x).join(" · ");
            }
            p.detail.textContent = detail;
            p.status.textContent = status;
            const fraction = total > 0 ? Math.min(1, done / total) : (status === "complete" ? 1 : 0);
            p.bar.style.width = (fraction * 100).toFixed(1) + "%";
            p.percent.textContent =
              (fraction * 100).toFixed(1) + "% · " + bytes(done) + (total > 0 ? " of " + bytes(total) : "");
            p.speed.textContent = status === "active" ? bytes(item.downloadSpeed) + "/s" : "–";
            p.eta.textContent = etaOf(item, braid);
            drawSegments(p.map, braid, total, fraction);
            if (p.actionsFor !== status) { makeActions(p, row.dataset.gid, status); }
          }

          function drawSegments(canvas, braid, total, fraction) {
            const ratio = window.devicePixelRatio || 1;
            const width = Math.round(220 * ratio), height = Math.round(14 * ratio);
            if (canvas.width !== width || canvas.height !== height) { canvas.width = width; canvas.height = height; }
            const context = canvas.getContext("2d");
            if (!context) { return; }
            const style = getComputedStyle(document.documentElement);
            const color = (name) => style.getPropertyValue(name).trim() || "#888";
            context.clearRect(0, 0, width, height);
            const segments = braid && Array.isArray(braid.segments) ? braid.segments : [];
            let active = 0;
            if (total > 0 && segments.length > 0) {
              for (const segment of segments) {
                const start = number(segment.start), end = number(segment.end) || total;
                const doneBytes = Math.min(Math.max(number(segment.done), 0), Math.max(end - start, 0));
                const x = Math.floor(start / total * width);
                const doneX = Math.ceil((start + doneBytes) / total * width);
                const endX = Math.ceil(end / total * width);
                if (segment.active === true) {
                  active++;
                  context.fillStyle = color("--active");
                  context.globalAlpha = 0.25;
                  context.fillRect(x, 0, Math.max(endX - x, 1), height);
                  context.globalAlpha = 1;
                }
                context.fillStyle = segment.active === true ? color("--active") : color("--accent");
                context.fillRect(x, 0, Math.max(doneX - x, 0), height);
                context.fillStyle = color("--panel");
                context.fillRect(Math.max(endX - 1, 0), 0, Math.max(Math.round(ratio), 1), height);
              }
            } else {
              context.fillStyle = color("--accent");
              context.fillRect(0, 0, Math.round(fraction * width), height);
            }
            canvas.title = segments.length > 0
              ? segments.length + " segment" + (segments.length === 1 ? "" : "s") + ", " + active + " active"
              : "no segment map";
            canvas.setAttribute("aria-label", canvas.title);
          }

          function makeActions(parts, gid, status) {
            parts.actionsFor = status;
            parts.actions.replaceChildren();
            const button = (label, className, method) => {
              const b = element("button", className, parts.actions);
              b.type = "button";
              b.textContent = label;
              b.addEventListener("click", () => act(method, gid, label));
            };
            if (status === "active" || status === "waiting") { button("Pause", "pause", "aria2.pause"); }
            if (status === "paused") { button("Resume", "resume", "aria2.unpause"); }
            const live = status === "active" || status === "waiting" || status === "paused";
            button("Remove", "remove", live ? "aria2.remove" : "aria2.removeDownloadResult");
          }

          async function act(method, gid, label) {
            try {
              await call(method, [gid]);
              say("");
            } catch (e) {
              say(label + " failed: " + e.message, "error");
            }
            refresh();
          }

          function showGlobal(stat) {
            $("global-speed").textContent = bytes(stat.downloadSpeed) + "/s";
            $("num-active").textContent = String(number(stat.numActive));
            $("num-waiting").textContent = String(number(stat.numWaiting));
            $("num-stopped").textContent = String(number(stat.numStopped));
          }

          // ---- adding a download ----
          $("add-form").addEventListener("submit", async (event) => {
            event.preventDefault();
            const field = $("add-url");
            const url = field.value.trim();
            if (!url) { return; }
            try {
              const gid = await call("aria2.addUri", [[url]]);
              field.value = "";
              say("Added " + url + (gid ? " (" + gid + ")" : ""));
            } catch (e) {
              say("Adding failed: " + e.message, "error");
            }
            refresh();
          });

          connect();
        })();
        </script>
        </body>
        </html>
        """#
}
