"""Test files (random or sparse), sizes as people write them, and digests."""

import hashlib
import os
import shutil
import subprocess

from .processes import log

KiB = 1 << 10
MiB = 1 << 20
GiB = 1 << 30


def parse_size(text):
    """'64M', '1G', '512K', '25m', '2GiB' or a plain byte count."""
    units = {"K": KiB, "M": MiB, "G": GiB, "T": 1 << 40}
    text = str(text).strip().upper().removesuffix("IB").removesuffix("B")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def format_size(size):
    """'64 MiB', '1.5 GiB', '512 B': whole units when exact, one decimal otherwise."""
    for unit, name in ((GiB, "GiB"), (MiB, "MiB"), (KiB, "KiB")):
        if size >= unit:
            return f"{size // unit} {name}" if size % unit == 0 else f"{size / unit:.1f} {name}"
    return f"{size} B"


def format_rate(bytes_per_second):
    """'25.0 MiB/s': always one decimal, for tables of rates."""
    for unit, name in ((GiB, "GiB/s"), (MiB, "MiB/s"), (KiB, "KiB/s")):
        if bytes_per_second >= unit:
            return f"{bytes_per_second / unit:.1f} {name}"
    return f"{bytes_per_second:.0f} B/s"


def generate_file(path, size):
    """Writes `size` deterministic, incompressible bytes (AES-128-CTR keystream) and returns their MD5 hex.

    A `.md5` file next to it lets a kept work directory skip regeneration on the next run.
    """
    digest_path = path + ".md5"
    if os.path.exists(digest_path) and os.path.exists(path) and os.path.getsize(path) == size:
        with open(digest_path) as cached:
            return cached.read().strip()
    log(f"generating {format_size(size)} test file {path}")
    keystream = subprocess.Popen(
        ["openssl", "enc", "-aes-128-ctr", "-nosalt", "-K", f"{size:032x}", "-iv", "0" * 32, "-in", "/dev/zero"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    md5 = hashlib.md5()
    remaining = size
    try:
        with open(path, "wb") as output:
            while remaining:
                block = keystream.stdout.read(min(4 * MiB, remaining))
                if not block:
                    raise SystemExit("openssl enc stopped early while generating test data")
                output.write(block)
                md5.update(block)
                remaining -= len(block)
    finally:
        keystream.kill()
        keystream.wait()
    with open(digest_path, "w") as cached:
        cached.write(md5.hexdigest() + "\n")
    return md5.hexdigest()


def generate_files(directory, prefix, count, size, seed=1):
    """`count` files of `size` deterministic, incompressible bytes, `PREFIX-00000.bin` ... in `directory`.

    One keystream, cut into files, so that ten thousand files cost one `openssl` rather than ten thousand. Returns
    [(name, size, md5 hex)]. Their digests are kept in `PREFIX.md5sums` beside them, so that a kept work directory
    skips regeneration on the next run.
    """
    os.makedirs(directory, exist_ok=True)
    width = max(5, len(str(count - 1)))
    names = [f"{prefix}-{index:0{width}d}.bin" for index in range(count)]
    sums_path = os.path.join(directory, f"{prefix}.md5sums")
    if os.path.exists(sums_path):
        with open(sums_path) as sums:
            cached = [line.split() for line in sums if line.strip()]
        paths = [os.path.join(directory, name) for name in names]
        if [name for _, name in cached] == names and all(
                os.path.exists(path) and os.path.getsize(path) == size for path in paths):
            return [(name, size, digest) for digest, name in cached]
    log(f"generating {count} test files of {format_size(size)} in {directory}")
    key = f"{seed:016x}{count:08x}{size:08x}"
    keystream = subprocess.Popen(
        ["openssl", "enc", "-aes-128-ctr", "-nosalt", "-K", key, "-iv", "0" * 32, "-in", "/dev/zero"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    files = []
    try:
        for name in names:
            block = keystream.stdout.read(size)
            if len(block) != size:
                raise SystemExit("openssl enc stopped early while generating test data")
            with open(os.path.join(directory, name), "wb") as output:
                output.write(block)
            files.append((name, size, hashlib.md5(block).hexdigest()))
    finally:
        keystream.kill()
        keystream.wait()
    with open(sums_path, "w") as sums:
        sums.writelines(f"{digest}  {name}\n" for name, _, digest in files)
    return files


def sparse_file(path, size):
    """A file of `size` zero bytes that takes no disk: a server reads its holes from the page cache."""
    with open(path, "wb") as file:
        file.truncate(size)
    return path


def digest_of(path, algorithm="md5"):
    """The hex digest of the file at `path` (md5, sha256, ... as hashlib names them)."""
    digest = hashlib.new(algorithm)
    with open(path, "rb") as source:
        while block := source.read(4 * MiB):
            digest.update(block)
    return digest.hexdigest()


def empty_directory(path):
    """`path` as a new, empty directory (whatever was there is removed)."""
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path
