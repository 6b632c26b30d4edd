"""Experience replay that composes: storage, sum-tree and samplers, replay shards, sampling across shards,
sequence replay, the cold tier on disk and a shard's saved state.

Not exported: this file is written by hand, like `ddrl_lab/__init__.py`."""
