"""A running job: `Job` (start, drive, rows, checkpoint, stop, resume), steering it live, a progress bar and
the Prometheus endpoint.

Not exported: this file is written by hand, like `ddrl_lab/__init__.py`."""
