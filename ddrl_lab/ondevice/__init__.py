"""The all-on-device loop: PPO/IMPALA, DQN and R2D2 with env pool, buffers and learner on one device, and
data parallel on-device PPO.

Not exported: this file is written by hand, like `ddrl_lab/__init__.py`."""
