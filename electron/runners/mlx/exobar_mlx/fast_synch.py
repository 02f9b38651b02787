"""The MLX_METAL_FAST_SYNCH value MLX will use, decided before mlx is imported.

MLX reads MLX_METAL_FAST_SYNCH once per process, before the first GPU fence, and
parses it as an integer ("1"/"0"; "true" counts as 0). exo's runner bootstrap lets
EXO_FAST_SYNCH override it ("false" turns it off, any other value on). The same
rule lives in effectiveFastSynch (shared/runner-protocol.ts); both must agree, so
the hello the supervisor receives states what MLX really does.
"""
from __future__ import annotations

import os
import re
from typing import Mapping, MutableMapping, Optional

_LEADING_INT = re.compile(r"^[\s\ufeff\xa0]*([+-]?\d+)")


def parse_int_like_js(raw: str) -> Optional[int]:
    """Number.parseInt(raw, 10): leading whitespace, optional sign, leading digits; None for NaN."""
    match = _LEADING_INT.match(raw)
    return int(match.group(1)) if match else None


def effective_fast_synch(env: Mapping[str, str]) -> bool:
    """True when MLX will spin-wait on the GPU (fast synch on) given this environment."""
    exo = env.get("EXO_FAST_SYNCH")
    if exo is not None and exo != "":
        return exo != "false"
    raw = env.get("MLX_METAL_FAST_SYNCH")
    if raw is None or raw == "":
        return False
    value = parse_int_like_js(raw)
    return value is not None and value != 0


def reported_env(env: Mapping[str, str]) -> dict:
    """The two variables as the runner received them, for the hello (null when unset)."""
    return {
        "MLX_METAL_FAST_SYNCH": env.get("MLX_METAL_FAST_SYNCH"),
        "EXO_FAST_SYNCH": env.get("EXO_FAST_SYNCH"),
    }


def pin_for_mlx(env: MutableMapping[str, str] = os.environ) -> bool:
    """Makes MLX_METAL_FAST_SYNCH say exactly what effective_fast_synch decided.

    Must run before mlx is imported. Like exo's bootstrap, an EXO_FAST_SYNCH value
    is written through as "1"/"0"; MLX then parses a clean integer, so the hello and
    the GPU behaviour cannot disagree. Returns the decision.
    """
    enabled = effective_fast_synch(env)
    exo = env.get("EXO_FAST_SYNCH")
    if exo is not None and exo != "":
        env["MLX_METAL_FAST_SYNCH"] = "1" if enabled else "0"
    return enabled
