"""compute_at and reverse_compute_at: move a block under a loop of its consumers or producers.
`move` drives both; `checks`, `region`, `nest` and `bounds` are its steps."""
