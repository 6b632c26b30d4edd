"""The host learners: the base learner, the algorithms on it (PPO, IMPALA/V-trace, DQN, R2D2), how several
learners agree on weights (sync, collectives) and SEED-style central inference.

Not exported: this file is written by hand, like `ddrl_lab/__init__.py`."""
