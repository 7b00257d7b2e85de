"""Where a measurement was made: the machine, the tools' versions, the commit; and the project's built binaries."""

import os
import platform
import shutil
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def built(product, debug_too=False):
    """The release build of `product` (`swift build -c release --product PRODUCT`); with `debug_too`, the debug
    build when there is no release one."""
    release = os.path.join(ROOT, ".build", "release", product)
    debug = os.path.join(ROOT, ".build", "debug", product)
    return debug if debug_too and not os.access(release, os.X_OK) and os.access(debug, os.X_OK) else release


def require_executable(path, product=None):
    """The absolute path, or exit with how to build it (for one of the project's products) or install it."""
    path = os.path.abspath(path) if os.sep in path else (shutil.which(path) or path)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        how = (f"build it with `swift build -c release --product {product}` or pass its path" if product
               else "install it (scripts/install-deps)")
        raise SystemExit(f"{path} is not executable; {how}")
    return path


def version(command):
    """The first line a tool prints for `command` (e.g. ["curl", "--version"]), or why not."""
    try:
        result = subprocess.run(command, capture_output=True, text=True)
    except OSError as error:
        return f"{command[0]}: {error.strerror}"
    return ((result.stdout or result.stderr).splitlines() or [command[0]])[0]


def commit():
    """The repository's commit, with "+changes" when the work tree differs from it."""
    head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        return "unknown commit"
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return head.stdout.strip() + ("+changes" if dirty else "")


def describe(version_commands=()):
    """Lines saying where this ran: system, CPUs, Python, and the first line of each tool's version."""
    return [
        f"{platform.system()} {platform.release()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        *(version(command) for command in version_commands),
    ]
