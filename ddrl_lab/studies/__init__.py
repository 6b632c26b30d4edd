"""Comparisons of runs: shadow runs, overlays of finished runs, and the chooser's table of every topology,
sync mode, plane and algorithm.

Not exported: this file is written by hand, like `ddrl_lab/__init__.py`."""
