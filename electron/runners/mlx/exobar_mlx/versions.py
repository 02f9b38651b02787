"""The mlx-lm releases this runner supports, checked at start without importing mlx-lm.

The engine's calls (BatchGenerator.insert with prefilled caches and per-request
samplers, the (prompt, generation) tuple from next(), the model call with a cache
list) were read against mlx-lm 0.32's source and are tested against 0.32.2; older
releases differ in those calls, so they are refused before any model is loaded.
"""
from __future__ import annotations

import re
from typing import Callable, Optional, Tuple

#: Inclusive lower bound, exclusive upper bound (the next minor may change the API).
MIN_MLX_LM = (0, 32, 0)
MAX_MLX_LM_EXCLUSIVE = (0, 33, 0)
SUPPORTED_RANGE = ">=0.32.0,<0.33"
TESTED_WITH = "mlx 0.32.4, mlx-lm 0.32.2"


def parse_version(text: str) -> Optional[Tuple[int, int, int]]:
    match = re.match(r"^\s*(\d+)\.(\d+)(?:\.(\d+))?", text)
    if not match:
        return None
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


def installed_mlx_lm() -> Optional[str]:
    """mlx-lm's installed version from its metadata (None when it is not installed)."""
    from importlib import metadata

    try:
        return metadata.version("mlx-lm")
    except metadata.PackageNotFoundError:
        return None


def unsupported_reason(version: Optional[str]) -> Optional[str]:
    """Why this mlx-lm cannot be used, or None when it is in the supported range.

    A missing mlx-lm is not refused here: the engine reports it at LoadModel, with
    the Python it looked in, as before.
    """
    if version is None:
        return None
    parsed = parse_version(version)
    if parsed is None:
        return f"mlx-lm {version} has an unreadable version; this runner supports mlx-lm {SUPPORTED_RANGE}"
    if parsed < MIN_MLX_LM:
        return (
            f"mlx-lm {version} is too old: this runner supports mlx-lm {SUPPORTED_RANGE} "
            f"(upgrade with `pip install -U \"mlx-lm{SUPPORTED_RANGE}\"`, or run Set up MLX runtime again)"
        )
    if parsed >= MAX_MLX_LM_EXCLUSIVE:
        return (
            f"mlx-lm {version} is newer than this runner supports ({SUPPORTED_RANGE}); its batch API may "
            f"differ. Install a supported release: pip install \"mlx-lm{SUPPORTED_RANGE}\""
        )
    return None


def version_text(probe: Callable[[], Optional[str]] = installed_mlx_lm) -> str:
    """What `runner.py --version` prints."""
    installed = probe()
    return (
        f"exobar MLX runner, protocol 1; supports mlx-lm {SUPPORTED_RANGE} (tested with {TESTED_WITH}); "
        f"installed here: mlx-lm {installed or 'not installed'}"
    )
