"""Persistence: pickle round trip, and the versioned NumPy-only format of gpath.load."""

from __future__ import annotations

import io
import json
import pickle

import numpy as np
import pytest
from conftest import make_backend
from helpers import assert_exact, dataset

import gpath
from gpath._array_api import to_host
from gpath.persistence import save


@pytest.fixture
def model_and_data():
    X, y = dataset("breast_cancer")
    labels = np.array(["benign", "malignant"])[1 - y]
    model = gpath.IncrementalSVC(C=10.0, gamma=0.05).fit(X[:300], labels[:300])
    model.update(X_add=X[300:320], y_add=labels[300:320], remove=np.arange(10))
    return model, X, labels


def _same(a, b, X, atol=0.0):
    """Equal models; bit for bit unless ``atol`` (a rebuilt factor rounds differently)."""
    np.testing.assert_allclose(a.alpha_, b.alpha_, rtol=0, atol=atol * a.C)
    np.testing.assert_array_equal(a.sample_ids_, b.sample_ids_)
    np.testing.assert_array_equal(a.classes_, b.classes_)
    np.testing.assert_allclose(float(a.intercept_[0]), float(b.intercept_[0]), rtol=0, atol=atol)
    np.testing.assert_allclose(to_host(a.decision_function(X)), to_host(b.decision_function(X)), rtol=0, atol=atol)


def _continue(model, X, labels):
    model.update(X_add=X[320:340], y_add=labels[320:340], remove=model.sample_ids_[:15])
    return model


def test_pickle_round_trip_keeps_updating(model_and_data):
    model, X, labels = model_and_data
    copy = pickle.loads(pickle.dumps(model))
    _same(model, copy, X)
    _same(_continue(model, X, labels), _continue(copy, X, labels), X)


def test_save_load_round_trip_keeps_updating(model_and_data, tmp_path):
    model, X, labels = model_and_data
    path = tmp_path / "model.npz"
    model.save(path)
    loaded = gpath.load(path)
    _same(model, loaded, X)
    assert loaded.get_params() == model.get_params()
    assert loaded.last_update_ == model.last_update_
    # Loading rebuilds the factor of 𝐌, so later updates agree to round-off.
    _same(_continue(model, X, labels), _continue(loaded, X, labels), X, atol=1e-12)
    rows = np.r_[25:320, 320:340]
    assert_exact(loaded, X[rows], labels[rows])


def test_load_onto_another_device_and_back(model_and_data):
    model, X, _ = model_and_data
    strict = make_backend("array_api_strict")
    buf = io.BytesIO()
    save(model, buf)
    buf.seek(0)
    on_device = gpath.load(buf, like=strict.asarray(np.zeros(1)))
    strict.check(on_device.dual_coef_)
    np.testing.assert_array_equal(to_host(on_device.decision_function(strict.asarray(X))),
                                  model.decision_function(X))
    back = io.BytesIO()
    save(on_device, back)
    back.seek(0)
    _same(model, gpath.load(back), X)


def test_untrusted_or_foreign_files_are_refused(model_and_data, tmp_path):
    model, _, _ = model_and_data
    bad = tmp_path / "objects.npz"
    np.savez(bad, meta=np.array([{"format": "gpath.IncrementalSVC"}], dtype=object))
    with pytest.raises(ValueError, match="pickle"):
        gpath.load(bad)
    other = tmp_path / "other.npz"
    np.savez(other, weights=np.ones(3))
    with pytest.raises(ValueError, match="is not a valid gpath model file: no .meta. entry"):
        gpath.load(other)
    future = tmp_path / "future.npz"
    save(model, future)
    with np.load(future) as data:
        arrays = dict(data)
    meta = json.loads(str(arrays["meta"]))
    meta["version"] = 99
    arrays["meta"] = np.array(json.dumps(meta))
    np.savez(future, **arrays)
    with pytest.raises(ValueError, match="unknown gpath.IncrementalSVC format version 99"):
        gpath.load(future)
    with pytest.raises(TypeError, match="fitted gpath estimator"):
        save(gpath.IncrementalSVC(), tmp_path / "unfitted.npz")


@pytest.mark.parametrize("make", [lambda: gpath.SimpleSVC(C=1.0, gamma=0.05),
                                  lambda: gpath.RobustSVC(C=1.0, gamma=0.05, path="s")],
                         ids=["SimpleSVC", "RobustSVC"])
def test_pickle_round_trip_of_the_other_estimators(make):
    X, y = dataset("breast_cancer")
    model = make().fit(X[:200], y[:200])
    copy = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(copy.decision_function(X[200:]), model.decision_function(X[200:]))
    np.testing.assert_array_equal(copy.predict(X[200:]), model.predict(X[200:]))


