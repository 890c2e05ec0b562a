"""Input validation, error messages and misuse (issue 11): every rejected call says what was
expected and what came, and leaves the model exactly as it was."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from helpers import assert_exact, dataset, snapshot

import gpath
from gpath import IncrementalSVC, RobustSVC, SimpleSVC


@pytest.fixture
def fitted():
    X, y = dataset("breast_cancer")
    return IncrementalSVC(C=1.0, gamma=0.05).fit(X[:200], y[:200]), X, y


# ---------------------------------------------------------------- 4: sample ids
@pytest.mark.parametrize("make_ids", [
    lambda ids: ids[0],                       # NumPy integer
    lambda ids: int(ids[0]),                  # Python integer
    lambda ids: np.uint32(ids[0]),            # another NumPy integer type
    lambda ids: ids[:2],                      # NumPy array
    lambda ids: ids[:2].tolist(),             # list
    lambda ids: tuple(ids[:2].tolist()),      # tuple
    lambda ids: range(int(ids[0]), int(ids[0]) + 2),
    lambda ids: ids[:2].astype(np.int32),
], ids=["np.int64", "int", "np.uint32", "ndarray", "list", "tuple", "range", "int32 array"])
def test_update_accepts_scalar_and_array_like_ids(fitted, make_ids):
    model, _, _ = fitted
    remove = make_ids(model.sample_ids_)
    expected = np.atleast_1d(np.asarray(remove)).tolist()
    model.update(remove=remove)
    assert model.last_update_.n_removed == len(expected)
    assert not set(expected) & set(model.sample_ids_.tolist())


def test_update_accepts_ids_from_another_namespace(fitted):
    strict = pytest.importorskip("array_api_strict")
    model, _, _ = fitted
    model.update(remove=strict.asarray(np.array([4, 9])))
    assert 4 not in model.sample_ids_ and 9 not in model.sample_ids_
    model.update(remove=strict.asarray(11))
    assert 11 not in model.sample_ids_


@pytest.mark.parametrize("remove,error,match", [
    (np.float64(3.0), TypeError, "remove must be integer sample ids"),
    ([[1, 2]], TypeError, r"remove must be integer sample ids.*shape \(1, 2\)"),
    (True, TypeError, "remove must be integer sample ids"),
    ("3", TypeError, "remove must be integer sample ids"),
    (np.int64(10_000), KeyError, r"not in the model: \[10000\]"),
])
def test_bad_ids_leave_the_model_unchanged(fitted, remove, error, match):
    model, _, _ = fitted
    before = snapshot(model)
    with pytest.raises(error, match=match):
        model.update(remove=remove)
    assert snapshot(model) == before


# ---------------------------------------------------------------- 5: unfitted robust estimators
@pytest.mark.parametrize("method", ["predict", "score", "decision_function", "select"])
@pytest.mark.parametrize("cls", [gpath.RobustSVC, gpath.RobustSVR, gpath.CCCPRobustSVC, gpath.CCCPRobustSVR],
                         ids=lambda c: c.__name__)
def test_unfitted_robust_estimators_raise_not_fitted(cls, method):
    from sklearn.exceptions import NotFittedError

    X, y = dataset("breast_cancer")
    model = cls()
    if method == "decision_function" and not getattr(cls, "_classification", True):
        assert not hasattr(model, method)  # regressors have none, as in scikit-learn
        return
    args = (X[:20],) if method in ("predict", "decision_function") else (X[:20], y[:20])
    with pytest.raises(NotFittedError, match=f"This {cls.__name__} instance is not fitted yet"):
        getattr(model, method)(*args)
    assert model.__dict__ == cls().__dict__


# ---------------------------------------------------------------- 10: messages
def _regression_data():
    """breast_cancer's first feature predicted from the others (a real regression target)."""
    X, _ = dataset("breast_cancer")
    return X[:, 1:], X[:, 0].copy()


