"""Python servers where every request is expensive, as fixtures: moto's S3 (`moto.server`) and RangeHTTPServer, both
from PyPI, each a thread per connection. They run through `timed_http.py`, which logs every request with its
connection and its times, so that a run's requests, refusals, connections and first bytes are counted as on nginx
and the test server.
"""

import importlib.util
import os
import re
import subprocess
import sys

from .files import generate_file
from .processes import free_port, log, wait_for_http
from .source import RequestLog, Source
from .timing import RequestTiming

LAUNCHER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "timed_http.py")
LOG_LINE = re.compile(rb'^connection (\d+) "(\S+) [^"]*" (\d+) times (\S+) (\S+) (\S+)')


def python_status(line):
    match = LOG_LINE.match(line)
    return int(match.group(3)) if match else None


def python_timing(line):
    match = LOG_LINE.match(line)
    if not match:
        return None
    connection, method, status, received, first_byte, finished = match.groups()
    return RequestTiming(int(connection), method.decode(errors="replace"), int(status), float(received),
                         None if first_byte == b"-" else float(first_byte), float(finished))


def start(work, name, module, arguments, ready_url, cwd=None):
    """`python3 -m MODULE ARGUMENTS` through the launcher, in `work` (stopped on exit); returns its RequestLog."""
    log_path = work.path("logs", f"{name}.requests.log")
    os.makedirs(os.path.dirname(log_path), exist_ok=True)
    with open(work.path("logs", f"{name}.stderr.log"), "wb") as stderr:
        work.children.popen([sys.executable, "-u", LAUNCHER, log_path, module, *arguments], cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=stderr)
    wait_for_http(ready_url)
    requests = RequestLog(log_path, python_status, timing_of=python_timing)
    requests.settle()  # the readiness check's line, logged once its response has ended
    return requests


def require(module, why):
    if importlib.util.find_spec(module) is None:
        raise ModuleNotFoundError(f"No module named {module!r} ({why})")


def range_http_server(work, size):
    """RangeHTTPServer (HTTP/1.0: a connection per request) serving a generated file of `size` bytes."""
    require("RangeHTTPServer", "RangeHTTPServer from PyPI")
    directory = work.path("range-http")
    os.makedirs(directory, exist_ok=True)
    md5 = generate_file(os.path.join(directory, "file.bin"), size)
    port = free_port()
    url = f"http://127.0.0.1:{port}/file.bin"
    requests = start(work, "range-http", "RangeHTTPServer", [str(port), "--bind", "127.0.0.1"], url, cwd=directory)
    log(f"RangeHTTPServer: {url}")
    return Source("RangeHTTPServer", url, size, md5, requests)


def moto_s3(work, size):
    """moto's S3 server with one public object of `size` bytes, put there by boto3."""
    require("moto", "moto[server] from PyPI")
    require("boto3", "boto3 from PyPI")
    import boto3  # noqa: PLC0415  (only this fixture needs it)

    source = work.path("moto-object.bin")
    md5 = generate_file(source, size)
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    requests = start(work, "moto", "moto.server", ["-H", "127.0.0.1", "-p", str(port)], endpoint + "/")
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                      aws_access_key_id="test", aws_secret_access_key="test")
    s3.create_bucket(Bucket="braid")
    with open(source, "rb") as body:
        s3.put_object(Bucket="braid", Key="file.bin", Body=body, ACL="public-read")
    requests.settle()
    url = f"{endpoint}/braid/file.bin"
    log(f"moto S3: {url}")
    return Source("moto S3", url, size, md5, requests)
