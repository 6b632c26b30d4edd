"""Small helpers shared by the benchmark scripts (run them from the repository root: `.venv/bin/python bench/NAME.py`).

They live in `ddrl_lab.bench` (nbs/16_bench.ipynb), with the benchmarks of `ddrl-lab bench`."""
from ddrl_lab.bench import family, rss_mb, timed  # noqa: F401
