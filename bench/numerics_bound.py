"""How much faster than plain fp32 any numerics could make a preset's job on this machine: issue #34's bound.

    .venv/bin/python bench/numerics_bound.py [--preset pong-ppo] [--repeats 2] [--seconds 10]

Per repeat, side by side: (a) the job's agent steps/s while learning in plain fp32 and the default layout (the
denominator of #34's "≥ 1.5× plain fp32" bar, measured as `ddrl-lab bench numerics` measures it); (b) the job as
shipped (`auto` numerics), and shipped with acting overlapped with learning (`topology.overlap_acting`); (c) for each
numerics variant this machine computes natively, the agent steps/s of the preset's network alone (its learner
updating on synthetic segments of the job's shape plus the acting forward pass, every CPU thread, no emulator:
`bench/atari_compute.py`'s `network_times`), and of its learner alone. A job in turn does at least its network's work,
and a job with acting hidden behind learning at least its learner's, so the fastest (c) over (a) bounds what any choice
of numerics, layout or overlap can give over plain fp32 on this machine (the pong-ppo recipe kept as it is).
Run it with bf16 masked (`ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2`) to bound an AVX2-only CPU.
"""
import argparse
import statistics

from atari_compute import network_times

from ddrl_lab.bench.atari import NUMERICS_VARIANTS, agent_steps_while_learning
from ddrl_lab.config.load import load_config
from ddrl_lab.nn.numerics import bf16_native, compute_info


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="pong-ppo")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=10.0)
    a = ap.parse_args()
    print(f"machine: {compute_info()}", flush=True)
    variants = {k: v for k, v in NUMERICS_VARIANTS.items() if bf16_native() or not v["algo.bf16"]}
    jobs = {"fp32": NUMERICS_VARIANTS["fp32"], "shipped": {}, "shipped, overlapped": {"topology.overlap_acting": True}}
    rows = {f"job {k}": [] for k in jobs} | {f"{part} {k}": [] for k in variants for part in ("network", "learner")}
    for i in range(a.repeats):
        for label, ov in jobs.items():
            rows[f"job {label}"].append(agent_steps_while_learning(a.preset, ov, i, a.seconds))
        for label, ov in variants.items():
            cfg = load_config(a.preset, ov)
            learn_s, act_s = network_times(cfg, a.seconds)
            rows[f"network {label}"].append(1.0 / (learn_s + act_s))
            rows[f"learner {label}"].append(1.0 / learn_s)
        print(f"repeat {i + 1}: " + ", ".join(f"{k} {v[-1]:,.0f}" for k, v in rows.items()), flush=True)
    med = {k: statistics.median(v) for k, v in rows.items()}
    base = med["job fp32"]
    print(f"\n{a.preset}, agent steps/s, median of {a.repeats} ({a.seconds:.0f} s per measurement):")
    for k, v in med.items():
        print(f"  {k:28s} {v:9,.0f}   {v / base:5.2f}x job fp32")
    net = max(v for k, v in med.items() if k.startswith("network"))
    learn = max(v for k, v in med.items() if k.startswith("learner"))
    print(f"bound on any numerics over plain fp32 here: {net / base:.2f}x acting and learning in turn (the fastest network "
          f"alone / the fp32 job); {learn / base:.2f}x with acting wholly hidden (the fastest learner alone / the fp32 job)")


if __name__ == "__main__":
    main()
