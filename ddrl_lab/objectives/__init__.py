"""Pure functions of tensors: GAE and PPO's loss, n-step returns, V-trace and double-Q targets, the batch
evaluator, R2D2's sequences and PPO's gradient step.

Not exported: this file is written by hand, like `ddrl_lab/__init__.py`."""
