"""WGSL code generators. Each builds kernel source from a structural key; shapes, strides and
scalars travel as uniform parameters so that one compiled pipeline serves many shapes."""
