"""Sparse kernels: lowering of sparse iterations to ordinary loops (`lower.py`), random
sparse inputs (`inputs.py`)."""
