"""`ddrl-lab plan` (#38's first part, `18_plan_sim` and `18a_plan_costs`): a table from unit costs measured here, a
calibration saved and used again, and bad input refused in one paragraph with exit 2."""
import json

from ddrl_lab.cli import main

PLAN = ["plan", "cartpole-ppo", "--set", "run.runtime=serial"]   # (on Ray a calibration also times a remote call)


def test_plan_prints_a_table_from_a_calibration_it_saves_and_reuses(tmp_path, capsys):
    saved = tmp_path / "cal.json"
    assert main([*PLAN, "--workers", "1,2,64", "--save-calibration", str(saved)]) == 0
    first = capsys.readouterr().out.splitlines()
    assert first[0].split()[:3] == ["topology", "workers", "env_steps_per_s"]
    assert [line.split()[:2] for line in first[1:]] == [[t, n] for t in ("barrier", "channel") for n in ("1", "2", "64")]
    assert json.loads(saved.read_text())["costs"]["sample_s"] > 0
    assert main([*PLAN, "--workers", "1,2,64", "--calibration", str(saved)]) == 0
    assert capsys.readouterr().out.splitlines() == first      # the same costs, the same (deterministic) plan


def test_bad_plan_input_is_refused_in_one_paragraph(tmp_path, capsys):
    saved = tmp_path / "cal.json"
    assert main([*PLAN, "--workers", "1", "--save-calibration", str(saved)]) == 0
    capsys.readouterr()
    for argv, words in [
        (["--workers", "0"], "--workers 0: expected whole numbers of at least 1"),
        (["--workers", "two"], "--workers 'two': expected whole numbers"),
        (["--network", "dialup", "--calibration", str(saved)], "network 'dialup': expected one of loopback, 10gbe"),
        (["--set", "algo.hidden_size=32", "--calibration", str(saved)], "algo.hidden_size (64 there, 32 here)"),
        (["--calibration", str(tmp_path / "none.json")], "not a calibration file"),
    ]:
        assert main([*PLAN, *argv]) == 2, argv
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
