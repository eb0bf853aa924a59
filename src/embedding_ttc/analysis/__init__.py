"""Transfer analysis (paper §4, App. C-D): the cell matrix, paired bootstrap, transfer tables."""
