"""compute_inline and reverse_compute_inline; `common` holds what they (and other families that
remove a block from its scope) share."""
