"""A running job: `Job` (start, drive, rows, checkpoint, stop, resume), what it shows (`JobViews`: rows, an
episode, the diagnosis, its parts and books), steering it live, a progress bar and the Prometheus endpoint.

Not exported: this file is written by hand, like `ddrl_lab/__init__.py`."""
