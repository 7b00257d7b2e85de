#!/usr/bin/env python3
"""A list's large file from a server that offers HTTP/2 and caps each connection: does braid still spread it?

A model repository as a list (a large file and many small ones) from an HTTPS server that offers HTTP/2 and caps
every connection's rate, as a per-flow shaper or a CDN's per-connection limit does. The server is nghttpx (Debian
`nghttp2-proxy`) on 127.0.0.1, terminating TLS with ALPN (h2, http/1.1) and capping each client connection at
CAP a second (`--write-rate` and `--write-burst`, which nghttpx refills once a second), in front of nginx serving
the files in clear. Over one HTTP/2 connection the whole list gets CAP; over several HTTP/1.1 connections, each
gets its own.

Rows, each run REPEAT times, alternating, medians:
- `braid -i LIST`: the list as braid runs it by default;
- `braid -i LIST --http2`: every request asked over HTTP/2, the large file's segments starting as streams of the
  shared connections (how braid ran a list's large file before `spreadsSegments`; since its lanes learn and move the
  rest of started pieces, `TransferMachine.connectionsSeparated`, they leave those connections too, later);
- `braid URL`: the large file alone, on a pool of its own (what the list's large file should come close to);
- `curl --parallel --parallel-max 16 -K CONFIG` (one HTTP/2 connection) and `aria2c -i LIST -x 16 -s 16 -j 16`.

A second list, with `--many N` (default 200; 0 leaves it out): N files of 256 KiB and no large file, each small
enough for a request or a few, which a lane of braid multiplexes until it learns that a connection a request is
faster (`StreamsPerConnection`). Rows `braid -i MANY`, `braid -i MANY --http1.1` (a connection a request from the
start), curl and aria2c as above. Its verdict: braid's wall at most 0.35 of curl's, whose one HTTP/2 connection is
what a list of braid's two lanes would be held to without learning (0.5 of it at best); braid's wall over
aria2c's is printed, not judged.

A third list, with `--mid N` (default 10; 0 leaves it out): N files of 4 MiB, each cut into pieces of 1 MiB whose
requests all start as streams of the shared connections, before a lane can learn anything. As the lane turns to a
connection a request, the rest of each started piece moves to one (`TransferMachine.connectionsSeparated`). Rows
`braid -i MID` and aria2c (a connection a file from the start). Its verdict: braid's wall at most 1.5 of aria2c's
(3.0 before the pieces moved).

Columns: wall, connections (distinct client ports in nghttpx's log) and which protocols were spoken. The verdicts:
the list's wall at most half of curl's (one HTTP/2 connection, which is what a list whose requests all shared a
connection would get), and its large file fetched over at least 4 HTTP/1.1 connections. The list's wall over the
forced-HTTP/2 list's is printed, not judged (it was the first verdict, at most 0.5, until that list learned to
move its pieces too). The list's wall over the large file's alone is printed too, not judged: in a list the file gets at most
its lane's half of the per-host cap less the lane's shared connection (7 of 16), where alone `-n auto` may go
further; and the small files come over the list's HTTP/2 connections, which the cap holds too. Exits 1 on a failed
verdict or a file that differs from its source.

Usage: Benchmarks/per_connection_cap.py [--braid PATH] [--cap 1M] [--size 32M] [--small 50] [--many 200]
    [--mid 10] [--repeat 3] [--workdir DIR]
All traffic stays on 127.0.0.1; nginx, nghttpx and the tools are stopped on exit.
"""

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import KiB, format_size, log  # noqa: E402

SMALL_SIZE = 64 * KiB
MANY_SIZE = 256 * KiB
MID_SIZE = 4096 * KiB
CURL = "curl --parallel --parallel-max 16"
ARIA2C = "aria2c -i LIST -x 16 -s 16 -j 16"


def start_nghttpx(work, nginx, cap):
    """nghttpx on a free port: TLS with nginx's certificate, each client connection capped at `cap` a second,
    logging each request's client port and protocol."""
    port = harness.free_port()
    access_log = work.path("nghttpx", "access.log")
    os.makedirs(os.path.dirname(access_log), exist_ok=True)
    # An empty configuration: Debian's /etc/nghttpx/nghttpx.conf adds a frontend on port 3000 to the one given here.
    configuration = work.path("nghttpx", "nghttpx.conf")
    open(configuration, "w").close()
    argv = [
        harness.require_executable("nghttpx"), f"--conf={configuration}", f"--frontend=127.0.0.1,{port}", f"--backend=127.0.0.1,{nginx.port}",
        f"--write-rate={cap}", f"--write-burst={cap}", "--workers=2", "--no-ocsp",
        f"--accesslog-file={access_log}", "--accesslog-format=$remote_port $alpn $status $path",
        f"--errorlog-file={work.path('nghttpx', 'error.log')}", nginx.key, nginx.certificate,
    ]
    work.children.popen(argv)
    harness.wait_for_http(f"https://127.0.0.1:{port}/small-00000.bin", cacert=nginx.certificate)
    return port, access_log


