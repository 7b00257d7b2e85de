"""A script's run: its children, stopped on exit, its work directory, and the fixtures started in it."""

import os
import signal
import tempfile

from .files import generate_file
from .nginx import Nginx
from .processes import Children, log
from .runs import TRASH, Runner, remove_tree, wait_after_removal
from .testserver import TestServer


class Workspace:
    """Use as `with Workspace("braid-NAME.", options.workdir) as work:`.

    The directory is `keep` when given (generated files are reused next time) or a temporary one, removed on exit.
    `scratch(name)` is a subdirectory removed on exit in both cases. SIGTERM stops the run as Ctrl-C does, and
    every child is stopped on the way out.
    """

    def __init__(self, prefix, keep=None):
        self.keep = keep
        self.directory = os.path.abspath(keep) if keep else tempfile.mkdtemp(prefix=prefix)
        os.makedirs(self.directory, exist_ok=True)
        self.children = Children()
        self.scratches = []
        self.document_root = self.path("www")

    def path(self, *names):
        return os.path.join(self.directory, *names)

    def scratch(self, name):
        path = self.path(name)
        self.scratches.append(path)
        return path

    def file(self, name, size):
        """A generated file of `size` random bytes in the document root; returns its MD5."""
        os.makedirs(self.document_root, exist_ok=True)
        return generate_file(os.path.join(self.document_root, name), size)

    def nginx(self, locations=(), name="nginx", **kwargs):
        """A started nginx serving the document root (see harness.Nginx for `http2`, `prefix`)."""
        os.makedirs(self.document_root, exist_ok=True)
        server = Nginx(self.children, self.path(name), self.document_root, locations, **kwargs).start()
        log(f"nginx on 127.0.0.1:{server.port} (TLS {server.tls_port}), files in {self.document_root}")
        return server

    def test_server(self, binary, size, **kwargs):
        """A started braid-test-server (see harness.TestServer for `rate`, `faults`, `seed`, `path`)."""
        return TestServer(self.children, binary, size, self.path("logs"), **kwargs).start()

    def runner(self, **kwargs):
        """Runs jobs in the workspace, once the file system no longer charges new files for an earlier removal."""
        wait_after_removal(self.directory)
        return Runner(self.children, self.directory, **kwargs)

    def __enter__(self):
        def terminate(signum, frame):
            raise KeyboardInterrupt

        signal.signal(signal.SIGTERM, terminate)
        return self

    def __exit__(self, *exception):
        self.children.stop_all()
        for path in self.scratches + [self.path("out"), self.path(TRASH)]:
            remove_tree(path)
        if not self.keep:
            remove_tree(self.directory)
        return False
