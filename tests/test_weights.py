"""Class and sample weights (issue 13.2): each point's box is C_i = C · sample_weight_i ·
class_weight[y_i]; models equal the exact reference with per-point C (LIBSVM's index sets with
those weights, re-solved in float64), after fits and after updates."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import Pool, dataset, snapshot
from test_multiclass import assert_pairs_exact, real

from gpath import IncrementalSVC, SimpleSVC


def _weights(n, seed, zero=0.1):
    """Sample weights in [0.2, 5] with a share of exact zeros."""
    rng = np.random.default_rng(seed)
    w = np.exp(rng.uniform(np.log(0.2), np.log(5.0), n))
    w[rng.random(n) < zero] = 0.0
    return w


# ---------------------------------------------------------------- fit
@pytest.mark.parametrize("cls", [SimpleSVC, IncrementalSVC], ids=lambda c: c.__name__)
@pytest.mark.parametrize("name,C", [("wine", 1e-3), ("wine", 10.0), ("wine", 1e5), ("breast_cancer", 1.0)])
def test_weighted_fit_equals_the_exact_reference(backend, cls, name, C):
    if name == "wine":
        X, y = real("wine")
        class_weight = {0: 0.5, 2: 3.0}
    else:
        X, y = dataset("breast_cancer")
        X, y = X[:300], y[:300]
        class_weight = "balanced"
    sw = _weights(len(y), seed=1)
    model = cls(C=C, gamma=0.05, class_weight=class_weight).fit(backend.asarray(X), backend.asarray(y),
                                                                 sample_weight=sw)
    cw = model.class_weight_
    if class_weight == "balanced":
        np.testing.assert_allclose(cw, len(y) / (2 * np.bincount(y)))
    else:
        np.testing.assert_array_equal(cw, [0.5, 1.0, 3.0])
    assert_pairs_exact(model, X, y, X_device=backend.asarray(X), weights=sw * cw[y])
    assert np.all(np.atleast_2d(model.alpha_)[:, sw == 0] == 0)  # weight 0: inert


def test_digits_balanced_weights_equal_the_reference():
    X, y = real("digits")
    rows = np.r_[np.flatnonzero(y < 5), np.flatnonzero(y >= 5)[::3]]  # unbalanced: 5 classes at a third
    model = IncrementalSVC(C=10.0, gamma=0.05, class_weight="balanced").fit(X[rows], y[rows])
    cw = model.class_weight_
    assert cw[9] > 2.5 * cw[0]
    assert_pairs_exact(model, X[rows], y[rows], weights=cw[y[rows]])


def test_weights_as_scikit_learn_svc():
    # The same weighted problem as scikit-learn's SVC (at tol 1e-10, with LIBSVM's float32 kernel).
    from sklearn.svm import SVC

    X, y = real("wine")
    sw = _weights(len(y), seed=2, zero=0.0)
    model = SimpleSVC(C=2.0, gamma=0.1, class_weight={1: 2.0}).fit(X, y, sample_weight=sw)
    ref = SVC(C=2.0, gamma=0.1, class_weight={1: 2.0}, tol=1e-10).fit(X, y, sample_weight=sw)
    np.testing.assert_array_equal(model.support_, ref.support_)
    np.testing.assert_allclose(model.dual_coef_, ref.dual_coef_, rtol=0, atol=1e-4)
    np.testing.assert_array_equal(model.predict(X), ref.predict(X))


def test_a_lone_working_variable_may_rest_inside_its_own_box():
    # With per-point boxes, yᵀα = 0 can pin the last working variable strictly inside its box:
    # two points with boxes 1 and 2 have the exact solution α = (1, 1), the second one free.
    from gpath._simplesvm import simple_svm
    from gpath.kernels import Kernel

    X, y = np.array([[0.0], [1.0]]), np.array([1.0, -1.0])
    state, _ = simple_svm(X, y, Kernel("rbf", 1.0), 1.0, 0.0, random_state=np.random.RandomState(0),
                          weights=np.array([1.0, 2.0]))
    np.testing.assert_allclose(state.alpha, [1.0, 1.0], rtol=0, atol=1e-12)
    assert state.kkt_violation() <= 1e-12
    # And on real data: class weights that used to make the fit cycle.
    X, y = dataset("breast_cancer")
    model = SimpleSVC(C=1.0, gamma=0.05, class_weight="balanced").fit(X, y)
    assert model.check_kkt(X, y) <= 1e-9


# ---------------------------------------------------------------- updates
@pytest.mark.parametrize("name,C", [("wine", 1e-3), ("wine", 1.0), ("wine", 1e5), ("breast_cancer", 10.0)])
def test_weighted_updates_equal_the_exact_reference(backend, name, C):
    # Fit without weights, then add weighted points (zeros among them) and remove others: every
    # point moves to its own box along the path.
    if name == "wine":
        X, y = real("wine")
        n0, step = 90, 20
    else:
        X, y = dataset("breast_cancer")
        n0, step = 250, 40
    rng = np.random.default_rng(7)
    order = rng.permutation(len(y))
    sw = _weights(len(y), seed=3, zero=0.2)
    pool = Pool(X, y, backend)
    model = IncrementalSVC(C=C, gamma=0.05)
    pool.fit(model, order[:n0])
    box = {i: 1.0 for i in pool.rows}
    nxt = n0
    for u in range(3):
        add = order[nxt : nxt + step]
        nxt += step
        remove = rng.choice(np.array(list(pool.rows)), 10, replace=False)
        start = pool.next_id
        pool.update(model, add, remove, sample_weight_add=sw[add])
        for i in remove:
            del box[int(i)]
        box.update({start + a: float(sw[r]) for a, r in enumerate(add)})
    Xc, yc = pool.current(model)
    w = np.array([box[i] for i in model.sample_ids_])
    assert_pairs_exact(model, Xc, yc, X_device=backend.asarray(Xc), weights=w)
    alpha = np.atleast_2d(model.alpha_)
    assert np.all(alpha[:, w == 0] == 0)


def test_weight_zero_points_are_kept_inert_and_removable():
    X, y = dataset("breast_cancer")
    model = IncrementalSVC(C=1.0, gamma=0.05).fit(X[:200], y[:200])
    f_before = model.decision_function(X)
    # Duplicates with the opposite label and weight 0 change nothing.
    model.update(X_add=X[:30], y_add=1 - y[:30], sample_weight_add=np.zeros(30))
    np.testing.assert_allclose(model.decision_function(X), f_before, rtol=0, atol=1e-12)
    assert model.last_update_.n_breakpoints == 0 and np.all(model.alpha_[200:] == 0)
    np.testing.assert_array_equal(model.sample_ids_[200:], np.arange(200, 230))
    model.update(remove=np.arange(200, 215))
    np.testing.assert_allclose(model.decision_function(X), f_before, rtol=0, atol=1e-12)
    assert model.check_kkt() <= 1e-12


@pytest.mark.parametrize("cls", [SimpleSVC, IncrementalSVC], ids=lambda c: c.__name__)
def test_points_of_weight_zero_never_start_simplesvm(cls):
    # Give weight 0 to the closest pair SimpleSVM starts from without weights: the weighted
    # fit starts elsewhere, and equals the exact solution without those points.
    X, y = dataset("breast_cancer")
    X, y = X[:250], y[:250]
    start = SimpleSVC(C=1.0, gamma=0.05).fit(X, y).fit_stats_.init_pair
    w = np.ones(len(y))
    w[list(start)] = 0.0
    w[::7] = 0.0
    model = cls(C=1.0, gamma=0.05).fit(X, y, sample_weight=w)
    if cls is SimpleSVC:
        assert np.all(w[list(model.fit_stats_.init_pair)] > 0)
    assert_pairs_exact(model, X, y, weights=w)
    keep = w > 0
    alone = cls(C=1.0, gamma=0.05).fit(X[keep], y[keep])
    np.testing.assert_allclose(model.decision_function(X), alone.decision_function(X), rtol=0, atol=1e-10)


def test_removing_the_last_weighted_point_of_a_class_is_refused():
    X, y = dataset("breast_cancer")
    w = np.where((y[:200] == 1) & (np.arange(200) >= 100), 0.0, 1.0)  # class 1 weighted only in the first 100
    model = IncrementalSVC(C=1.0, gamma=0.05).fit(X[:200], y[:200], sample_weight=w)
    before = snapshot(model)
    with pytest.raises(ValueError, match=r"every point of class \[1\] has weight <= 0"):
        model.update(remove=np.flatnonzero((y[:200] == 1) & (w > 0)))
    assert snapshot(model) == before


def test_a_class_weight_is_fixed_at_fit_and_new_classes_get_theirs():
    X, y = real("wine")
    rows = np.flatnonzero(y < 2)[:90]
    model = IncrementalSVC(C=1.0, gamma=0.1, class_weight="balanced").fit(X[rows], y[rows])
    fitted = model.class_weight_.copy()
    more = np.flatnonzero(y == 0)[40:50]
    model.update(X_add=X[more], y_add=y[more])  # changes the counts: the weights stay
    np.testing.assert_array_equal(model.class_weight_, fitted)
    twos = np.flatnonzero(y == 2)[:12]
    model.update(X_add=X[twos], y_add=y[twos])
    n = 90 + 10 + 12
    np.testing.assert_allclose(model.class_weight_, np.r_[fitted, n / (3 * 12)])
    cur = np.r_[rows, more, twos]
    assert_pairs_exact(model, X[cur], y[cur], weights=model.class_weight_[y[cur]])
    # With a dict, a new class gets its entry (the dict may name it before it appears).
    model = IncrementalSVC(C=1.0, gamma=0.1, class_weight={2: 4.0}).fit(X[rows], y[rows])
    model.update(X_add=X[twos], y_add=y[twos])
    np.testing.assert_array_equal(model.class_weight_, [1.0, 1.0, 4.0])
    assert_pairs_exact(model, X[np.r_[rows, twos]], y[np.r_[rows, twos]],
                       weights=model.class_weight_[y[np.r_[rows, twos]]])


@pytest.mark.parametrize("cls", [SimpleSVC, IncrementalSVC], ids=lambda c: c.__name__)
def test_a_negative_weight_makes_a_point_inert_as_in_svc(cls):
    # LIBSVM (SVC) drops the points of weight <= 0; gpath keeps them inert (α = 0).
    X, y = dataset("breast_cancer")
    X, y = X[:150], y[:150]
    w = np.random.default_rng(4).uniform(0.5, 2.0, size=150)
    w[::9] = -0.7
    model = cls(C=3.0, gamma=0.05).fit(X, y, sample_weight=w)
    zero = cls(C=3.0, gamma=0.05).fit(X, y, sample_weight=np.maximum(w, 0.0))
    np.testing.assert_allclose(model.alpha_, zero.alpha_, rtol=0, atol=1e-9 * 3.0 * 2.0)
    assert np.all(np.atleast_2d(model.alpha_)[:, ::9] == 0)
    if cls is IncrementalSVC:
        model.update(X_add=X[:5] + 0.01, y_add=y[:5], sample_weight_add=-np.ones(5))
        assert np.all(np.atleast_2d(model.alpha_)[:, -5:] == 0)
        assert model.check_kkt() <= 1e-9


# ---------------------------------------------------------------- bad input
@pytest.fixture
def fitted():
    X, y = dataset("breast_cancer")
    return IncrementalSVC(C=1.0, gamma=0.05).fit(X[:200], y[:200]), X, y


@pytest.mark.parametrize("kwargs,match", [
    (lambda X, y: dict(X_add=X[200:210], y_add=y[200:210], sample_weight_add=np.ones(9)),
     r"sample_weight_add.shape == \(9,\), expected \(10,\)"),
    (lambda X, y: dict(X_add=X[200:210], y_add=y[200:210], sample_weight_add=np.full(10, np.nan)),
     "sample_weight_add"),
    (lambda X, y: dict(X_add=X[200:210], y_add=y[200:210], sample_weight_add=["a"] * 10),
     "sample_weight_add must hold real numbers"),
    (lambda X, y: dict(sample_weight_add=np.ones(3)), "sample_weight_add needs X_add"),
    (lambda X, y: dict(X_add=X[200:210], y_add=np.full(10, 5), sample_weight_add=np.zeros(10)),
     r"every point of class \[5\] has weight <= 0"),
])
def test_bad_weights_leave_the_model_unchanged(fitted, kwargs, match):
    model, X, y = fitted
    before = snapshot(model)
    with pytest.raises(ValueError, match=match):
        model.update(**kwargs(X, y))
    assert snapshot(model) == before


@pytest.mark.parametrize("cls", [SimpleSVC, IncrementalSVC], ids=lambda c: c.__name__)
@pytest.mark.parametrize("make,match", [
    (lambda y: dict(sample_weight=np.zeros(len(y))), "Invalid input - all samples have zero or negative weights"),
    (lambda y: dict(sample_weight=np.where(y == 1, 0.0, 1.0)), r"every point of class \[1\] has weight <= 0"),
    (lambda y: dict(sample_weight=-np.ones(len(y))), "Invalid input - all samples have zero or negative weights"),
    (lambda y: dict(sample_weight=np.where(y == 1, -0.5, 1.0)),
     "Invalid input - all samples with positive weights belong to the same class"),
    (lambda y: dict(sample_weight=np.ones(len(y) + 1)), r"sample_weight.shape == \(101,\), expected \(100,\)"),
])
def test_bad_sample_weight_at_fit(cls, make, match):
    X, y = dataset("breast_cancer")
    model = cls(gamma=0.05)
    with pytest.raises(ValueError, match=match):
        model.fit(X[:100], y[:100], **make(y[:100]))
    assert model.__dict__ == cls(gamma=0.05).__dict__


@pytest.mark.parametrize("class_weight,match", [
    ({7: 2.0}, r"class_weight names labels that are not classes: \[7\]"),
    ({0: 0.0}, "class_weight values must be finite numbers > 0"),
    ({0: np.nan}, "class_weight values must be finite numbers > 0"),
    ("heavy", "class_weight must be None, 'balanced' or a dict"),
])
def test_bad_class_weight(class_weight, match):
    X, y = dataset("breast_cancer")
    # An incremental model's dict may name a class that has not appeared yet.
    unseen = isinstance(class_weight, dict) and 7 in class_weight
    for cls in (SimpleSVC,) if unseen else (SimpleSVC, IncrementalSVC):
        with pytest.raises(ValueError, match=match):
            cls(gamma=0.05, class_weight=class_weight).fit(X[:100], y[:100])


def test_weights_need_the_hinge_loss_and_a_finite_C():
    X, y = dataset("breast_cancer")
    for params in (dict(loss="squared_hinge"), dict(C=np.inf)):
        with pytest.raises(ValueError, match="sample_weight and class_weight need loss='hinge' and a finite C"):
            SimpleSVC(gamma=0.05, **params).fit(X[:100], y[:100], sample_weight=np.ones(100))
        with pytest.raises(ValueError, match="need loss='hinge' and a finite C"):
            SimpleSVC(gamma=0.05, class_weight="balanced", **params).fit(X[:100], y[:100])


def test_class_weight_cannot_change_between_fit_and_update(fitted):
    model, X, y = fitted
    before = snapshot(model)
    model.set_params(class_weight="balanced")
    with pytest.raises(ValueError, match=r"class_weight cannot change between fit and update \(fitted with None; "
                                         r"now 'balanced'\); call fit again"):
        model.update(X_add=X[200:210], y_add=y[200:210])
    model.set_params(class_weight=None)
    assert snapshot(model) == before


def test_inert_points_at_the_end_keep_the_rows_in_training_order():
    # A fit holds its weight-0 points back and appends them at the end; putting the rows back
    # in training order must reorder X with the rest, also when the reorder spans the rows
    # from first to last (it then looks like a run of consecutive rows, but is not one).
    from sklearn.svm import SVC

    rng = np.random.RandomState(0)
    X = rng.randn(12, 2)
    y = (X[:, 0] + 0.3 * rng.randn(12) > 0).astype(int)
    w = np.ones(12)
    w[[3, 11]] = 0.0
    model = IncrementalSVC(C=1.0, gamma=0.5).fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(model.states_[0].X, X)
    assert model.check_kkt() <= 1e-12
    reference = SVC(C=1.0, gamma=0.5, tol=1e-12).fit(X, y, sample_weight=w)
    X_test = rng.randn(5, 2)
    np.testing.assert_allclose(model.decision_function(X_test), reference.decision_function(X_test), atol=1e-6)
