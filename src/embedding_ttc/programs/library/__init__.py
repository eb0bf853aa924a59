"""The library of named programs (the paper's frontier, SoftCentroid and classical baselines)."""
