"""Safe screening of the compiled MID loop's breakpoints (:mod:`gpath._screening`): a screened
path takes the same events as the full products and ends with every margin exact to
round-off. Screening starts from 2²⁰ product entries (Adult n = 10,000); these tests lower the
threshold to every product, so that it screens on small real data."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits

import gpath._engine
import gpath._path as path_module
import gpath._screening as screening
from gpath import IncrementalSVC, IncrementalSVR, _threads
from gpath.datasets import load_waterflow_regression


def _margin_error(state) -> float:
    """max |y f − (Q α + y b + shift)| over every row, from fresh kernel values, relative to
    1 + max_i Σ_j |Q_ij α_j| (the terms' size)."""
    sv = np.flatnonzero(state.alpha > 0.0)
    exact = state.q_matvec(sv, state.alpha[sv]) + state.y_host * state.b
    if state.shift is not None:
        exact = exact + state.shift
    scale = 1.0 + float(np.max(state.q_matvec(sv, state.alpha[sv], absolute=True)))
    return float(np.max(np.abs(np.asarray(state.yf) - exact))) / scale


def _digits():
    X, y = load_digits(return_X_y=True)
    return X / 16.0, (y > 4).astype(int)


def _waterflow():
    X, y = load_waterflow_regression()
    return (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()


CASES = {
    # name: (data, estimator, parameters, window, points an update)
    "digits, one point": (_digits, IncrementalSVC, {"C": 10.0, "gamma": 0.02}, 1200, 1),
    "digits, 10 points": (_digits, IncrementalSVC, {"C": 10.0, "gamma": 0.02}, 1200, 10),
    "digits, C = 1e4": (_digits, IncrementalSVC, {"C": 1e4, "gamma": 0.02}, 1200, 3),
    "waterflow SVR, 30 points": (_waterflow, IncrementalSVR, {"C": 10.0, "epsilon": 0.1, "gamma": 1 / 7}, 600, 30),
    # a cache of some 250 columns: slots given up and taken again while the path screens
    "digits, small cache": (_digits, IncrementalSVC, {"C": 10.0, "gamma": 0.02, "cache_size": 2.3}, 1200, 10),
}


@pytest.mark.parametrize("one_point", [True, False], ids=["compiled update", "path loop"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_screened_path_takes_the_full_products_events_and_ends_exact(monkeypatch, case, one_point):
    _compare_paths(monkeypatch, case, one_point)


def test_a_screened_path_syncs_on_products_computed_on_every_core(monkeypatch):
    """The path loop hands each product to Python's threads (tests/test_threads.py's
    settings on two cores): the breakpoint after one screens from it."""
    monkeypatch.setattr(_threads, "n_threads", lambda: 2)
    monkeypatch.setattr(gpath._engine, "n_threads", lambda: 2)
    monkeypatch.setattr(gpath._engine, "_THREADED_PRODUCT", 1)
    monkeypatch.setattr(gpath._engine, "ENTRIES_PER_THREAD", 256)
    _compare_paths(monkeypatch, "digits, 10 points", False)


def _compare_paths(monkeypatch, case, one_point):
    """Two models fitted alike, updated alike, one with every product screened: the same
    breakpoints, margins exact, the same decision values, KKT; the path loop counts screened
    breakpoints."""
    data, estimator, params, n, m = CASES[case]
    X, y = data()
    monkeypatch.setattr(path_module, "ONE_POINT", one_point)
    screened, events = [], []
    finish, init = path_module._PathRun.finish, path_module._PathRun.__init__

    def counting(self):
        screened.append(self.n_screened)
        return finish(self)

    def recording(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.events = []
        events.append(self.events)

    monkeypatch.setattr(path_module._PathRun, "finish", counting)
    monkeypatch.setattr(path_module._PathRun, "__init__", recording)
    models = {}
    for entries in (0, 1):
        monkeypatch.setattr(screening, "SCREEN_ENTRIES", entries)
        models[entries] = estimator(method="multiple", **params).fit(X[:n], y[:n])
    probe = X[:200]
    for k in range(12):
        lo = n + k * m
        logged = []
        for entries in (0, 1):
            monkeypatch.setattr(screening, "SCREEN_ENTRIES", entries)
            events.clear()
            models[entries].update(X[lo : lo + m], y[lo : lo + m], remove=models[entries].sample_ids_[:m])
            logged.append([list(e) for e in events])
        full, screen = models[0], models[1]
        assert screen.last_update_.n_breakpoints == full.last_update_.n_breakpoints
        assert logged[1] == logged[0]  # (the path loop's events; the compiled update logs none)
        assert _margin_error(screen.state_) <= 1e-12
        f_full = full.decision_function(probe) if estimator is IncrementalSVC else full.predict(probe)
        f_screen = screen.decision_function(probe) if estimator is IncrementalSVC else screen.predict(probe)
        assert np.max(np.abs(f_screen - f_full)) <= 1e-10 * (1.0 + np.max(np.abs(f_full)))
        assert screen.check_kkt() <= 1e-9
    if not one_point:  # (the compiled update's breakpoints are counted by its own return)
        assert sum(screened) > 0


@pytest.mark.parametrize("leave", [False, True], ids=["no event", "a margin point leaves"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_screened_books_equal_the_full_product(seed, leave):
    """The screening functions on a small RBF problem against the full product: the bound
    holds (tight at a duplicate of a margin point), every row that reaches its level within
    the step is near, and after the step (a margin point leaving or not) and the correction
    every margin equals y f + η ψ."""
    n, m, cap, ridge = 600, 12, 16, 1e-6
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    members = rng.choice(np.arange(1, n), size=m, replace=False)
    y = rng.choice([-1.0, 1.0], size=n)
    X[0], y[0] = X[members[0]], y[members[0]]  # row 0 duplicates a margin point: the bound is tight there
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    Qn = np.outer(y, y) * np.exp(-0.5 * d2) + ridge * np.eye(n)
    data = np.ascontiguousarray(Qn[members])  # slot j: the column of members[j]
    slots = np.arange(m, dtype=np.int64)
    Qf = np.zeros((cap, cap))
    Qf[:m, :m] = Qn[np.ix_(members, members)]
    qs, rows = np.arange(cap, dtype=np.int64), np.zeros(0, dtype=np.int64)
    # Levels: margin rows none, the others O (lo = 1) or I (hi = 1); ten rows (and row 0) close.
    lo, hi = np.full(n, -np.inf), np.full(n, np.inf)
    upper_side = rng.random(n) < 0.5
    hi[upper_side], lo[~upper_side] = 1.0, 1.0
    dist = 50.0 + rng.random(n)
    close = rng.choice(np.setdiff1d(np.arange(1, n), members), size=10, replace=False)
    dist[close] = 0.5 * rng.random(10)
    dist[0] = 0.05
    yf = np.where(upper_side, 1.0 - dist, 1.0 + dist)
    lo[members], hi[members], yf[members] = -np.inf, np.inf, 1.0

    scr = screening.arrays(n, m, cap, 1.0)
    x_s = rng.normal(size=m + 1)
    screening.sync(scr, data.T @ x_s[1:], rows, x_s, slots)
    x_l = x_s.copy()
    x_l[1] += 0.3  # the direction changes on the first margin point only
    x_l[0] += 0.1
    r, u = 0.7, rng.normal(size=n)
    psi = x_l[0] * y + Qn[:, members] @ x_l[1:] + r * u
    v = x_l[0] * y + r * u + data.T @ x_s[1:]

    bound = screening._drift(scr, x_l, slots, Qf, qs, m, ridge)
    # (Not on M's own rows, whose ridge term is outside the feature space: they are never near.)
    others = np.setdiff1d(np.arange(n), members)
    assert np.all(np.abs(psi - v)[others] <= bound)
    assert abs(psi[0] - v[0]) >= 0.999 * bound

    yf0 = yf.copy()
    screened, t, row, _ = screening.screened_ratio(scr, yf, lo, hi, x_l[0], y, r, u, x_l, slots, Qf, qs, m, ridge, 1.0,
                                            data, rows)
    assert screened
    with np.errstate(divide="ignore", invalid="ignore"):
        t_all = np.where(psi > 0, np.maximum(hi - yf0, 0) / psi, np.maximum(yf0 - lo, 0) / -psi)
    t_all[members] = np.inf
    assert row == int(np.argmin(t_all)) and t == pytest.approx(t_all.min(), rel=1e-12)
    reaching = np.flatnonzero(t_all <= 1.0)
    assert scr[6][reaching].all()  # every row that reaches its level within the horizon is near
    eta = min(t, 1.0)
    screening.screened_step(scr, yf, eta, x_l, slots)
    kept = slots
    if leave:  # members[2] leaves M from slot 2 at this breakpoint
        screening.leaving(scr, members[2], 2, slots, yf, data, rows)
        assert yf[members[2]] == pytest.approx(yf0[members[2]] + eta * psi[members[2]], abs=1e-12)
        kept = np.delete(slots, 2)
    screening.correct(scr, yf, data, n, rows, kept, np.empty(n))
    np.testing.assert_allclose(yf, yf0 + eta * psi, rtol=0, atol=1e-12)
    assert scr[0][0] == screening.IDLE and not scr[6].any() and not scr[5].any()
