"""The planner: a discrete-event simulation of the loops (`sim`, cores, planes), the costs it is calibrated
with, and its check against runs.

Not exported: this file is written by hand, like `ddrl_lab/__init__.py`."""