def read_log(path):
    """(client port, protocol) of each request logged so far."""
    if not os.path.exists(path):
        return []
    with open(path, errors="replace") as log_file:
        return [tuple(line.split()[:2]) for line in log_file if line.strip()]


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--braid", default=harness.built("braid"), help="the braid binary (default %(default)s)")
    parser.add_argument("--cap", default="1M", help="each connection's rate, a second (default %(default)s)")
    parser.add_argument("--size", default="32M", help="the large file (default %(default)s)")
    parser.add_argument("--small", type=int, default=50, help="small files of 64 KiB (default %(default)s)")
    parser.add_argument("--many", type=int, default=200,
                        help="files of 256 KiB in the second list, 0 for none (default %(default)s)")
    parser.add_argument("--mid", type=int, default=10,
                        help="files of 4 MiB in the third list, 0 for none (default %(default)s)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workdir", help="keep files and servers here instead of a temporary directory")
    options = parser.parse_args(argv)

    braid = harness.require_executable(options.braid, "braid")
    cap = harness.parse_size(options.cap)
    size = harness.parse_size(options.size)
    with harness.Workspace("braid-cap.", options.workdir) as work:
        digests = {"big.bin": work.file("big.bin", size)}
        small = harness.generate_files(work.document_root, "small", options.small, SMALL_SIZE)
        digests.update({name: digest for name, _, digest in small})
        nginx = work.nginx()
        port, access_log = start_nghttpx(work, nginx, options.cap)
        log(f"nghttpx on 127.0.0.1:{port}, each connection capped at {format_size(cap)}/s, before nginx")

        def url(name):
            return f"https://127.0.0.1:{port}/{name}"

        def write_lists(stem, names):
            """A list for braid and aria2c and a config for curl, of `names` through nghttpx: their paths."""
            list_path, config_path = work.path(f"{stem}.txt"), work.path(f"{stem}.cfg")
            with open(list_path, "w") as listing, open(config_path, "w") as config:
                for name in names:
                    listing.write(f"{url(name)}\n  out={name}\n")
                    config.write(f'url = "{url(name)}"\noutput = "{name}"\n')
            return list_path, config_path

        names = ["big.bin"] + [name for name, _, _ in small]
        list_path, curl_config = write_lists("list", names)
        cacert = nginx.certificate
        many = harness.generate_files(work.document_root, "many", options.many, MANY_SIZE)
        digests.update({name: digest for name, _, digest in many})
        many_names = [name for name, _, _ in many]
        many_list, many_config = write_lists("many", many_names)
        mid = harness.generate_files(work.document_root, "mid", options.mid, MID_SIZE)
        digests.update({name: digest for name, _, digest in mid})
        mid_names = [name for name, _, _ in mid]
        mid_list, _ = write_lists("mid", mid_names)
        rows = {
            "braid -i LIST": ([braid, "-i", list_path, "-q", "--cacert", cacert], names),
            "braid -i LIST --http2": ([braid, "-i", list_path, "-q", "--http2", "--cacert", cacert], names),
            "braid URL (the large file alone)": ([braid, url("big.bin"), "-q", "--cacert", cacert], ["big.bin"]),
            CURL: (
                ["curl", "-s", "--parallel", "--parallel-max", "16", "--cacert", cacert, "-K", curl_config], names),
            "aria2c -i LIST -x 16 -s 16 -j 16": (
                ["aria2c", "--no-conf=true", "-q", "-i", list_path, "-x", "16", "-s", "16", "-j", "16",
                 f"--ca-certificate={cacert}", "--allow-overwrite=true", "--auto-file-renaming=false"], names),
        }
        many_rows = {
            "braid -i MANY": ([braid, "-i", many_list, "-q", "--cacert", cacert], many_names),
            "braid -i MANY --http1.1": ([braid, "-i", many_list, "-q", "--http1.1", "--cacert", cacert], many_names),
            CURL: (["curl", "-s", "--parallel", "--parallel-max", "16", "--cacert", cacert, "-K", many_config],
                   many_names),
            ARIA2C: (["aria2c", "--no-conf=true", "-q", "-i", many_list, "-x", "16", "-s", "16", "-j", "16",
                      f"--ca-certificate={cacert}", "--allow-overwrite=true", "--auto-file-renaming=false"],
                     many_names),
        }
        mid_rows = {
            "braid -i MID": ([braid, "-i", mid_list, "-q", "--cacert", cacert], mid_names),
            ARIA2C: (["aria2c", "--no-conf=true", "-q", "-i", mid_list, "-x", "16", "-s", "16", "-j", "16",
                      f"--ca-certificate={cacert}", "--allow-overwrite=true", "--auto-file-renaming=false"],
                     mid_names),
        }
        # Generous: one connection at the cap, with time to spare.
        timeout = 60 + 2 * (size + options.small * SMALL_SIZE + options.many * MANY_SIZE
                            + options.mid * MID_SIZE) / cap
        failed = False

        def measure(rows):
            """Runs each row `options.repeat` times, alternating: (wall, connections, protocols, HTTP/1.1
            connections) of each run, by label; marks the benchmark failed where a file differs."""
            nonlocal failed
            results = {label: [] for label in rows}
            for round_number in range(options.repeat):
                for label, (command, expected) in rows.items():
                    out = harness.empty_directory(work.path("out"))
                    logged = len(read_log(access_log))
                    exited = work.children.run(command, timeout, cwd=out)
                    requests = read_log(access_log)[logged:]
                    same = exited.code == 0 and all(
                        harness.digest_of(os.path.join(out, name)) == digests[name] for name in expected)
                    if not same:
                        failed = True
                        log(f"{label}: exited {exited.code}, or a file differs")
                    results[label].append((exited.wall, len({port for port, _ in requests}),
                                           sorted({protocol for _, protocol in requests}),
                                           len({port for port, protocol in requests if protocol == "http/1.1"})))
                    log(f"round {round_number + 1}: {label}: {exited.wall:.2f} s")
            return results

        results = measure(rows)
        def median_wall(results, label):
            return statistics.median(wall for wall, _, _, _ in results[label])

        def print_results(results, title):
            table = []
            for label in results:
                connections = statistics.median(count for _, count, _, _ in results[label])
                protocols = ",".join(sorted({p for _, _, spoken, _ in results[label] for p in spoken}))
                table.append([label, f"{median_wall(results, label):.2f}", f"{connections:.0f}", protocols])
            print(f"\n{title}, each connection capped at {format_size(cap)}/s; medians of {options.repeat}")
            harness.print_table(["tool", "wall s", "connections", "protocols"], table, align="lrrl")

        print_results(results, f"{format_size(size)} and {options.small} x {format_size(SMALL_SIZE)} over HTTPS, "
                      "HTTP/2 offered")
        alone = median_wall(results, "braid URL (the large file alone)")
        listed = median_wall(results, "braid -i LIST")
        forced = median_wall(results, "braid -i LIST --http2")
        spread = min(separate for _, _, _, separate in results["braid -i LIST"])
        one_connection = median_wall(results, CURL)
        print(f"braid -i LIST: wall / the large file alone = {listed / alone:.2f} (not judged)")
        print(f"braid -i LIST: wall / braid -i LIST --http2 = {listed / forced:.2f} (not judged)")
        verdicts = [
            (f"braid -i LIST: wall / curl's = {listed / one_connection:.2f} (target <= 0.50)",
             listed <= 0.5 * one_connection),
            (f"braid -i LIST: HTTP/1.1 connections, fewest of the runs = {spread} (target >= 4)", spread >= 4),
        ]
        if options.many > 0:
            many_results = measure(many_rows)
            print_results(many_results, f"{options.many} x {format_size(MANY_SIZE)} over HTTPS, HTTP/2 offered")
            learned = median_wall(many_results, "braid -i MANY")
            print(f"braid -i MANY: wall / aria2c's = {learned / median_wall(many_results, ARIA2C):.2f} (not judged)")
            verdicts.append((f"braid -i MANY: wall / curl's = {learned / median_wall(many_results, CURL):.2f} "
                             "(target <= 0.35)", learned <= 0.35 * median_wall(many_results, CURL)))
        if options.mid > 0:
            mid_results = measure(mid_rows)
            print_results(mid_results, f"{options.mid} x {format_size(MID_SIZE)} over HTTPS, HTTP/2 offered")
            moved = median_wall(mid_results, "braid -i MID") / median_wall(mid_results, ARIA2C)
            verdicts.append((f"braid -i MID: wall / aria2c's = {moved:.2f} (target <= 1.50)", moved <= 1.5))
        for text, ok in verdicts:
            print(f"{text} {'PASS' if ok else 'FAIL'}")
        return 1 if failed or not all(ok for _, ok in verdicts) else 0


if __name__ == "__main__":
    harness.main(main)