@pytest.mark.parametrize("cls", [gpath.RobustSVR, gpath.CCCPRobustSVR], ids=lambda c: c.__name__)
@pytest.mark.parametrize("bad,match", [
    ("nan", r"y must be finite; got NaN or inf at rows \[5, 17\] \(2 of 40\)"),
    ("inf", r"y must be finite; got NaN or inf at rows \[5, 17\] \(2 of 40\)"),
    ("short", r"y must have shape \(40,\) to match X; got shape \(39,\)"),
    ("2-D", r"y must have shape \(40,\) to match X; got shape \(40, 2\)"),
    ("strings", r"y must hold real numbers; got dtype <U"),
])
def test_regression_targets_say_what_is_wrong(cls, bad, match):
    X, y = _regression_data()
    X, y = X[:40], y[:40]
    if bad in ("nan", "inf"):
        y = y.copy()
        y[[5, 17]] = np.nan if bad == "nan" else np.inf
    elif bad == "short":
        y = y[:39]
    elif bad == "2-D":
        y = np.c_[y, y]
    else:
        y = y.astype(str)
    model = cls(gamma=0.05)
    with pytest.raises(ValueError, match=match):
        model.fit(X, y)
    assert model.__dict__ == cls(gamma=0.05).__dict__


def test_one_class_message_names_the_users_label():
    X, y = dataset("breast_cancer")
    labels = np.array(["benign", "malignant"])[1 - y[:60]]
    model = IncrementalSVC(gamma=0.05).fit(X[:60], labels)
    before = snapshot(model)
    with pytest.raises(ValueError, match=r"would leave only class \['benign'\] in the model; an SVC needs "
                                         r"at least two classes \(it holds \['benign', 'malignant'\]\)"):
        model.update(remove=model.sample_ids_[labels == "malignant"])
    assert snapshot(model) == before


def _fit_args(cls):
    X, y = dataset("breast_cancer")
    if cls in (gpath.RobustSVR, gpath.CCCPRobustSVR):
        X, y = _regression_data()
    return X[:80], y[:80]


@pytest.mark.parametrize("cls,params", [
    (IncrementalSVC, dict(C=np.float32(2.0), gamma=np.float32(0.05), ridge=np.float32(1e-6),
                          tol=np.float64(1e-9), cache_size=np.int64(64))),
    (IncrementalSVC, dict(kernel=np.str_("poly"), degree=np.int64(2), coef0=np.float32(1.0),
                          gamma=np.float64(0.01), method=np.str_("single"))),
    (gpath.SimpleSVC, dict(C=np.float32(2.0), gamma=np.float32(0.05), max_iter=np.int32(5000),
                           tol=np.float32(1e-5), random_state=np.int64(3))),
    (gpath.RobustSVC, dict(s=np.float32(-0.5), C=np.float32(1.0), gamma=np.float32(0.05))),
    (gpath.RobustSVC, dict(path="s", s_max=np.float32(-0.25), gamma=np.float32(0.05),
                           fit_intercept=np.True_)),
    (gpath.RobustSVR, dict(s=np.float32(0.5), gamma=np.float32(0.05))),
    (gpath.RobustSVR, dict(path="s", s_min=np.float32(0.25), gamma=np.float32(0.05))),
    (gpath.CCCPRobustSVC, dict(grid=np.int64(3), max_iter=np.int32(50), s=np.float32(-0.5), gamma=0.05)),
    (gpath.CCCPRobustSVC, dict(grid=np.array([1.0, 0.5, 0.0], dtype=np.float32), gamma=0.05)),
    (gpath.CCCPRobustSVR, dict(path="s", grid=np.int64(3), s_min=np.float32(0.25), gamma=0.05)),
], ids=lambda v: v.__name__ if isinstance(v, type) else "-".join(v))
def test_numpy_scalar_parameters_are_accepted(cls, params):
    X, y = _fit_args(cls)
    model = cls(**params).fit(X, y)
    python = {k: (v.tolist() if isinstance(v, (np.generic, np.ndarray)) else v) for k, v in params.items()}
    reference = cls(**python).fit(X, y)
    np.testing.assert_array_equal(model.alpha_, reference.alpha_)


@pytest.mark.parametrize("cls", [IncrementalSVC, gpath.SimpleSVC, gpath.RobustSVC, gpath.RobustSVR,
                                 gpath.CCCPRobustSVC, gpath.CCCPRobustSVR], ids=lambda c: c.__name__)
def test_feature_count_message_names_the_estimator(cls):
    X, y = _fit_args(cls)
    model = cls(gamma=0.05).fit(X, y)
    before = snapshot(model)
    d = X.shape[1]
    with pytest.raises(ValueError, match=rf"^X has 3 features, but {cls.__name__} is expecting {d} features "
                                         r"as input\.$"):
        model.predict(X[:5, :3])
    assert snapshot(model) == before


