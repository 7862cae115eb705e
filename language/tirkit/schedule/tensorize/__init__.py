"""tensorize family: transform_layout, tensorize, auto_tensorize."""