def test_a_class_weight_dict_with_number_labels_survives_save_and_load(tmp_path):
    # JSON object keys are strings: the label 1 must come back as 1, not "1".
    X, y = dataset("breast_cancer")
    for model in (gpath.IncrementalSVC(C=1.0, gamma=0.05, class_weight={1: 2.0}),
                  gpath.SimpleSVC(C=1.0, gamma=0.05, class_weight={1: 2.0})):
        model.fit(X[:200], y[:200])
        model.save(tmp_path / "model.npz")
        loaded = gpath.load(tmp_path / "model.npz")
        assert loaded.get_params() == model.get_params()
        if isinstance(loaded, gpath.IncrementalSVC):  # the loaded model updates as the saved one
            for m in (model, loaded):
                m.update(X_add=X[200:230], y_add=y[200:230], remove=m.sample_ids_[:30])
            np.testing.assert_allclose(loaded.decision_function(X), model.decision_function(X), rtol=0, atol=1e-12)
        else:
            loaded.fit(X[:230], y[:230])  # the loaded parameters refit
            np.testing.assert_allclose(loaded.class_weight_, [1.0, 2.0])


@pytest.mark.parametrize("make", [lambda: gpath.SimpleSVC(C=1.0, gamma=0.05, loss="squared_hinge"),
                                  lambda: gpath.RobustSVC(C=1.0, gamma=0.05, path="theta"),
                                  lambda: gpath.RobustSVR(C=1.0, gamma=0.05, path="s"),
                                  lambda: gpath.CCCPRobustSVC(C=1.0, gamma=0.05, grid=3)],
                         ids=["SimpleSVC", "RobustSVC", "RobustSVR", "CCCPRobustSVC"])
def test_save_load_of_the_other_estimators(make, tmp_path):
    X, y = dataset("breast_cancer")
    strict = make_backend("array_api_strict")
    model = make().fit(X[:200], y[:200].astype(float) if "SVR" in type(make()).__name__ else y[:200])
    path = tmp_path / "model.npz"
    model.save(path)
    loaded = gpath.load(path)
    assert type(loaded) is type(model) and loaded.get_params() == model.get_params()
    values = "predict" if "SVR" in type(model).__name__ else "decision_function"  # regressors have no decision_function
    np.testing.assert_array_equal(getattr(loaded, values)(X[200:]), getattr(model, values)(X[200:]))
    if hasattr(model, "path_"):
        np.testing.assert_array_equal(loaded.path_.alpha, model.path_.alpha)
        assert loaded.path_.kind == model.path_.kind
        loaded.select(X[200:300], y[200:300])  # still usable along the whole path
    on_device = gpath.load(path, like=strict.asarray(np.zeros(1)))
    np.testing.assert_array_equal(to_host(getattr(on_device, values)(strict.asarray(X[200:]))),
                                  getattr(model, values)(X[200:]))


# ---------------------------------------------------------------- damaged and tampered files (issue 11, item 8)
def _entries(path):
    with np.load(path) as data:
        return dict(data)


def _rewrite(src, dst, edit_meta=None, **changes):
    """A copy of the archive ``src`` at ``dst`` with entries replaced and the JSON edited."""
    arrays = {**_entries(src), **changes}
    if edit_meta is not None:
        arrays["meta"] = np.array(json.dumps(edit_meta(json.loads(str(arrays["meta"])))))
    with open(dst, "wb") as f:
        np.savez(f, **arrays)
    return dst


@pytest.fixture
def saved(model_and_data, tmp_path):
    model, _, _ = model_and_data
    path = tmp_path / "good.npz"
    model.save(path)
    return model, path, tmp_path