def test_removing_every_point_says_so(fitted):
    model, _, _ = fitted
    before = snapshot(model)
    with pytest.raises(ValueError, match=r"would leave no points in the model; an SVC needs at least two classes "
                                         r"\(it holds \[0, 1\]\)"):
        model.update(remove=model.sample_ids_)
    assert snapshot(model) == before


# ---------------------------------------------------------------- 7: parameters of the robust estimators
@pytest.fixture(scope="module")
def cancer_small():
    X, y = dataset("breast_cancer")
    return X[:100], y[:100]


@pytest.mark.parametrize("cls,params,match", [
    (gpath.CCCPRobustSVC, dict(grid=[np.nan]), r"grid must hold finite values; got \[nan\]"),
    (gpath.CCCPRobustSVC, dict(grid=[1.0, np.inf]), r"grid must hold finite values; got \[1.0, inf\]"),
    (gpath.CCCPRobustSVC, dict(grid=[-0.5]), r"grid values of the theta path must lie in \[0, 1\]; got \[-0.5\]"),
    (gpath.CCCPRobustSVC, dict(grid=[-1.0, 2.0]), r"must lie in \[0, 1\]; got \[-1.0, 2.0\]"),
    (gpath.CCCPRobustSVC, dict(grid=[0.2, 0.8]), (r"grid values of the theta path must be strictly decreasing "
                                                 r"\(theta runs from 1 to 0\); got \[0.2, 0.8\]")),
    (gpath.CCCPRobustSVC, dict(grid=[0.5, 0.5]), r"strictly decreasing.*got \[0.5, 0.5\]"),
    (gpath.CCCPRobustSVC, dict(path="s", grid=[0.5]), (r"grid values of the s path must be <= 0 for "
                                                      r"CCCPRobustSVC; got \[0.5\]")),
    (gpath.CCCPRobustSVC, dict(path="s", grid=[-0.1, -0.5]), (r"s path must be strictly increasing \(s runs "
                                                             r"up to s_max\); got \[-0.1, -0.5\]")),
    (gpath.CCCPRobustSVR, dict(path="s", grid=[0.0, -1.0]), (r"grid values of the s path must be > 0 for "
                                                            r"CCCPRobustSVR; got \[0.0, -1.0\]")),
    (gpath.CCCPRobustSVR, dict(path="s", grid=[0.5, 1.0]), (r"s path must be strictly decreasing \(s runs "
                                                           r"down to s_min\); got \[0.5, 1.0\]")),
    (gpath.CCCPRobustSVC, dict(grid=[[1.0, 0.5]]), r"grid must be an int >= 2 or a 1-D sequence"),
    (gpath.CCCPRobustSVC, dict(grid=[]), r"grid must be an int >= 2 or a 1-D sequence.*got \[\]"),
    (gpath.CCCPRobustSVC, dict(grid="5"), r"grid must be an int >= 2 or a 1-D sequence.*got '5'"),
    (gpath.CCCPRobustSVC, dict(grid=True), r"grid must be an int >= 2 or a 1-D sequence.*got True"),
    (gpath.CCCPRobustSVC, dict(grid=1), r"grid must be an integer >= 2; got 1"),
    (gpath.CCCPRobustSVC, dict(max_iter=0), r"max_iter must be an integer >= 1; got 0"),
    (gpath.RobustSVC, dict(s=np.nan), r"s must be a finite real number <= 0 for RobustSVC; got nan"),
    (gpath.RobustSVC, dict(path="s", s=0.5), r"s must be a finite real number <= 0 for RobustSVC; got 0.5"),
    (gpath.RobustSVC, dict(path="s", s_max=-np.inf), r"s_max must be a finite real number <= 0"),
    (gpath.RobustSVR, dict(path="s", s_min=-1.0), r"s_min must be a finite real number > 0; got -1.0"),
    (gpath.RobustSVR, dict(path="s", s=0.0), r"s must be a finite real number > 0; got 0.0"),
    (gpath.RobustSVC, dict(fit_intercept="yes"), r"fit_intercept must be a bool; got 'yes'"),
])
def test_bad_robust_parameters_are_refused_before_anything_changes(cancer_small, cls, params, match):
    X, y = cancer_small
    if not cls._classification:
        X, y = _regression_data()
        X, y = X[:100], y[:100]
    model = cls(gamma=0.05, **({"grid": 2} if "CCCP" in cls.__name__ else {})).fit(X, y)
    before = snapshot(model)
    saved = model.get_params()
    model.set_params(**params)
    with pytest.raises(ValueError, match=match):
        model.fit(X, y)
    model.set_params(**saved)
    assert snapshot(model) == before


