"""Networks and their numbers: the policy interface (`make_policy`), recurrent state, packed unrolls,
numerics (bf16, channels-last) and the optimizer.

Not exported: this file is written by hand, like `ddrl_lab/__init__.py`."""
