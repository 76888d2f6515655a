"""The API server's allocator setting (`keep_freed_buffers`): a megabyte buffer, such as a
1,000-pod list's body, comes from the heap and not from a fresh mapping of its own."""

from __future__ import annotations

import subprocess
import sys

import pytest

# In a child process: the setting is for a whole process and is not undone.
_PROBE = """
import ctypes, sys
from pyhpa.adapters.heap import keep_freed_buffers

class MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                 "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = MallInfo2
kept = sys.argv[1] == "kept" and keep_freed_buffers()
buffer = bytes(4 * 1024 * 1024) + b"x"  # a fresh 4 MiB object
print(kept, libc.mallinfo2().hblks)
"""


def _probe(mode: str) -> tuple[str, int]:
    out = subprocess.run([sys.executable, "-c", _PROBE, mode], capture_output=True, text=True, check=True)
    kept, mapped = out.stdout.split()
    return kept, int(mapped)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_a_megabyte_buffer_is_mapped_apart_by_default_and_from_the_heap_when_kept() -> None:
    kept, mapped_default = _probe("default")
    assert kept == "False" and mapped_default >= 1  # glibc maps a 4 MiB block by itself
    kept, mapped_kept = _probe("kept")
    assert kept == "True" and mapped_kept < mapped_default