@pytest.mark.parametrize("cls", [gpath.RobustSVR, gpath.CCCPRobustSVR], ids=lambda c: c.__name__)
def test_s_min_above_the_start_of_op_s_is_an_error(cls):
    X, y = _regression_data()
    model = cls(gamma=0.05, path="s").fit(X[:100], y[:100])
    start = model.path_.params[0]
    before = snapshot(model)
    model.set_params(s_min=1e9)
    with pytest.raises(ValueError, match=rf"s_min=1000000000.0 is above the start of OP-s, max_i \|y_i - f\(x_i\)\| "
                                         rf"= {start:.6g} .*pass s_min < {start:.6g}, or None"):
        model.fit(X[:100], y[:100])
    model.set_params(s_min=None)
    assert snapshot(model) == before


def test_s_max_below_the_start_of_op_s_is_the_ordinary_svm(cancer_small):
    # Decision (documented in RobustSVC): no margin y f lies below such an s_max, so the
    # ordinary SVM (the start of OP-θ, θ = 1) is the solution there: a one-point path at s_max.
    X, y = cancer_small
    svm = gpath.RobustSVC(gamma=0.05).fit(X, y).path_.alpha[0]
    model = gpath.RobustSVC(gamma=0.05, path="s", s_max=-1e9).fit(X, y)
    np.testing.assert_array_equal(model.path_.params, -1e9)
    np.testing.assert_allclose(model.alpha_, svm, rtol=0, atol=1e-12)


@pytest.mark.parametrize("cls", [gpath.RobustSVC, gpath.RobustSVR, gpath.CCCPRobustSVC, gpath.CCCPRobustSVR],
                         ids=lambda c: c.__name__)
@pytest.mark.parametrize("bad,match", [
    ("nan", None),
    ("short", r"y_val must have shape \(50,\) to match X_val; got shape \(40,\)"),
    ("features", r"X_val has 3 features, but \w+ is expecting \d+ features as input\."),
])
def test_select_refuses_bad_validation_data(cls, bad, match):
    X, y = _fit_args(cls)
    Xv, yv = (dataset("breast_cancer")[0][100:150], dataset("breast_cancer")[1][100:150].astype(float))
    if not cls._classification:
        Xv, yv = _regression_data()[0][100:150], _regression_data()[1][100:150].copy()
    model = cls(gamma=0.05, **({"grid": 3} if "CCCP" in cls.__name__ else {})).fit(X, y)
    before = snapshot(model)
    if bad == "nan":
        yv = yv.copy()
        yv[3] = np.nan
        match = (r"y_val must not hold NaN or inf labels; got them at rows \[3\] \(1 of 50\)" if cls._classification
                 else r"y_val must be finite; got NaN or inf at rows \[3\] \(1 of 50\)")
    elif bad == "short":
        yv = yv[:40]
    else:
        Xv = Xv[:, :3]
    with pytest.raises(ValueError, match=match):
        model.select(Xv, yv)
    assert snapshot(model) == before


# ---------------------------------------------------------------- 6: column names, kernel parameters
ALL_ESTIMATORS = [IncrementalSVC, gpath.SimpleSVC, gpath.RobustSVC, gpath.RobustSVR, gpath.CCCPRobustSVC,
                  gpath.CCCPRobustSVR]


def _small(cls, **params):
    if "CCCP" in cls.__name__:
        params.setdefault("grid", 3)
    return cls(gamma=0.05, **params)


@pytest.mark.parametrize("cls", ALL_ESTIMATORS, ids=lambda c: c.__name__)
def test_scikit_learns_column_name_check(cls):
    # scikit-learn's own check: feature_names_in_ after fit on a DataFrame; predict,
    # decision_function and score (and partial_fit's second call) refuse reordered, unseen and
    # missing column names with its messages.
    from sklearn.utils.estimator_checks import check_dataframe_column_names_consistency

    pytest.importorskip("pandas")
    check_dataframe_column_names_consistency(cls.__name__, _small(cls))


