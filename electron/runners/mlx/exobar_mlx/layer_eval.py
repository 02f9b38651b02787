"""Evaluates a model's forward pass layer by layer on the threads that ask for it.

Why: MLX's scheduler lets at most ten tasks (of ten operations each) be in flight across
all streams of a process (MAX_ACTIVE_TASKS in mlx/transforms.cpp); past that, a thread
evaluating a graph waits until some task ends. A prefill pass evaluated whole is a graph
of hundreds of large operations: its thread keeps every slot filled, and a decode step
evaluated beside it on another thread waits for the prefill's tasks, one slow task per
ten of its own operations (measured on this CPU: a stream beside 256-token chunks got a
token only between chunks). Evaluated after each layer, a prefill pass holds a few tasks
at a time and the decode step's graph goes through at its own pace (the same stream
kept 87-99 % of its rate alone; the prefill's time was unchanged). Only the prefill thread
switches it on, and only for passes run while something decodes (mlx_engine.py): with
nothing beside it, layer by layer costs a pass 15-25 % on this CPU (8-128 tokens, one
thread alone).

The layers' classes are swapped for subclasses whose __call__ evaluates the layer's
output when the calling thread has switched it on: the layer objects, their parameters
and every attribute mlx-lm reads from them (caches, sliding windows) stay as they are,
and a thread that has not switched it on runs the model exactly as before.
"""
from __future__ import annotations

import threading
from typing import Any, Dict

_switch = threading.local()


def evaluate_layers_on_this_thread(on: bool) -> None:
    """From now on, model passes on the calling thread evaluate after every layer (or not)."""
    _switch.on = on


def install(model: Any, mx: Any) -> int:
    """Makes every layer of `model` evaluate its output on threads that switched it on.
    Returns how many layers were changed (0: the model lists no layers)."""
    subclasses: Dict[type, type] = {}
    layers = list(getattr(model, "layers", []) or [])
    for layer in layers:
        base = type(layer)
        if getattr(base, "_exobar_layer_eval", False):
            continue
        if base not in subclasses:
            subclasses[base] = _evaluating_subclass(base, mx)
        layer.__class__ = subclasses[base]
    return len(layers)


def _evaluating_subclass(base: type, mx: Any) -> type:
    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
        out = base.__call__(self, *args, **kwargs)
        if getattr(_switch, "on", False):
            mx.eval(out)
        return out

    return type(base.__name__, (base,), {"__call__": __call__, "_exobar_layer_eval": True, "__module__": base.__module__})
