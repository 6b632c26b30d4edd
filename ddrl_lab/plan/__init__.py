"""The planner, a pure model of the loops (it measures nothing): a discrete-event engine (`engine`), the machine's
cores, the books a simulated run keeps, the parameter plane and the topologies (`sim`), a calibration's record and
`plan` (`model`), the saturation, the verdict and the figure (`report`). Its calibration and its check against real
runs measure, so they live in `bench` (`bench.calibrate`, `bench.validate`).

Not exported: this file is written by hand, like `ddrl_lab/__init__.py`."""
