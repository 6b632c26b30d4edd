"""ddrl_lab: a Jupyter-first research workbench for distributed deep reinforcement learning.

The public API; the modules are exported from the notebooks in nbs/ (this file is not)."""
__version__ = "0.1.0"

from ddrl_lab.config import Config, ConfigError, load_config, list_presets
from ddrl_lab.job import Job

__all__ = ["Config", "ConfigError", "Job", "load_config", "list_presets"]
