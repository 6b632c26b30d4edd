"""ddrl_lab: a Jupyter-first research workbench for distributed deep reinforcement learning."""
__version__ = "0.1.0"
