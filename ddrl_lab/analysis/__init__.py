"""Reading a run: the report's figures, evaluation episodes, the doctor and its diagnosis.

Not exported: this file is written by hand, like `ddrl_lab/__init__.py`."""
