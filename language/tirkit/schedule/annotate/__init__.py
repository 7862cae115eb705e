"""annotate / unannotate on loops and blocks."""
