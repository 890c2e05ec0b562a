"""The command line: the main job, `gpath demo`, on the real WaterFlow data; bad options,
help and version."""

import argparse
import io
import re

import numpy as np
import pytest

import gpath
from gpath import cli
from gpath.cli import main, run_demo


def test_demo_checks_every_update_and_plots(tmp_path, capsys):
    png = tmp_path / "demo.png"
    records = run_demo(window=300, step=20, max_updates=4, plot=str(png), progress=False)
    assert len(records) == 4
    for r in records:
        assert r.kkt <= 1e-9 and r.reference_diff <= 1e-7 and r.sid_diff <= 1e-9
        assert r.mid_breakpoints <= r.sid_breakpoints
        assert 0.0 <= r.score <= 1.0
    out = capsys.readouterr().out
    assert "checks passed on every update" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_regression_demo_checks_every_update_against_the_exact_svr(tmp_path, capsys):
    # issue 19, item 4: the ε-SVR forecasts the next hour's flow; MID, single-point and the
    # exact reference (exact_svr) agree on every window, and the MAE is the forecast's.
    png = tmp_path / "svr.png"
    records = run_demo(task="regression", window=300, step=20, max_updates=4, C=10.0, epsilon=0.05,
                       plot=str(png), progress=False)
    assert len(records) == 4
    for r in records:
        assert r.kkt <= 1e-9 and r.reference_diff <= 1e-7 and r.sid_diff <= 1e-9
        assert r.mid_breakpoints <= r.sid_breakpoints
    assert sum(r.mid_breakpoints for r in records) > 0  # the paths moved points, not only the tube's inside
    out = capsys.readouterr().out
    assert "the next hour's flow" in out and "SVR ms" in out and "checks passed on every update" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The MAE is the forecast error of the model before each update, in the flow's units.
    from gpath import IncrementalSVR
    from gpath.datasets import load_waterflow_regression

    X, y = load_waterflow_regression()
    mean, std = y[:300].mean(), y[:300].std()
    model = IncrementalSVR(C=10.0, epsilon=0.05).fit((X[:300] - mean) / std, (y[:300] - mean) / std)
    forecast = model.predict((X[300:320] - mean) / std) * std + mean
    assert records[0].score == pytest.approx(np.mean(np.abs(forecast - y[300:320])), rel=1e-9)


def test_cli_entry_point(capsys):
    assert main(["demo", "--window", "200", "--step", "10", "--max-updates", "2", "--no-progress",
                 "--C", "1", "--gamma", "2.0"]) == 0
    out = capsys.readouterr().out
    assert "C=1.0, gamma=2" in out and "checks passed" in out
    assert np.isfinite(float(out.split("online accuracy ")[1].split()[0]))