@pytest.fixture(scope="module")
def cancer_frames():
    pd = pytest.importorskip("pandas")
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer(as_frame=True)
    X = (data.data - data.data.mean()) / data.data.std()
    return X, data.target.to_numpy(), pd


@pytest.mark.parametrize("cls", ALL_ESTIMATORS, ids=lambda c: c.__name__)
def test_reordered_columns_are_refused_everywhere(cancer_frames, cls):
    X, y, _ = cancer_frames
    if not getattr(cls, "_classification", True):
        y = X.iloc[:, 0].to_numpy() + 0.5 * X.iloc[:, 1].to_numpy()
        X = X.iloc[:, 2:]
    model = _small(cls).fit(X.iloc[:200], y[:200])
    np.testing.assert_array_equal(model.feature_names_in_, X.columns)
    assert model.feature_names_in_.dtype == object
    shuffled = X.iloc[200:260, ::-1]
    before = snapshot(model)
    calls = [lambda: model.predict(shuffled), lambda: model.score(shuffled, y[200:260])]
    if hasattr(model, "decision_function"):  # not the regressors (scikit-learn's convention)
        calls += [lambda: model.decision_function(shuffled)]
    if isinstance(model, IncrementalSVC):
        calls += [lambda: model.partial_fit(shuffled, y[200:260])]
    if hasattr(model, "select"):
        calls += [lambda: model.select(shuffled, y[200:260])]
    if "X" in inspect.signature(getattr(model, "check_kkt", lambda: None)).parameters and not isinstance(
            model, IncrementalSVC):  # (the paths' check_kkt takes their parameter, not rows)
        calls += [lambda: model.check_kkt(X.iloc[:200, ::-1], y[:200])]
    for call in calls:
        with pytest.raises(ValueError, match="Feature names must be in the same order as they were in fit"):
            call()
    if isinstance(model, IncrementalSVC):
        with pytest.raises(ValueError, match="The feature names of X_add should match those that were passed "
                                             "during fit.\nFeature names must be in the same order"):
            model.update(X_add=shuffled, y_add=y[200:260])
    if hasattr(model, "select"):
        with pytest.raises(ValueError, match="The feature names of X_val should match"):
            model.select(X.iloc[200:260].rename(columns={X.columns[0]: "other"}), y[200:260])
    assert snapshot(model) == before
    # The same frame in the right order works, and a refit on an array drops the names.
    model.predict(X.iloc[200:260])
    model.fit(X.iloc[:200].to_numpy(), y[:200])
    assert not hasattr(model, "feature_names_in_")


def test_names_given_to_a_model_fitted_without_them_warn(cancer_frames):
    X, y, _ = cancer_frames
    model = IncrementalSVC(gamma=0.05).fit(X.iloc[:200].to_numpy(), y[:200])
    with pytest.warns(UserWarning, match="X has feature names, but IncrementalSVC was fitted without feature names"):
        model.predict(X.iloc[200:210])
    with pytest.warns(UserWarning, match="X_add has feature names, but IncrementalSVC was fitted without"):
        model.update(X_add=X.iloc[200:210], y_add=y[200:210])
    named = gpath.RobustSVC(gamma=0.05).fit(X.iloc[:200], y[:200])
    with pytest.warns(UserWarning, match="X_val does not have valid feature names, but RobustSVC was fitted with"):
        named.select(X.iloc[200:260].to_numpy(), y[200:260])


@pytest.mark.parametrize("cls", [IncrementalSVC, gpath.SimpleSVC, gpath.RobustSVC], ids=lambda c: c.__name__)
def test_column_names_survive_save_and_load(cancer_frames, cls, tmp_path):
    X, y, _ = cancer_frames
    model = _small(cls).fit(X.iloc[:200], y[:200])
    model.save(tmp_path / "model.npz")
    loaded = gpath.load(tmp_path / "model.npz")
    np.testing.assert_array_equal(loaded.feature_names_in_, model.feature_names_in_)
    assert loaded.feature_names_in_.dtype == object
    with pytest.raises(ValueError, match="Feature names must be in the same order"):
        loaded.predict(X.iloc[200:210, ::-1])


