"""The env runner: a worker that steps its env pool with the latest weights and returns segments.

Not exported: this file is written by hand, like `ddrl_lab/__init__.py`."""