def test_a_problem_the_estimator_refuses_is_one_line_and_exit_code_1(capsys):
    # Valid options whose problem the estimator refuses (OP-s of a regression whose LAD start
    # fits every target at C = 1e6) printed a traceback.
    assert main(["path", "--data", "diabetes", "--path", "s", "--C", "1e6"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("gpath path: error: RobustSVR: the LAD regression") and "Traceback" not in err


# ---------------------------------------------------------------- bad options, help, version (issue 11, item 9)

@pytest.fixture
def nothing_runs(monkeypatch):
    """Any model fit fails the test: the options must be refused before."""
    def ran(*args, **kwargs):
        raise AssertionError("the command ran although an option was bad")

    monkeypatch.setattr(gpath.IncrementalSVC, "fit", ran)
    monkeypatch.setattr(gpath.IncrementalSVR, "fit", ran)
    monkeypatch.setattr(gpath.RobustSVC, "fit", ran)
    monkeypatch.setattr(gpath.RobustSVR, "fit", ran)


@pytest.mark.parametrize("argv,message", [
    (["demo", "--max-updates", "0"], "argument --max-updates: must be an integer >= 1; got '0'"),
    (["demo", "--step", "0"], "argument --step: must be an integer >= 1; got '0'"),
    (["demo", "--step", "-5"], "argument --step: must be an integer >= 1; got '-5'"),
    (["demo", "--step", "2.5"], "argument --step: must be an integer >= 1; got '2.5'"),
    (["demo", "--gamma", "foo"], "argument --gamma: must be 'scale', 'auto' or a finite number > 0; got 'foo'"),
    (["demo", "--gamma", "0"], "argument --gamma: must be 'scale', 'auto' or a finite number > 0; got '0'"),
    (["demo", "--window", "1"], "argument --window: must be an integer >= 2; got '1'"),
    (["demo", "--C", "-1"], "argument --C: must be a finite number > 0; got '-1'"),
    (["demo", "--C", "inf"], "argument --C: must be a finite number > 0; got 'inf'"),
    (["demo", "--task", "forecast"], "argument --task: must be one of classification, regression; got 'forecast'"),
    (["demo", "--task", "regression", "--epsilon", "-1"], "argument --epsilon: must be a finite number >= 0; got '-1'"),
    (["demo", "--epsilon", "0.2"], ("--epsilon is the ε-SVR's tube (--task regression); got --epsilon 0.2 with "
                                    "--task classification")),
    (["path", "--C", "0"], "argument --C: must be a finite number > 0; got '0'"),
    (["path", "--seed", "-1"], r"argument --seed: must be an integer in [0, 2**32 - 1]; got '-1'"),
    (["path", "--seed", str(2**32)], r"argument --seed: must be an integer in [0, 2**32 - 1]; got '4294967296'"),
    (["demo", "--plot", "{tmp}/missing/demo.png"], "argument --plot: folder '{tmp}/missing' does not exist"),
    (["path", "--plot", "{tmp}/missing/path.png"], "argument --plot: folder '{tmp}/missing' does not exist"),
    (["demo", "--plot", "{tmp}/demo"], "argument --plot: must end in a suffix matplotlib can write (.avif"),
    (["path", "--plot", "{tmp}/path.docx"], "argument --plot: must end in a suffix matplotlib can write"),
    (["demo", "--window", "5", "--no-progress"], "--window 5: rows 150..154 of WaterFlow hold only one class"),
    (["demo", "--window", "1200", "--step", "100"], "--window 1200 + --step 100 exceeds the 1261 rows of WaterFlow"),
])
def test_bad_options_are_argparse_errors_before_anything_runs(nothing_runs, tmp_path, capsys, argv, message):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    with pytest.raises(SystemExit) as info:
        cli.main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert f"usage: gpath {argv[0]}" in err
    assert f"gpath {argv[0]}: error: {message.replace('{tmp}', str(tmp_path))}" in err
    assert "Traceback" not in err


def test_device_cuda_without_cupy_is_an_argparse_error(nothing_runs, capsys):
    try:
        import cupy  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("CuPy is installed: --device cuda may work here")
    with pytest.raises(SystemExit) as info:
        cli.main(["demo", "--device", "cuda"])
    assert info.value.code == 2
    assert "--device cuda needs CuPy" in capsys.readouterr().err


@pytest.mark.parametrize("kwargs,message", [
    (dict(step=0), "--step must be an integer >= 1; got 0"),
    (dict(max_updates=0), "--max-updates must be an integer >= 1; got 0"),
    (dict(gamma="foo"), "--gamma must be 'scale', 'auto' or a finite number > 0; got 'foo'"),
    (dict(window=1.5), "--window must be an integer >= 2; got 1.5"),
    (dict(device="tpu"), "--device must be 'cpu' or 'cuda'; got 'tpu'"),
    (dict(task="Regression"), "--task must be one of classification, regression; got 'Regression'"),
    (dict(task="regression", epsilon=float("nan")), "--epsilon must be a finite number >= 0; got nan"),
])
def test_run_demo_checks_its_arguments_first(nothing_runs, kwargs, message):
    with pytest.raises(cli.UsageError, match=f"^{re.escape(message)}$"):
        run_demo(progress=False, **kwargs)


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"gpath {gpath.__version__}\n"


def test_help_describes_every_option_with_its_default(monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")  # one line per option
    parser = cli.build_parser()
    assert "The ``gpath`` command" not in parser.format_help()
    assert "gpath demo" in parser.description and "gpath path" in parser.description
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert {c.dest for c in subparsers._choices_actions} == {"demo", "path", "select"}
    assert all(c.help for c in subparsers._choices_actions)
    for name, sub in subparsers.choices.items():
        assert sub.description
        lines = sub.format_help().splitlines()
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            option = action.option_strings[0]
            i = next(i for i, ln in enumerate(lines) if ln.strip().split(" ")[0] == option)
            line = " ".join(lines[i : i + 2])  # the help may start on the next line
            assert action.help and action.help.split(" (default")[0] in line, f"gpath {name} {option}: no help"
            assert "(default: " in line, f"gpath {name} {option}: no default in {line!r}"
    demo = subparsers.choices["demo"].format_help()
    assert "(default: 10.0)" in demo and "(default: 600)" in demo and "(default: as many as the series" in demo


@pytest.mark.parametrize(("C", "gamma"), [(1e5, 1e-3), (1e5, 1.0), (0.1, 1.0)])
def test_demo_runs_at_the_corners_of_the_papers_grid(C, gamma):
    # The paper's grid (section 4.2) reaches C = 1e5: the path, its checks and the reference
    # (repaired where LIBSVM's sets are wrong) hold there.
    records = run_demo(C=C, gamma=gamma, max_updates=1, progress=False, out=io.StringIO())
    assert len(records) == 1 and records[0].kkt <= 1e-9


def test_demo_compares_models_whose_bias_is_not_unique():
    # C = 0.1, gamma = 1e-3: after the 7th update no coefficient lies strictly inside [0, C],
    # so every bias of an interval 2.6e-7 wide is optimal; MID and SID must both take its
    # middle (SVCState.release_bounded_margin), as the reference does.
    records = run_demo(C=0.1, gamma=1e-3, max_updates=7, progress=False, out=io.StringIO())
    assert len(records) == 7 and max(r.sid_diff for r in records) <= 1e-9
