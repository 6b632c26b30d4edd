"""The run's configuration: the typed `Config` (schema), the checks that refuse bad combinations, loading from
presets, files and overrides (load), the help `ddrl-lab config` prints, and the strict YAML loader. The presets
live in `ddrl_lab/configs/`.

Not exported: this file is written by hand, like `ddrl_lab/__init__.py`."""
