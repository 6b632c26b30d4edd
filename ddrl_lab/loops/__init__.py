"""The topologies of ddrl_lab: one module per way of training (see nbs/11a_loops.ipynb).

`ddrl_lab.job.loop_for` picks one for a config."""
