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
    with pytest.raises(ValueError, match="not a gpath model file"):
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
    np.testing.assert_array_equal(loaded.decision_function(X[200:]), model.decision_function(X[200:]))
    if hasattr(model, "path_"):
        np.testing.assert_array_equal(loaded.path_.alpha, model.path_.alpha)
        assert loaded.path_.kind == model.path_.kind
        loaded.select(X[200:300], y[200:300])  # still usable along the whole path
    on_device = gpath.load(path, like=strict.asarray(np.zeros(1)))
    np.testing.assert_array_equal(to_host(on_device.decision_function(strict.asarray(X[200:]))),
                                  model.decision_function(X[200:]))
