"""Runs a Python HTTP server module with each request's times logged, for a benchmark to line up with its runs.

    python3 timed_http.py LOG MODULE [ARGUMENTS...]     e.g. timed_http.py moto.log moto.server -p 8000

runs `python3 -m MODULE ARGUMENTS` unchanged, except that every request that Python's
`http.server.BaseHTTPRequestHandler` (and so RangeHTTPServer's and werkzeug's handlers, moto's) answers adds a line to
LOG once its response has ended:

    connection 3 "GET /file.bin" 206 times 1712345678.123456 1712345678.124001 1712345678.290377

the handler's connection (a serial number, in accept order), method, path and status, and when the request had been
read, when the response's status line was written and when the response ended, in seconds since the epoch
(`time.time()`, CLOCK_REALTIME). Standard library only; it is not imported by the harness, only run.
"""

import http.server
import itertools
import runpy
import sys
import threading
import time


def install(log_path):
    """Wraps BaseHTTPRequestHandler's setup, parse_request, send_response and handle_one_request to log times."""
    log = open(log_path, "a", buffering=1)
    lock = threading.Lock()
    serials = itertools.count(1)
    handler = http.server.BaseHTTPRequestHandler
    setup, parse_request = handler.setup, handler.parse_request
    send_response, handle_one_request = handler.send_response, handler.handle_one_request

    def timed_setup(self):
        with lock:
            self.timed_connection = next(serials)
        setup(self)

    def timed_parse_request(self):
        parsed = parse_request(self)
        if self.timed_received is None:
            self.timed_received = time.time()
        return parsed

    def timed_send_response(self, code, message=None):
        now = time.time()
        if self.timed_received is None:  # an error answered while parsing
            self.timed_received = now
        if self.timed_first_byte is None:
            self.timed_first_byte, self.timed_status = now, code
        send_response(self, code, message)

    def timed_handle_one_request(self):
        self.timed_received = self.timed_first_byte = self.timed_status = None
        try:
            handle_one_request(self)
        finally:
            if self.timed_received is not None:
                first_byte = "-" if self.timed_first_byte is None else f"{self.timed_first_byte:.6f}"
                line = (f'connection {self.timed_connection} "{self.command} {self.path}" {self.timed_status or 0} '
                        f"times {self.timed_received:.6f} {first_byte} {time.time():.6f}\n")
                with lock:
                    log.write(line)

    handler.setup = timed_setup
    handler.parse_request = timed_parse_request
    handler.send_response = timed_send_response
    handler.handle_one_request = timed_handle_one_request


if __name__ == "__main__":
    if len(sys.argv) < 3:
        raise SystemExit(__doc__.split("\n\n")[1])
    install(sys.argv[1])
    module = sys.argv[2]
    sys.argv = [module] + sys.argv[3:]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
