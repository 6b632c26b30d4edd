"""The run's configuration: the typed `Config` (schema and loading), the checks that refuse bad combinations,
the help `ddrl-lab config` prints, and the YAML loader. The presets live in `ddrl_lab/configs/`.

Not exported: this file is written by hand, like `ddrl_lab/__init__.py`."""