@pytest.mark.parametrize("params, message", [
    (dict(C=2.0), r"C and ridge cannot change between fit and update \(fitted with C=1.0"),
    (dict(ridge=1e-3), r"C and ridge cannot change between fit and update"),
    (dict(C=-1.0), r"C must be"),
    (dict(tol=0.0), r"tol must be"),
    (dict(method="paths"), r"method"),
], ids=lambda p: "-".join(f"{k}={v}" for k, v in p.items()) if isinstance(p, dict) else None)
def test_the_first_update_checks_parameters_changed_since_fit(fitted, params, message):
    # fit leaves its checked parameters for the first update to reuse: a change by
    # set_params after fit must still be checked there.
    model, X, y = fitted
    before = snapshot(model)
    saved = model.get_params()
    model.set_params(**params)
    with pytest.raises(ValueError, match=message):
        model.update(X_add=X[200:210], y_add=y[200:210])
    model.set_params(**saved)
    assert snapshot(model) == before
    model.update(X_add=X[200:210], y_add=y[200:210])
    assert_exact(model, X[:210], y[:210])


@pytest.mark.parametrize("params", [dict(kernel="linear"), dict(gamma=0.1), dict(gamma="scale"),
                                    dict(kernel="poly", degree=2), dict(coef0=1.0), dict(degree=5)],
                         ids=lambda p: "-".join(f"{k}={v}" for k, v in p.items()))
def test_update_refuses_kernel_parameters_changed_by_set_params(fitted, params):
    model, X, y = fitted
    before = snapshot(model)
    saved = model.get_params()
    model.set_params(**params)
    with pytest.raises(ValueError, match=r"kernel parameters cannot change between fit and update \(fitted with "
                                         r".*; now .*\); call fit again"):
        model.update(X_add=X[200:210], y_add=y[200:210])
    with pytest.raises(ValueError, match="kernel parameters cannot change"):
        model.partial_fit(X[200:210], y[200:210])
    model.set_params(**saved)
    assert snapshot(model) == before
    model.update(X_add=X[200:210], y_add=y[200:210])  # the fitted parameters again: fine


def test_first_partial_fit_with_other_classes_leaves_the_model_unfitted():
    X, y = dataset("breast_cancer")
    model = IncrementalSVC(gamma=0.05)
    with pytest.raises(ValueError, match=r"y holds labels \[0, 1\] that are not in classes=\[5, 6\]"):
        model.partial_fit(X[:50], y[:50], classes=[5, 6])
    assert model.__dict__ == IncrementalSVC(gamma=0.05).__dict__


@pytest.mark.parametrize("cls", ALL_ESTIMATORS, ids=lambda c: c.__name__)
def test_matching_frames_give_no_warning(cancer_frames, cls):
    import warnings

    X, y, _ = cancer_frames
    if not getattr(cls, "_classification", True):
        y = X.iloc[:, 0].to_numpy() + 0.5 * X.iloc[:, 1].to_numpy()
        X = X.iloc[:, 2:]
    model = _small(cls).fit(X.iloc[:200], y[:200])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.predict(X.iloc[200:260])
        model.score(X.iloc[200:260], y[200:260])
        if hasattr(model, "select"):
            model.select(X.iloc[200:260], y[200:260])
        if isinstance(model, IncrementalSVC):
            model.partial_fit(X.iloc[260:270], y[260:270])
            model.update(X_add=X.iloc[270:280], y_add=y[270:280])


# ---------------------------------------------------------------------- issue 20, part 2
@pytest.mark.parametrize("make", [
    lambda: IncrementalSVC(gamma=np.inf), lambda: SimpleSVC(kernel="poly", coef0=np.nan),
    lambda: RobustSVC(kernel="poly", coef0=np.inf), lambda: IncrementalSVC(kernel="poly", coef0=-np.inf),
])
def test_non_finite_kernel_parameters_are_value_errors(make):
    X, y = _two_class_data()
    with pytest.raises(ValueError, match="gamma|coef0"):
        make().fit(X, y)


def test_non_finite_kernel_values_are_value_errors():
    X, y = _two_class_data()
    with pytest.raises(ValueError, match="not finite"):
        IncrementalSVC(kernel=lambda A, B: np.full((A.shape[0], B.shape[0]), np.nan)).fit(X, y)
    with pytest.raises(ValueError, match="overflows"):
        SimpleSVC(kernel="poly", degree=3).fit(X * 1e200, y)


