"""Benchmarks, everything that measures: the harness (medians of repeats, ratios against baselines of the same run)
and its families: sampling, learning, data path, Atari, recurrent, collectives; the planner's calibration
(`calibrate`) and its check against real runs (`validate`).

Not exported: this file is written by hand, like `ddrl_lab/__init__.py`."""
