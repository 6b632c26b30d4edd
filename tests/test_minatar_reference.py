"""TorchBreakout against the reference MinAtar Breakout (the `minatar` package), step for step.

`minatar_lockstep` (nbs/envs/01_torch_games.ipynb) drives a pool and one reference game per env with the
same actions, hands the reference the pool's random draws (start side, sticky coin), and compares
observations, rewards and terminals at every step; it raises at the first difference.
"""
import pytest
import torch

pytest.importorskip("minatar", reason="the reference `minatar` package is not installed (pip install minatar==1.0.15; "
                                      "it is in settings.ini's dev_requirements)")
from minatar import Environment  # noqa: E402

from ddrl_lab.envs.torch_games import TorchBreakout, minatar_lockstep  # noqa: E402

NOOP, LEFT, RIGHT = 0, 1, 2


def uniform_policy(seed: int):
    gen = torch.Generator().manual_seed(seed)
    return lambda obs: torch.randint(0, 3, (len(obs),), generator=gen)


def aim_paddle(seed: int):
    "Put the paddle where the falling ball bounces straight back up or off the paddle's corner (a coin per fall)."
    gen, corner = torch.Generator().manual_seed(seed), None
    fold = lambda p: torch.where(p % 20 < 10, p % 20, 19 - p % 20)   # a column, reflected off the walls as MinAtar does

    def policy(obs):
        nonlocal corner
        (by, bx), (ty, tx) = [(obs[:, c].amax(2).argmax(1), obs[:, c].amax(1).argmax(1))
                              for c in (TorchBreakout.BALL, TorchBreakout.TRAIL)]
        dx = torch.where(bx != tx, (bx - tx).sign(), torch.where(bx == 0, 1, -1))
        down, coin = by > ty, torch.rand(len(obs), generator=gen) < 0.5
        corner = coin if corner is None else torch.where(down, corner, coin)
        target = torch.where(down, fold(bx + dx * (8 + corner.long() - by)), bx)
        paddle = obs[:, TorchBreakout.PADDLE, 9].argmax(1)
        return torch.where(target < paddle, LEFT, torch.where(target > paddle, RIGHT, NOOP))
    return policy


@pytest.mark.parametrize("sticky", [0.0, 0.1])
def test_random_actions_match_minatar(sticky):
    "64 games x 250 steps of uniformly random actions: ~1,500 short episodes, from seeds other than 0..63."
    c = minatar_lockstep(TorchBreakout(64, sticky_action_prob=sticky), uniform_policy(7), steps=250,
                         seeds=range(1000, 1064))
    assert c["steps"] == 16_000 and c["episodes"] > 1000 and c["rewards"] > 300
    if sticky:
        assert c["sticky"] > 500 and c["sticky_first"] > 50   # sticky steps, some on an episode's first step


@pytest.mark.parametrize("sticky", [0.0, 0.1])
def test_long_games_match_minatar(sticky):
    "Scripted play: walls cleared and rebuilt (default 1000-step cap), and games truncated at a short cap."
    c = minatar_lockstep(TorchBreakout(8, sticky_action_prob=sticky), aim_paddle(3), steps=1500)
    assert c["rebuilt"] > 0 and c["rewards"] > 500
    c = minatar_lockstep(TorchBreakout(16, sticky_action_prob=sticky, max_episode_steps=150), aim_paddle(4), steps=500)
    assert c["truncated"] > 0


def test_sticky_action_carries_over_an_episode_end():
    "MinAtar's Environment.reset keeps the previous action: a sticky first step repeats the last episode's last action."
    ref = Environment("breakout", sticky_action_prob=1.0)
    ref.seed(0)
    ref.reset()
    ref.last_action = LEFT
    ref.env.ball_y, ref.env.ball_x, ref.env.ball_dir, ref.env.pos = 8, 2, 2, 7   # falling past a paddle at 7
    pool = TorchBreakout(1, sticky_action_prob=1.0)
    pool.reset([0])
    pool.ball_y[0], pool.ball_x[0], pool.ball_dir[0], pool.paddle[0], pool.last_action[0] = 8, 2, 2, 7, LEFT
    assert ref.act(NOOP) == (0, True) and pool.step(torch.tensor([NOOP])).terminated.item()
    ref.reset()
    ref.act(NOOP)
    pool.step(torch.tensor([NOOP]))
    assert ref.env.pos == int(pool.paddle[0]) == 3    # both paddles moved left from 4: the old LEFT was repeated
