"""The joined chains kept in the index cache (filled in below)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...perfdata import Recording
from .overlay import ChainOverlay


def load_chains(rec: Recording, opts: Any, rows: np.ndarray) -> ChainOverlay | None:
    return None


def save_chains(rec: Recording, opts: Any, rows: np.ndarray, ov: ChainOverlay,
                sources: dict[str, Any]) -> None:
    return None