def _damaged(kind, good, tmp):
    raw = good.read_bytes()
    path = tmp / f"{kind}.npz"
    if kind == "truncated":
        path.write_bytes(raw[: len(raw) // 2])
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "random bytes":
        path.write_bytes(np.random.default_rng(0).bytes(2000))
    elif kind == "npy":
        path = tmp / "array.npy"
        np.save(path, np.ones(3))
    elif kind == "meta not JSON":
        _rewrite(good, path, meta=np.array("{not json"))
    elif kind == "meta not a string":
        _rewrite(good, path, meta=np.ones(2))
    elif kind == "margin row out of range":
        _rewrite(good, path, margin=np.r_[_entries(good)["margin"][:-1], 10_000])
    elif kind == "object array":
        _rewrite(good, path, alpha=np.array([{"a": 1}], dtype=object))
    elif kind == "corrupted bytes":
        at = raw.index(b"alpha.npy") + 200  # inside the stored alpha array: a CRC error
        path.write_bytes(raw[:at] + bytes(b ^ 0xFF for b in raw[at : at + 64]) + raw[at + 64 :])
    return path


@pytest.mark.parametrize("kind,reason", [
    ("truncated", "not a complete .npz archive, truncated or damaged"),
    ("empty", "the file is empty"),
    ("random bytes", r"not an .npz archive \(neither a zip archive nor a NumPy array"),
    ("npy", r"a single .npy array \(shape \(3,\)\), not an .npz archive"),
    ("meta not JSON", "'meta' is not valid JSON"),
    ("meta not a string", "'meta' must be a JSON string; got dtype float64"),
    ("margin row out of range", r"the margin rows .* are not the \d+ distinct rows in \[0, \d+\) marked M"),
    ("object array", "entry 'alpha' holds pickled Python objects, which gpath never writes and never loads"),
    ("corrupted bytes", "entry 'alpha' is truncated or damaged"),
])
def test_damaged_files_are_value_errors_that_say_why(saved, kind, reason):
    _, good, tmp = saved
    path = _damaged(kind, good, tmp)
    with pytest.raises(ValueError, match=f"^'{path}' is not a valid gpath model file: {reason}") as info:
        gpath.load(path)
    assert "allow_pickle" not in str(info.value)
    with open(path, "rb") as f, pytest.raises(  # a file object: the same reason
            ValueError, match=f"^the file object is not a valid gpath model file: {reason}"):
        gpath.load(f)


def _scale(model):
    """max_i Σ_j |Q_ij| α_j of the saved problem, computed here from scikit-learn's kernel."""
    from sklearn.metrics.pairwise import rbf_kernel

    X = to_host(model.state_.X)
    return float(np.max(np.abs(rbf_kernel(X, X, gamma=model.kernel_.gamma)) @ model.alpha_
                        + model.ridge * model.alpha_))


@pytest.mark.parametrize("change,reason", [
    (lambda e, m: dict(alpha=np.where(np.arange(e["alpha"].size) == e["margin"][0], 5 * m.C, e["alpha"])),
     r"alpha must lie in \[0, C=10\]; got \[50.0\]"),
    (lambda e, m: dict(alpha=np.where(np.arange(e["alpha"].size) == 0, -1.0, e["alpha"])),
     r"alpha must lie in \[0, C=10\]; got \[-1.0\] at rows \[0\]"),
    (lambda e, m: dict(X=np.where(np.arange(e["X"].size).reshape(e["X"].shape) == 7, np.nan, e["X"])),
     "entry 'X' holds NaN or inf"),
    (lambda e, m: dict(yf=e["yf"][:-1]), r"entry 'yf' has shape \(309,\); expected \(310,\)"),
    (lambda e, m: dict(where=np.full_like(e["where"], 7)), r"index sets must be 0 \(O\), 1 \(M\) or 2 \(I\)"),
    (lambda e, m: dict(where=np.where(e["where"] == 2, 0, e["where"])), "alpha must be 0 on the set O and C=10"),
    (lambda e, m: dict(y=e["y"] + 5), "y must give each of the 310 rows one of the 2 classes"),
    (lambda e, m: dict(ids=np.zeros_like(e["ids"])), "sample ids must be distinct"),
    (lambda e, m: dict(classes=np.array([1, 1])),
     r"classes must be two or more distinct labels in increasing order; got \[1, 1\]"),
    (lambda e, m: dict(X=e["X"] * 1.01), "alpha and b violate the KKT conditions by .*, recomputed from scratch"),
    (lambda e, m: dict(yf=e["yf"] + 1e-3), "the saved margins y f differ by 0.001 from those recomputed"),
    (lambda e, m: dict(alpha=np.where(np.arange(e["alpha"].size) == e["margin"][0],
                                      e["alpha"] * (1 - 1e-4), e["alpha"])),
     "alpha and b violate the KKT conditions by"),
])
def test_tampered_states_are_refused(saved, change, reason):
    model, good, tmp = saved
    path = _rewrite(good, tmp / "bad.npz", **change(_entries(good), model))
    with pytest.raises(ValueError, match=f"is not a valid gpath model file: {reason}"):
        gpath.load(path)


@pytest.mark.parametrize("meta,reason", [
    (lambda m: {**m, "C": -1.0}, "bad parameter: C must be a finite real number > 0"),
    (lambda m: {**m, "b": [float("nan")]}, "the bias b must be a finite number; got nan"),
    (lambda m: {**m, "b": 0.5}, "'meta' b and the margin sizes must have one entry per pair of classes"),
    (lambda m: {**m, "kernel": {**m["kernel"], "gamma": -1.0}}, "bad kernel"),
    (lambda m: {**m, "params": {**m["params"], "tol": 0}}, "bad parameter: tol must be"),
    (lambda m: {**m, "params": {**m["params"], "colour": 1}}, "its content does not describe a valid IncrementalSVC .TypeError"),
    (lambda m: {k: v for k, v in m.items() if k != "next_id"}, "'meta' has no 'next_id'"),
    (lambda m: [m], "'meta' must be a JSON object; got list"),
])
def test_bad_meta_is_refused(saved, meta, reason):
    _, good, tmp = saved
    path = _rewrite(good, tmp / "bad.npz", edit_meta=meta)
    with pytest.raises(ValueError, match=f"is not a valid gpath model file: {reason}"):
        gpath.load(path)


def test_the_load_tolerance_is_tol_times_one_plus_the_scale(saved):
    # b shifted by δ moves every recomputed margin by δ: accepted below tol·(1 + max_i Σ_j |Q_ij| α_j),
    # refused above.
    model, good, tmp = saved
    limit = model.tol * (1 + _scale(model))
    assert gpath.load(good).check_kkt() <= model.tol  # check_kkt is relative to that scale
    inside = _rewrite(good, tmp / "inside.npz", edit_meta=lambda m: {**m, "b": [m["b"][0] + 0.5 * limit]})
    gpath.load(inside)
    outside = _rewrite(good, tmp / "outside.npz", edit_meta=lambda m: {**m, "b": [m["b"][0] + 2 * limit]})
    with pytest.raises(ValueError, match=r"alpha and b violate the KKT conditions by .* relative to the scale "
                                         r"1 \+ max_i sum_j \|Q_ij\| alpha_j = .*\(allowed: tol=1e-09\)"):
        gpath.load(outside)


@pytest.mark.parametrize("make,attr,value,reason", [
    (lambda: gpath.SimpleSVC(C=1.0, gamma=0.05), "alpha_", lambda a: a * 3, r"alpha_ must lie in \[0, C_i\]; got values in \[0, 3\] \(largest box 1\)"),
    (lambda: gpath.SimpleSVC(C=1.0, gamma=0.05), "support_vectors_", lambda a: a * np.nan, "holds NaN or inf"),
    (lambda: gpath.SimpleSVC(C=1.0, gamma=0.05), "support_", lambda a: a[:-1], "shape"),
    (lambda: gpath.RobustSVC(C=1.0, gamma=0.05), "path_.alpha", lambda a: a[:, :-1], "shape"),
    (lambda: gpath.RobustSVC(C=1.0, gamma=0.05), "_X", lambda a: a + np.inf, "holds NaN or inf"),
], ids=["SimpleSVC-alpha", "SimpleSVC-nan", "SimpleSVC-support", "RobustSVC-path", "RobustSVC-X"])
def test_tampered_fitted_attributes_are_refused(tmp_path, make, attr, value, reason):
    X, y = dataset("breast_cancer")
    path = tmp_path / "model.npz"
    make().fit(X[:150], y[:150]).save(path)
    key = f"attr:{attr}"
    bad = _rewrite(path, tmp_path / "bad.npz", **{key: value(_entries(path)[key])})
    with pytest.raises(ValueError, match=f"is not a valid gpath model file: .*{reason}"):
        gpath.load(bad)


def test_save_and_load_use_the_name_as_given(model_and_data, tmp_path, monkeypatch):
    model, X, _ = model_and_data
    monkeypatch.chdir(tmp_path)
    gpath.save(model, "model")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]
    _same(model, gpath.load("model"), X)
    model.save(tmp_path / "other.npz")
    _same(model, gpath.load(tmp_path / "other.npz"), X)
    assert "save" in gpath.__all__ and gpath.save is save


def test_a_parameter_that_is_not_json_is_a_type_error_and_writes_nothing(tmp_path):
    X, y = dataset("breast_cancer")
    model = gpath.SimpleSVC(gamma=0.05, random_state=np.random.RandomState(0)).fit(X[:100], y[:100])
    with pytest.raises(TypeError, match="parameters must be JSON values"):
        model.save(tmp_path / "model.npz")
    assert not (tmp_path / "model.npz").exists()


# ---------------------------------------------------------------- issue 20, part 2
def test_load_refuses_an_attribute_the_estimator_does_not_have(tmp_path):
    # A file must not set arbitrary attributes (a method's name, say) on the loaded model.
    X, y = dataset("breast_cancer")
    path = tmp_path / "model.npz"
    gpath.SimpleSVC(C=1.0, gamma=0.05).fit(X[:100], y[:100]).save(path)
    for name in ("predict", "evil_"):
        bad = _rewrite(path, tmp_path / "bad.npz", edit_meta=lambda m, name=name: {**m, "attributes": {**m["attributes"], name: 1}})
        with pytest.raises(ValueError, match=rf"unknown attributes \['{name}'\] for SimpleSVC"):
            gpath.load(bad)


@pytest.mark.parametrize("make", [lambda: gpath.IncrementalSVC(C=1.0, gamma=0.05),
                                  lambda: gpath.SimpleSVC(C=1.0, gamma=0.05),
                                  lambda: gpath.SVCPath(C_min=0.1, C_max=10.0, gamma=0.05)],
                         ids=["IncrementalSVC", "SimpleSVC", "SVCPath"])
def test_object_labels_keep_their_dtype_through_save_and_load(make, tmp_path):
    X, y = dataset("breast_cancer")
    labels = np.array(["benign", "malignant"], dtype=object)[y]
    model = make().fit(X[:150], labels[:150])
    model.save(tmp_path / "model.npz")
    loaded = gpath.load(tmp_path / "model.npz")
    assert model.classes_.dtype == object and loaded.classes_.dtype == object
    assert loaded.predict(X[150:160]).dtype == model.predict(X[150:160]).dtype
    np.testing.assert_array_equal(loaded.predict(X[150:]), model.predict(X[150:]))


def test_svc_path_saves_and_loads_with_its_whole_path(tmp_path):
    X, y = dataset("breast_cancer")
    strict = make_backend("array_api_strict")
    model = gpath.SVCPath(C_min=0.01, C_max=100.0, gamma=0.05).fit(X[:200], y[:200]).select(X[200:300], y[200:300])
    path = tmp_path / "path.npz"
    model.save(path)
    loaded = gpath.load(path)
    assert type(loaded) is gpath.SVCPath and loaded.get_params() == model.get_params()
    assert loaded.C_ == model.C_ and loaded.validation_error_.best_C == model.validation_error_.best_C
    np.testing.assert_array_equal(loaded.path_.alpha, model.path_.alpha)
    for C in (0.01, 0.37, model.C_, 100.0):
        np.testing.assert_array_equal(loaded.decision_function(X[300:], C), model.decision_function(X[300:], C))
    on_device = gpath.load(path, like=strict.asarray(np.zeros(1)))
    np.testing.assert_array_equal(to_host(on_device.decision_function(strict.asarray(X[300:]))),
                                  model.decision_function(X[300:]))
    # A path whose end no longer solves its problem is refused (the KKT check from scratch).
    key = "attr:path_.intercept"
    b = _entries(path)[key]
    bad = _rewrite(path, tmp_path / "bad.npz", **{key: b + np.r_[np.zeros(b.size - 1), 0.5]})
    with pytest.raises(ValueError, match=r"the path at C=100 violates the KKT conditions by .* recomputed from scratch"):
        gpath.load(bad)


def test_svc_path_cv_saves_and_loads_with_its_splitter_and_best_estimator(tmp_path):
    from sklearn.model_selection import StratifiedKFold

    from gpath.model_selection import SVCPathCV

    X, y = dataset("breast_cancer")
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    model = SVCPathCV(C_min=0.1, C_max=100.0, gammas=(0.01, 0.05), cv=cv).fit(X[:150], y[:150])
    model.save(tmp_path / "search.npz")
    loaded = gpath.load(tmp_path / "search.npz")
    assert type(loaded) is SVCPathCV and repr(loaded.get_params()) == repr(model.get_params())
    assert (loaded.best_C_, loaded.best_gamma_, loaded.best_score_) == (model.best_C_, model.best_gamma_,
                                                                        model.best_score_)
    np.testing.assert_array_equal(loaded.cv_error_paths_[1].error, model.cv_error_paths_[1].error)
    np.testing.assert_array_equal(loaded.decision_function(X[150:]), model.decision_function(X[150:]))
    loaded.best_estimator_.update(X_add=X[150:160], y_add=y[150:160], remove=[0])  # a model that updates
    assert loaded.best_estimator_.check_kkt() <= 1e-9
    # The refit model must be the one of the best point.
    bad = _rewrite(tmp_path / "search.npz", tmp_path / "bad.npz",
                   edit_meta=lambda m: {**m, "attributes": {**m["attributes"], "best_index_": 1 - model.best_index_}})
    with pytest.raises(ValueError, match="must be those of cv_error_paths_"):
        gpath.load(bad)
