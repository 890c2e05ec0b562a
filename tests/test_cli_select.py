"""`gpath select`: the exact CV error over C for several gammas, its plot, and bad options."""

import numpy as np
import pytest
from helpers import dataset
from sklearn.model_selection import StratifiedKFold

from gpath import experiments
from gpath.cli import main, run_select
from gpath.reference import exact_svc


def test_select_reports_the_chosen_pair_and_plots(tmp_path, capsys):
    png = tmp_path / "select.png"
    search = run_select(data="breast_cancer", C_min=0.5, C_max=5.0, gammas=(0.01, 0.1), folds=3, plot=str(png))
    out = capsys.readouterr().out
    assert "exact 3-fold CV error" in out and "chosen: C = " in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(search.cv_error_paths_) == 2 and search.best_gamma_ in (0.01, 0.1)
    # The claimed CV error is that of the exact reference models at (best_C_, best_gamma_) on
    # the command's folds (stratified, shuffled with seed 0).
    X, y = dataset("breast_cancer")
    errors = []
    for train, test in StratifiedKFold(3, shuffle=True, random_state=0).split(X, y):
        ref = exact_svc(X[train], np.where(y[train] == 1, 1.0, -1.0), search.best_C_, gamma=search.best_gamma_)
        assert ref.certified, ref.kkt
        f = ref.decision_function(X[test])
        assert np.abs(f).min() > 1e-6 * np.abs(f).max()  # every sign sure
        errors.append(np.mean((f > 0) != (y[test] == 1)))
    assert 1 - search.best_score_ == pytest.approx(np.mean(errors), abs=1e-12)


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

    monkeypatch.setattr(experiments, "_select_data", ran)
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_more_folds_than_points_of_a_class_is_a_usage_error(capsys):
    # Before: a traceback from scikit-learn's splitter (exit 1).
    with pytest.raises(SystemExit) as exc:
        main(["select", "--data", "waterflow", "--folds", "100000"])
    assert exc.value.code == 2
    assert "--folds must be at most 552" in capsys.readouterr().err
