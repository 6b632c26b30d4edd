"""Two-node drill, run in its own process (it needs its own Ray cluster): a head node and a worker
node on this machine; the env workers spread over both; the worker node is removed mid-run; the job
must finish on the head node. Prints one JSON line with what happened."""
import json
import sys
import time

import ray
from ray.cluster_utils import Cluster

from ddrl_lab import Job

out = sys.argv[1]
cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 3, "include_dashboard": False})
worker_node = cluster.add_node(num_cpus=2)
cluster.wait_for_nodes()
ray.init(address=cluster.address, log_to_driver=False)
job = None
try:
    job = Job("cartpole-ppo", {"run.total_env_steps": 300_000, "run.log_interval_s": 0.2, "run.out": out}).start()
    deadline = time.monotonic() + 120
    while (not len(job.metrics()) or job.metrics().learner_updates.iloc[-1] < 20) and time.monotonic() < deadline:
        time.sleep(0.1)
    node_of = lambda actor: ray.get(actor.__ray_call__.remote(lambda self: ray.get_runtime_context().get_node_id()))
    nodes_before = sorted({node_of(r) for r in job.runners})
    cluster.remove_node(worker_node)
    job.wait(timeout=240)
    df = job.metrics()
    print(json.dumps(dict(status=job.status, ret=float(df.episode_return_mean.iloc[-1]), books=dict(job.books),
                          restarts=int(df.worker_restarts.iloc[-1]), nodes_before=len(nodes_before),
                          worker_node=worker_node.node_id)))
finally:
    if job is not None: job.stop(timeout=10)
    ray.shutdown()
    cluster.shutdown()
