"""The topologies of ddrl_lab: one module per way of training (see nbs/loops/02_base.ipynb), and
`loops.topologies`, the registry whose `loop_for` picks one for a config.

Not exported: this file is written by hand, like `ddrl_lab/__init__.py`."""
