"""Experience in motion: the `Segment`, its codecs, the bounded channel with watermarks, the rate limiter.

Not exported: this file is written by hand, like `ddrl_lab/__init__.py`."""
