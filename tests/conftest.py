"""Shared fixtures: the repository paths and one local Ray cluster for the whole test session."""
import os
import signal
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# A shell without job control starts background commands with SIGINT ignored, and children inherit
# that; the interrupt tests need Python's own handler (Ctrl-C -> KeyboardInterrupt), whoever started us.
signal.signal(signal.SIGINT, signal.default_int_handler)
BIN = Path(sys.executable).parent


@pytest.fixture(scope="session")
def ray_cluster():
    "One real local Ray cluster shared by every test that needs Ray; Job runtimes join it."
    import ray
    ray.init(address="local", num_cpus=4, include_dashboard=True, dashboard_host="127.0.0.1", log_to_driver=False,
             configure_logging=False)
    yield ray
    ray.shutdown()


@pytest.fixture
def child_env():
    "Environment for subprocesses: this venv's tools first on PATH."
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return env