def test_unknown_ids_and_foreign_class_weight_keys_are_value_errors():
    X, y = _two_class_data()
    model = IncrementalSVC().fit(X, y)
    before = snapshot(model)
    with pytest.raises(ValueError, match="not in the model"):
        model.update(remove=[999])
    with pytest.raises(KeyError):
        model.update(remove=[999])
    assert snapshot(model) == before
    with pytest.raises(ValueError, match="not classes"):
        IncrementalSVC(class_weight={"1": 5.0}).fit(X, y)


def test_load_refuses_a_like_that_is_not_an_array(tmp_path):
    X, y = _two_class_data()
    IncrementalSVC().fit(X, y).save(tmp_path / "m.npz")
    with pytest.raises(TypeError, match="like must be an array"):
        gpath.load(tmp_path / "m.npz", like=[1, 2])


@pytest.mark.parametrize("C", [1e-8, 1e-6])
def test_tiny_C_fits_and_updates_exactly(C):
    # Before: IncrementalSVC(C=1e-8) raised a PathError advising to lower C (yᵀα = 0 held only
    # to the round-off of the bias, 4e-9 of C).
    X, y = _two_class_data()
    model = IncrementalSVC(C=C).fit(X[:30], y[:30]).update(X_add=X[30:], y_add=y[30:], remove=range(5))
    assert model.check_kkt() <= 1e-9
    assert SimpleSVC(C=C).fit(X, y).check_kkt(X, y) <= 1e-9


def _two_class_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    return X, (X[:, 0] > 0).astype(int)


def test_a_nan_label_in_a_stream_is_a_value_error():
    pytest.importorskip("river")
    from gpath.river import SlidingWindowSVC

    model = SlidingWindowSVC(window=50, batch=1)
    with pytest.raises(ValueError, match="y must be a label"):
        model.learn_one({"a": 1.0}, float("nan"))
    assert model.classes_ == []


def test_targets_hidden_behind_a_mask_are_still_checked():
    # check_targets' quick route is for plain float64 arrays: a masked array's NaN must not
    # pass by being masked (nor the model keep a masked array).
    from gpath._validation import check_targets

    y = np.ma.array([1.0, np.nan, 2.0], mask=[False, True, False])
    with pytest.raises(ValueError, match="y must be finite"):
        check_targets(y, 3)
    plain = check_targets(np.array([1.0, 2.0, 3.0]), 3)
    assert type(plain) is np.ndarray and plain.tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("labels", [
    np.array([0, 1, 1, 0]), np.array([3, 1, 2, 2]), np.array([True, False, True, False]),
    np.array(["a", "b", "a", "b"]), np.array([b"x", b"y", b"z", b"x"]), np.array([0.0, 1.0, 1.0, 0.0]),
    np.array([-1.0, 2.0, 5.0, 2.0]), np.array([0.5, 1.0, 1.0, 0.5]), np.array([1e20, 0.0, 1e20, 0.0]),
    np.array([1, "a", 2, "a"], dtype=object), np.array(["a", "b", "b", "a"], dtype=object),
    np.array([0.0, 1.0, 2.5, 3.0])])
def test_labels_are_judged_as_type_of_target_judges_them(labels):
    # check_labels decides plain discrete dtypes itself (type_of_target's checks took a
    # quarter of a small fit): the same verdicts and messages either way.
    from sklearn.utils.multiclass import type_of_target

    from gpath._validation import check_labels

    try:
        expected = type_of_target(labels, input_name="y")
    except (ValueError, TypeError) as error:  # (mixed objects, bytes: scikit-learn's own refusal)
        with pytest.raises(type(error), match=str(error)[:20]):
            check_labels(labels, labels.size, multiclass=True)
        return
    if expected in ("binary", "multiclass"):
        got, classes = check_labels(labels, labels.size, multiclass=True)
        np.testing.assert_array_equal(got, labels)
        np.testing.assert_array_equal(classes, np.unique(labels))
        if np.unique(labels).size <= 2:
            check_labels(labels, labels.size)  # binary
        else:
            with pytest.raises(ValueError, match=f"The type of the target is {expected}"):
                check_labels(labels, labels.size)
    else:
        with pytest.raises(ValueError, match=f"Unknown label type: {expected}"):
            check_labels(labels, labels.size, multiclass=True)
