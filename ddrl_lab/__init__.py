"""ddrl_lab: a Jupyter-first research workbench for distributed deep reinforcement learning.

The public API; the modules are exported from the notebooks in nbs/ (this file is not)."""

__version__ = "0.1.0"

__all__ = [
    "Config",
    "ConfigError",
    "Dashboard",
    "Job",
    "MetricsServer",
    "Progress",
    "check_parameters",
    "compare",
    "diagnose_run",
    "load_config",
    "list_presets",
    "panel_figures",
    "shadow",
    "summarize",
]


_LAZY = {
    "Config": "ddrl_lab.config",
    "ConfigError": "ddrl_lab.config",
    "load_config": "ddrl_lab.config",
    "list_presets": "ddrl_lab.config",
    "Job": "ddrl_lab.job",
    "diagnose_run": "ddrl_lab.doctor",
    "Dashboard": "ddrl_lab.dashboard",
    "shadow": "ddrl_lab.records",
    "compare": "ddrl_lab.records",
    "Progress": "ddrl_lab.progress",
    "MetricsServer": "ddrl_lab.prometheus",
    "check_parameters": "ddrl_lab.records",
    "summarize": "ddrl_lab.metrics",
    "panel_figures": "ddrl_lab.report",
}  # name -> the module that defines it


def __getattr__(name: str):
    """Every public name is imported on first use. A Ray actor unpickles its class from one module (say
    `ddrl_lab.learner`); importing the package must not drag in the driver's side (the job, its loops, pandas,
    ipywidgets, plotly) into every actor process."""
    if name not in _LAZY:
        raise AttributeError(f"module 'ddrl_lab' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_LAZY[name]), name)


def __dir__():
    return sorted([*globals(), *_LAZY])
