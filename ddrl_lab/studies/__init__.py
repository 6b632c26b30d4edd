"""Comparisons of runs: shadow runs and overlays of finished runs (`records`), the chooser's table of every
topology, sync mode, plane and algorithm (`chooser`), statistics across seeds (`stats`: the interquartile mean and
bootstrap intervals), a study's trial as a job that reports and checkpoints through Ray Tune and goes on from another
trial's checkpoint (`trials`), studies of a grid over seeds under Tune's schedulers, ASHA and population-based
training (`tune`), shadow pairs run side by side with divergence judged as rows arrive (`pairs`) and a study's page
(`page`: trials, curves by cell with bands, lineage, the HTML report).

Not exported: this file is written by hand, like `ddrl_lab/__init__.py`."""
