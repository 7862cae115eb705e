"""Analyses over the IR: buffer accesses, block read/write regions, footprints."""
from .regions import (Access, FuncAccesses, Loop, accesses, block_regions, footprint,
                      relax)

__all__ = ["Access", "FuncAccesses", "Loop", "accesses", "block_regions", "footprint",
           "relax"]
