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


def pytest_addoption(parser):
    parser.addoption("--learning", action="store_true",
                     help="also run the long learning runs (marked `learning`: more seeds of what CI checks on one)")


def pytest_configure(config):
    config.addinivalue_line("markers", "learning: a long learning run beyond CI's (more seeds, a notebook's full solves); run with --learning")
    config.addinivalue_line("markers", "slow: a check that cannot be fast without losing its point (a long learning check, "
                            "the docs site or a dashboard in a real browser); `make test` leaves it to `make test-slow`, "
                            "which CI runs next; the README lists every one (tests/test_readme.py checks)")


def pytest_collection_modifyitems(config, items):
    "Long learning runs belong in benchmarks, not in CI: tests marked `learning` run only with --learning (`make test-learning`)."
    if config.getoption("--learning"): return
    skip = pytest.mark.skip(reason="a long learning run: run it with --learning (make test-learning)")
    for item in items:
        if "learning" in item.keywords: item.add_marker(skip)


USER_ENV = '''"An env of a user's own, in a file that is not installed: reward 1 a step, `length` steps (a kwarg) an episode."
import gymnasium as gym
import numpy as np


class Corridor(gym.Env):
    def __init__(self, length=20):
        self.length = length
        self.observation_space = gym.spaces.Box(0.0, 1.0, (2,), np.float32)
        self.action_space = gym.spaces.Discrete(2)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.t += 1
        return np.array([self.t / self.length, action], np.float32), 1.0, self.t >= self.length, False, {}


gym.register("Corridor-v0", entry_point="user_corridor:Corridor")
'''


def write_user_env(folder: Path) -> str:
    "Write the user's env module into `folder` (not on any path); its `env.id`."
    (folder / "user_corridor.py").write_text(USER_ENV)
    return "user_corridor:Corridor-v0"


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


# The README's first-screen pictures: written by the tests that make them, never by hand (tests/test_readme.py checks).
# The suite writes them under build/images/ (ignored by git: a test run leaves the working tree as it found it);
# `make images` publishes them to docs/images/ with their provenance (docs/publish_images.py).
IMAGES = ROOT / "docs" / "images"
PROVENANCE = IMAGES / "provenance.json"
MADE = ROOT / "build" / "images"


def publish_image(src: Path, name: str, writer: str) -> Path:
    """Copy `src` (a screenshot, an episode GIF a test just made) to build/images/`name` and record in
    build/images/provenance.json which test wrote it (`writer`: "tests/FILE.py::TEST"), when, at which commit, and the
    file's sha256, so a test can tell a picture made by the suite from one put there by hand. `make images` moves
    what is there to docs/images/, the README's pictures."""
    import datetime, hashlib, importlib.util, shutil, subprocess
    MADE.mkdir(parents=True, exist_ok=True)
    dst = MADE / name
    shutil.copyfile(src, dst)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    spec = importlib.util.spec_from_file_location("publish_images", ROOT / "docs" / "publish_images.py")
    publishing = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(publishing)
    entry = dict(written_by=writer, sha256=hashlib.sha256(dst.read_bytes()).hexdigest(),
                 date=datetime.date.today().isoformat(), commit=commit or None)
    publishing.record(MADE / "provenance.json", {name: entry})
    return dst
