"""blockize: turn the subtree under a loop into an outer block; `divide`, `outer` and `simplify`
are its steps."""
