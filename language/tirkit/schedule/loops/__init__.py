"""Loop primitives: split, fuse, reorder, parallel / vectorize / unroll (loop_kind), bind."""
