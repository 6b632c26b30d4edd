"""The planner: a discrete-event engine (`engine`), the machine's cores, the books a simulated run keeps, the
parameter plane and the topologies (`sim`); the unit costs it is calibrated with (`costs`) and its check against runs.

Not exported: this file is written by hand, like `ddrl_lab/__init__.py`."""
