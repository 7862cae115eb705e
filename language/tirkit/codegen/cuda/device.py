"""The CUDA target a kernel is validated against: with a GPU present, its limits read from
the device's attributes through pycuda (threads per block and per dimension, grid
dimensions, shared memory per block with and without the opt-in, warp size, SM count and
registers); without one, the target table's entry (tirkit.target).

    t = cuda_limits()                 # Target: the device's, or TARGETS["cuda-sm80"]
    tirkit.check(text, target=t)      # thread/launch-limit etc. against those limits
"""
from __future__ import annotations

import dataclasses

from ... import target as targets
from .runtime import available

# Target field -> pycuda.driver.device_attribute names
_ATTRS = {
    "max_threads_per_block": ("MAX_THREADS_PER_BLOCK",),
    "max_thread_dims": ("MAX_BLOCK_DIM_X", "MAX_BLOCK_DIM_Y", "MAX_BLOCK_DIM_Z"),
    "max_grid_dims": ("MAX_GRID_DIM_X", "MAX_GRID_DIM_Y", "MAX_GRID_DIM_Z"),
    "shared_static": ("MAX_SHARED_MEMORY_PER_BLOCK",),
    "shared_optin": ("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",),
    "warp_size": ("WARP_SIZE",),
}
EXTRA = ("MULTIPROCESSOR_COUNT", "MAX_REGISTERS_PER_BLOCK")


def target_from_attributes(name: str, capability: tuple, attrs: dict) -> targets.Target:
    """A cuda Target with the limits in attrs (device_attribute name -> value); the table's
    entry of the nearest architecture fills what attrs lacks."""
    arch = f"cuda-sm{capability[0]}{capability[1]}"
    base = targets.get(arch) or targets.get(targets.DEFAULT_CUDA)
    fields = {}
    for field, keys in _ATTRS.items():
        vals = [attrs.get(k) for k in keys]
        if all(v is not None for v in vals):
            fields[field] = tuple(int(v) for v in vals) if len(keys) > 1 else int(vals[0])
    extra = ", ".join(f"{k.lower()}={attrs[k]}" for k in EXTRA if k in attrs)
    return dataclasses.replace(base, name=f"{arch}-device",
                               description=f"{name} (this device: {extra})", **fields)


def device_attributes():
    """(name, compute capability, {attribute: value}) of the current device, or None."""
    if available() is not None:
        return None
    import pycuda.driver as drv
    from .runtime import current_device
    dev = current_device()
    attrs = {}
    for keys in list(_ATTRS.values()) + [EXTRA]:
        for k in keys:
            a = getattr(drv.device_attribute, k, None)
            if a is not None:
                attrs[k] = dev.get_attribute(a)
    return dev.name(), dev.compute_capability(), attrs


def cuda_limits(fallback: str | None = None) -> targets.Target:
    """The device's target when a GPU is present, else the table's `fallback` (default
    cuda-sm80)."""
    found = device_attributes()
    if found is not None:
        return target_from_attributes(*found)
    return targets.get(fallback or targets.DEFAULT_CUDA)
