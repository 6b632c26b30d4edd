"""Small helpers shared by the benchmark scripts (run them from the repository root: `.venv/bin/python bench/NAME.py`).

They live in `ddrl_lab.bench.harness` (nbs/bench/00_harness.ipynb), the harness of `ddrl-lab bench`; its benchmarks are in the
`ddrl_lab.bench_*` modules (nbs/16a-16c)."""
from ddrl_lab.bench.harness import family, rss_mb, items_per_s  # noqa: F401
