"""Analyses over the IR: buffer accesses, block read/write regions, footprints."""
from .footprint import footprint
from .regions import (Access, FuncAccesses, Loop, accesses, block_regions,
                      relax)

__all__ = ["Access", "FuncAccesses", "Loop", "accesses", "block_regions", "footprint",
           "relax"]
