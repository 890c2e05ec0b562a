"""`gpath select`: the exact CV error over C for several gammas, its plot, and bad options."""

import numpy as np
import pytest

from gpath import cli
from gpath.cli import main, run_select


def test_select_reports_the_chosen_pair_and_plots(tmp_path, capsys):
    png = tmp_path / "select.png"
    search = run_select(data="breast_cancer", C_min=0.5, C_max=5.0, gammas=(0.01, 0.1), folds=3, plot=str(png))
    out = capsys.readouterr().out
    assert "exact 3-fold CV error" in out and "chosen: C = " in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(search.cv_error_paths_) == 2 and search.best_gamma_ in (0.01, 0.1)
    curve = search.cv_error_paths_[search.best_index_]
    assert 1 - search.best_score_ == pytest.approx(curve.best_error, abs=1e-15)
    assert curve.best_error == np.min(curve.error)


def test_select_entry_point(capsys):
    assert main(["select", "--data", "breast_cancer", "--folds", "2", "--gammas", "0.05", "--C-min", "1",
                 "--C-max", "2"]) == 0
    assert "gamma = 0.05" in capsys.readouterr().out


@pytest.mark.parametrize("argv,message", [
    (["select", "--folds", "1"], "argument --folds: must be an integer >= 2; got '1'"),
    (["select", "--C-min", "0"], "argument --C-min: must be a finite number > 0; got '0'"),
    (["select", "--gammas", "1", "-2"], "argument --gammas: must be a finite number > 0; got '-2'"),
    (["select", "--C-min", "10", "--C-max", "1"], "--C-min must be <= --C-max; got 10 and 1"),
    (["select", "--data", "iris"], "argument --data: invalid choice: 'iris'"),
    (["select", "--plot", "/no/such/folder/x.png"], "argument --plot: folder '/no/such/folder' does not exist"),
])
def test_bad_select_options_are_refused_before_anything_runs(argv, message, capsys, monkeypatch):
    def ran(*args, **kwargs):
        raise AssertionError("the command ran although an option was bad")

    monkeypatch.setattr(cli, "_select_data", ran)
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
