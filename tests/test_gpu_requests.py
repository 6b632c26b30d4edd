"GPUs reach the learners: what Ray is asked for, checked on this CPU-only machine with GPUs Ray is told about."
import json
import subprocess
import sys
import textwrap

import pytest

from ddrl_lab import ConfigError, Job

from conftest import BIN

PROBE = textwrap.dedent("""
    import json, tempfile, time
    import ray
    from ddrl_lab import Job
    from ddrl_lab.runtime import init_local_ray
    init_local_ray(num_cpus=5, num_gpus=3, include_dashboard=False, log_to_driver=False, configure_logging=False)
    def gpus_taken(preset, overrides):
        job = Job(preset, {"run.runtime": "ray", "run.out": tempfile.mkdtemp(), "run.total_env_steps": 10**8,
                           "run.target_return": None, "topology.device": "auto", "topology.num_learners": 2, **overrides}).start()
        try:                         # the learners take their GPUs once Ray has placed them: wait for that, not for rows
            t0 = time.monotonic()
            while ray.available_resources().get("GPU", 0.0) > 1 and time.monotonic() - t0 < 60: time.sleep(0.1)
            time.sleep(1.0)          # (had anything else asked for a GPU, it would show by now)
            free = ray.available_resources().get("GPU", 0.0)
        finally:
            job.stop()
        return dict(per_learner=job.gpus_per_learner, free_while_running=free, free_after=ray.available_resources().get("GPU", 0.0))
    print(json.dumps(dict(host=gpus_taken("cartpole-ppo", {"sync.aggregation": "parameter-server"}),
                          ondevice=gpus_taken("cartpole-ondevice", {}))))
""")


@pytest.mark.slow
def test_learners_ask_ray_for_a_gpu_each_when_the_cluster_has_them(child_env):
    """A cluster declaring 3 GPUs (Ray takes the count on trust: `num_gpus`), `topology.device: auto`, 2 learners:
    2 gradient learners behind a parameter server, then a data-parallel on-device group of 2 trainers. Each learner or
    trainer asks for one GPU, the server and the env workers for none, so 1 of the 3 stays free while each job runs
    (they then find no CUDA and train on the CPU)."""
    r = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=child_env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    want = dict(per_learner=1, free_while_running=1.0, free_after=3.0)
    assert got == dict(host=want, ondevice=want), got


def test_a_job_asking_for_more_gpus_than_the_cluster_has_is_refused_before_it_starts(tmp_path, ray_cluster, child_env):
    "The test cluster has no GPU: `topology.device: cuda` is refused naming the key and both counts, and leaves no run directory."
    job = Job("cartpole-ppo", {"run.runtime": "ray", "run.out": str(tmp_path), "topology.device": "cuda", "topology.num_learners": 2,
                               "sync.aggregation": "parameter-server"})
    with pytest.raises(ConfigError, match=r"topology.device = 'cuda': this job's learners ask Ray for 2 GPUs .*topology.num_learners = 2.*the cluster has 0"):
        job.start()
    assert list(tmp_path.iterdir()) == []
    auto = Job("cartpole-ppo", {"run.runtime": "ray", "run.out": str(tmp_path), "topology.device": "auto"})
    assert auto.learner_gpus() == 0                                    # auto on a cluster without GPUs: the CPU
    r = subprocess.run([BIN / "ddrl-lab", "run", "cartpole-ppo", "--set", "topology.device=cuda", "--out", str(tmp_path / "cli")],
                       capture_output=True, text=True, env=child_env, timeout=120)
    assert r.returncode == 2 and "topology.device = 'cuda'" in r.stderr and "1 GPU " in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "cli").exists() or list((tmp_path / "cli").iterdir()) == []
