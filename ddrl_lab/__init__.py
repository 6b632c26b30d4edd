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
    "Config": "ddrl_lab.config.schema",
    "ConfigError": "ddrl_lab.config.schema",
    "load_config": "ddrl_lab.config.load",
    "list_presets": "ddrl_lab.config.load",
    "Job": "ddrl_lab.run.job",
    "diagnose_run": "ddrl_lab.analysis.doctor",
    "Dashboard": "ddrl_lab.ui.dashboard",
    "shadow": "ddrl_lab.studies.records",
    "compare": "ddrl_lab.studies.records",
    "Progress": "ddrl_lab.run.progress",
    "MetricsServer": "ddrl_lab.run.prometheus",
    "check_parameters": "ddrl_lab.studies.records",
    "summarize": "ddrl_lab.runlog.metrics",
    "panel_figures": "ddrl_lab.analysis.report",
}  # name -> the module that defines it


def __getattr__(name: str):
    """Every public name is imported on first use. A Ray actor unpickles its class from one module (say
    `ddrl_lab.learners.base`); importing the package must not drag in the driver's side (the job, its loops, pandas,
    ipywidgets, plotly) into every actor process."""
    if name not in _LAZY:
        raise AttributeError(f"module 'ddrl_lab' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_LAZY[name]), name)


def __dir__():
    return sorted([*globals(), *_LAZY])
