"""Environments: the CPU pools of a worker (gymnasium, Atari), games written as tensor programs, a poisoned
simulator for drills, and `make_env_pool`, which picks a pool for an env config.

Not exported: this file is written by hand, like `ddrl_lab/__init__.py`."""
