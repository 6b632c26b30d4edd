"""Comparisons of runs: shadow runs and overlays of finished runs (`records`), the chooser's table of every
topology, sync mode, plane and algorithm (`chooser`), statistics across seeds (`stats`: the interquartile mean and
bootstrap intervals) and studies of a grid over seeds as Ray Tune trials (`tune`).

Not exported: this file is written by hand, like `ddrl_lab/__init__.py`."""
