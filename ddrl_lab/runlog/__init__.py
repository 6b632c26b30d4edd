"""What a run leaves on disk and how it is read: metric rows, the run directory with `RunFiles` (the one reader
of its records and checkpoints), the criteria a run is judged by, call times and resource usage.

Not exported: this file is written by hand, like `ddrl_lab/__init__.py`."""
