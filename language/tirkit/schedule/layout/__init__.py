"""Buffer layout primitives: reindex, pad_einsum, set_scope."""
