"""The benchmark scripts' shared harness: processes, fixtures (nginx, the test server), files, runs, tables.

Standard library only. Every server listens on 127.0.0.1 and every child is stopped on exit. A script is its
scenarios: it makes sources (a server and a file), jobs (a peer on a source), runs them alternating and prints
a table. See Benchmarks/README.md, "Writing a benchmark".
"""

from .files import (
    GiB, KiB, MiB, digest_of, empty_directory, format_rate, format_size, generate_file, generate_files, parse_size,
    sparse_file,
)
from .machine import ROOT, built, commit, describe, require_executable
from .nginx import Location, Nginx
from .peers import BenchFailed, ListTool, Tool, braid_bench
from .processes import Children, free_port, log, main, require_loopback, wait_for_http, wait_for_line
from .sockets import ConnectionSampler
from .runs import Job, Report, Run, Runner, Verdict, best, failures, median, percentile, ratio, ratio_verdict, summary
from .source import Entry, FileSet, RequestLog, Source
from .tables import print_lines, print_report, print_table, table_lines
from .testserver import TestServer
from .timing import RequestTiming, first_body_byte, peak_connections, seconds_above, spans, waiting_share
from .workspace import Workspace

__all__ = [
    "GiB", "KiB", "MiB", "digest_of", "empty_directory", "format_rate", "format_size", "generate_file",
    "generate_files", "parse_size", "sparse_file",
    "ROOT", "built", "commit", "describe", "require_executable",
    "Location", "Nginx",
    "BenchFailed", "ListTool", "Tool", "braid_bench",
    "Children", "Workspace", "free_port", "log", "main", "require_loopback", "wait_for_http", "wait_for_line",
    "Job", "Report", "Run", "Runner", "Verdict", "best", "failures", "median", "percentile", "ratio", "ratio_verdict",
    "summary",
    "Entry", "FileSet", "RequestLog", "Source",
    "print_lines", "print_report", "print_table", "table_lines",
    "TestServer", "ConnectionSampler",
    "RequestTiming", "first_body_byte", "peak_connections", "seconds_above", "spans", "waiting_share",
]
