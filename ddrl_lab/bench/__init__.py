"""Benchmarks: the harness (medians of repeats, ratios against baselines of the same run) and its families:
sampling, learning, data path, Atari, recurrent, collectives.

Not exported: this file is written by hand, like `ddrl_lab/__init__.py`."""
