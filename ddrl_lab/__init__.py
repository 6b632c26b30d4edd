"""ddrl_lab: a Jupyter-first research workbench for distributed deep reinforcement learning.

The public API; the modules are exported from the notebooks in nbs/ (this file is not)."""
__version__ = "0.1.0"

from ddrl_lab.config import Config, ConfigError, load_config, list_presets
from ddrl_lab.job import Job
from ddrl_lab.doctor import diagnose_run

__all__ = ["Config", "ConfigError", "Dashboard", "Job", "MetricsServer", "Progress", "compare", "diagnose_run", "load_config", "list_presets", "shadow"]


_LAZY = {"Dashboard": "ddrl_lab.dashboard", "shadow": "ddrl_lab.records", "compare": "ddrl_lab.records",
         "Progress": "ddrl_lab.progress", "MetricsServer": "ddrl_lab.prometheus"}   # name -> the module that defines it


def __getattr__(name: str):
    "`Dashboard` and the records helpers are imported on first use, so `import ddrl_lab` does not load ipywidgets and plotly."
    if name not in _LAZY: raise AttributeError(f"module 'ddrl_lab' has no attribute {name!r}")
    import importlib
    return getattr(importlib.import_module(_LAZY[name]), name)
