"""Where MLX runs (Metal on Apple silicon, the CPU elsewhere) and the Apple-only parts.

Fast synch and the wired-memory limit are Metal features: on the CPU they do nothing,
and the hello says they were skipped rather than pretending. The wired limit is this
runner's share of the GPU working set, decided by the supervisor
(--wired-limit-bytes): mlx-lm's BatchGenerator wires the whole recommended working
set for each process, so two runners would over-commit memory without it.
"""
from __future__ import annotations

import logging
from typing import Any, List, Optional

log = logging.getLogger("exobar.mlx.device")


def detect_device() -> Optional[str]:
    """'metal', 'cpu', or None when mlx cannot be imported here."""
    try:
        import mlx.core as mx
    except ImportError:
        return None
    return "metal" if mx.metal.is_available() else "cpu"


def skipped_features(device: Optional[str], fast_synch: bool, wired_limit: Optional[int]) -> List[str]:
    """The Apple-only settings that cannot apply on this device, for the hello."""
    if device != "cpu":
        return []
    skipped = []
    if fast_synch:
        skipped.append("fastSynch: MLX runs on the CPU here; MLX_METAL_FAST_SYNCH has no effect")
    skipped.append(
        "wiredLimit: MLX runs on the CPU here; no memory is wired"
        + (f" (asked for {wired_limit} bytes)" if wired_limit is not None else "")
    )
    return skipped


def apply_wired_limit(mx: Any, limit: Optional[int]) -> Optional[int]:
    """Sets the wired limit to this runner's share on Metal; returns what was applied.

    Called after BatchGenerator is made (it raises the limit to the whole recommended
    working set). The share is capped at what Metal recommends, which
    mx.set_wired_limit would refuse to exceed.
    """
    if limit is None or not mx.metal.is_available():
        return None
    info = mx.metal.device_info() if hasattr(mx.metal, "device_info") else mx.device_info()
    recommended = int(info.get("max_recommended_working_set_size", limit))
    share = min(int(limit), recommended)
    mx.set_wired_limit(share)
    log.info("wired limit set to %d bytes (asked %d, recommended %d)", share, limit, recommended)
    return share
