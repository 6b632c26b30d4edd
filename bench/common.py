"""Small helpers shared by the benchmark scripts (run them from the repository root: `.venv/bin/python bench/NAME.py`).

They live in `ddrl_lab.bench` (nbs/16_bench.ipynb), the harness of `ddrl-lab bench`; its benchmarks are in the
`ddrl_lab.bench_*` modules (nbs/16a-16c)."""
from ddrl_lab.bench import family, rss_mb, timed  # noqa: F401
