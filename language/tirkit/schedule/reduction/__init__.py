"""Reduction primitives: decompose_reduction, rfactor."""
