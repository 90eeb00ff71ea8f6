"""An output file written whole or not at all: through a temporary file in its directory and
a rename, an error naming the file asked for (never the temporary one)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import IO, Any


@contextlib.contextmanager
def atomic_file(path: str, mode: str = "w") -> Iterator[IO[Any]]:
    """``path`` opened for writing (``"w"``: UTF-8 text, ``"wb"``: bytes); it appears, or
    is replaced, only when the block ends without an error."""
    d = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".perftui-", suffix=".tmp", dir=d)
    except OSError as e:
        raise OSError(e.errno, e.strerror, path) from None
    try:
        with os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8") as f:
            yield f
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise OSError(e.errno, e.strerror, path) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
