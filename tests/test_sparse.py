"""Sparse input (issue 20, part 3): SimpleSVC and IncrementalSVC fit on SciPy sparse rows without
densifying them, equal to the exact reference and to the same model fitted on the dense rows,
publish SVC's sparse attributes, save and load; what cannot take sparse rows says so."""

from __future__ import annotations

import io

import numpy as np
import pytest
import scipy.sparse
import sklearn
from helpers import assert_exact, snapshot
from sklearn.datasets import load_digits

import gpath
from gpath import IncrementalSVC, SimpleSVC

ESTIMATORS = (SimpleSVC, IncrementalSVC)


def adult(n=400):
    """Adult census rows (one-hot codes and standardized numbers: 88 % zeros) as CSR."""
    from gpath.datasets import load_adult

    X, y = load_adult(n_samples=n)
    return scipy.sparse.csr_matrix(X), y


def digits():
    """Digits 0-4 (pixels / 16, half of them 0) as CSR: five classes."""
    X, y = load_digits(return_X_y=True)
    keep = y < 5
    return scipy.sparse.csr_matrix(X[keep][:300] / 16.0), y[keep][:300]


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("kernel,C", [("rbf", 1e-3), ("rbf", 1.0), ("rbf", 1e5), ("linear", 10.0), ("poly", 1.0)])
def test_a_fit_on_sparse_rows_equals_the_exact_reference(cls, kernel, C):
    X, y = adult()
    model = cls(kernel=kernel, C=C, gamma=0.05).fit(X, y)
    assert scipy.sparse.issparse(model.support_vectors_) and scipy.sparse.issparse(model.dual_coef_)
    # The reference solves the dense rows; check_kkt recomputes every margin from the sparse ones.
    if cls is SimpleSVC:
        assert model.check_kkt(X, y) <= 1e-9
    assert_exact(model, X.toarray(), y, X_device=X)


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly"])
def test_sparse_and_dense_rows_give_one_model(cls, kernel):
    X, y = digits()
    params = dict(kernel=kernel, C=3.0, gamma="scale", probability=True, random_state=0, decision_function_shape="ovo")
    dense = cls(**params).fit(X.toarray(), y)
    sparse = cls(**params).fit(X, y)
    assert sparse.kernel_.gamma == pytest.approx(dense.kernel_.gamma, rel=1e-12)  # "scale" from the sparse rows
    np.testing.assert_array_equal(sparse.support_, dense.support_)
    np.testing.assert_array_equal(sparse.support_vectors_.toarray(), dense.support_vectors_)
    scale = np.abs(dense.dual_coef_).max()
    np.testing.assert_allclose(sparse.dual_coef_.toarray(), dense.dual_coef_, rtol=0, atol=1e-9 * scale)
    for rows in (X, X.toarray()):  # a model fitted on sparse rows takes both
        np.testing.assert_allclose(sparse.decision_function(rows), dense.decision_function(X.toarray()), atol=1e-9)
        np.testing.assert_allclose(sparse.predict_proba(rows), dense.predict_proba(X.toarray()), atol=1e-9)
        np.testing.assert_array_equal(sparse.predict(rows), dense.predict(X.toarray()))
    assert (sparse.check_kkt(X, y) if cls is SimpleSVC else sparse.check_kkt()) <= 1e-9
    if kernel == "linear":
        assert scipy.sparse.issparse(sparse.coef_)
        np.testing.assert_allclose(sparse.coef_.toarray(), dense.coef_, atol=1e-9)
        np.testing.assert_allclose(X @ sparse.coef_.T.toarray() + sparse.intercept_,
                                   sparse.decision_function(X), atol=1e-9)


def test_unsorted_and_duplicate_entries_are_the_same_rows():
    X, y = adult(200)
    coo = X.tocoo()
    half = np.arange(coo.nnz) % 2 == 0  # every other entry stored as two halves
    rows = np.concatenate([coo.row, coo.row[half]])
    cols = np.concatenate([coo.col, coo.col[half]])
    vals = np.concatenate([np.where(half, coo.data / 2, coo.data), coo.data[half] / 2])
    order = np.lexsort((-cols, rows))  # by row, each row's columns in decreasing order
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=X.shape[0]))])
    messy = scipy.sparse.csr_matrix((vals[order], cols[order], indptr), shape=X.shape)
    assert not messy.has_sorted_indices and messy.nnz > X.nnz
    a = SimpleSVC(C=10.0).fit(X, y)
    b = SimpleSVC(C=10.0).fit(messy, y)
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_allclose(b.decision_function(X), a.decision_function(X), atol=1e-12)


def test_sparse_array_types_follow_scikit_learn():
    X, y = digits()
    model = SimpleSVC(kernel="linear").fit(scipy.sparse.lil_array(X), y)
    assert isinstance(model.support_vectors_, scipy.sparse.csr_matrix)  # scikit-learn's default interface
    with sklearn.config_context(sparse_interface="sparray"):
        model = SimpleSVC(kernel="linear").fit(X, y)
        assert isinstance(model.support_vectors_, scipy.sparse.csr_array)
        assert isinstance(model.dual_coef_, scipy.sparse.csr_array)
        assert isinstance(model.coef_, scipy.sparse.csr_array)


def test_a_callable_kernel_gets_the_sparse_rows():
    X, y = digits()
    seen = []

    def linear(A, B):
        seen.append(scipy.sparse.issparse(A))
        return A @ B.T  # sparse: densified by gpath

    model = SimpleSVC(kernel=linear, C=2.0).fit(X, y)
    assert all(seen)
    ref = SimpleSVC(kernel="linear", C=2.0).fit(X, y)
    np.testing.assert_allclose(model.decision_function(X), ref.decision_function(X), atol=1e-9)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_save_and_load_keep_the_sparse_model(cls):
    X, y = digits()
    model = cls(C=5.0, probability=True, random_state=0).fit(X, y)
    f = io.BytesIO()
    model.save(f)
    f.seek(0)
    loaded = gpath.load(f)
    assert scipy.sparse.issparse(loaded.support_vectors_) and scipy.sparse.issparse(loaded.dual_coef_)
    assert (loaded.support_vectors_ != model.support_vectors_).nnz == 0
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    if cls is IncrementalSVC:
        assert loaded.check_kkt() <= 1e-9
    f.seek(0)
    import array_api_strict as xp

    with pytest.raises(TypeError, match="loaded on the host"):
        gpath.load(f, like=xp.asarray([1.0]))


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_a_model_fitted_on_dense_rows_refuses_sparse_ones(cls):
    X, y = digits()
    model = cls().fit(X.toarray(), y)
    with pytest.raises(ValueError, match="cannot use sparse input in 'SVC' trained on dense data"):
        model.predict(X)


@pytest.mark.parametrize("classes", [2, 3, 10])
def test_an_incremental_model_of_sparse_rows_updates_by_exact_refits(classes):
    X, y = load_digits(return_X_y=True)
    X, y = X / 16.0, y % classes
    Xs = scipy.sparse.csr_matrix(X)
    model = IncrementalSVC(C=5.0, gamma=0.1, probability=True, random_state=0).fit(Xs[:400], y[:400])
    before = snapshot(model)
    with pytest.raises(ValueError, match="not in the model"):
        model.update(Xs[400:402], y[400:402], remove=[10**6])
    assert snapshot(model) == before
    model.update(Xs[400:450], y[400:450], remove=model.sample_ids_[:50])  # sparse rows
    model.partial_fit(X[450:460], y[450:460])  # dense rows
    model.update(remove=model.sample_ids_[:3])
    assert model.last_update_.method == "refit" and scipy.sparse.issparse(model.support_vectors_)
    assert model.check_kkt() <= 1e-9
    rows = np.arange(53, 460)
    fresh = IncrementalSVC(C=5.0, gamma=0.1).fit(X[rows], y[rows])  # the same points, in the same order
    np.testing.assert_array_equal(model.support_, fresh.support_)
    np.testing.assert_allclose(model.decision_function(Xs[:100]), fresh.decision_function(X[:100]), atol=1e-9)
    f = io.BytesIO()
    model.save(f)
    f.seek(0)
    np.testing.assert_array_equal(gpath.load(f).decision_function(Xs[:100]), model.decision_function(Xs[:100]))


def test_a_class_that_appears_in_an_update_of_sparse_rows():
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    first = np.flatnonzero(y[:300] < 3)
    model = IncrementalSVC(C=5.0, gamma=0.1).fit(scipy.sparse.csr_matrix(X[first]), y[first])
    model.update(scipy.sparse.csr_matrix(X[300:400]), y[300:400])
    rows = np.concatenate([first, np.arange(300, 400)])
    fresh = IncrementalSVC(C=5.0, gamma=0.1).fit(X[rows], y[rows])
    np.testing.assert_array_equal(model.classes_, np.arange(10))
    assert model.check_kkt() <= 1e-9
    np.testing.assert_allclose(model.decision_function(X[:50]), fresh.decision_function(X[:50]), atol=1e-9)


def test_sparse_rows_and_a_model_of_dense_rows():
    X, y = digits()
    dense = IncrementalSVC().fit(X[:200].toarray(), y[:200])
    before = snapshot(dense)
    with pytest.raises(TypeError, match="sparse"):
        dense.update(X[200:210], y[200:210])
    assert snapshot(dense) == before


@pytest.mark.parametrize("make,error,match", [
    (lambda X: scipy.sparse.csr_matrix(np.where(np.arange(X.shape[0])[:, None] == 3, np.nan, X.toarray())),
     ValueError, "must be finite"),
    (lambda X: X * 1e200, ValueError, "overflows float64"),
    (lambda X: X.astype(np.complex128), ValueError, "Complex"),
    (lambda X: X[:, :0], ValueError, r"0 feature\(s\)"),
    (lambda X: scipy.sparse.coo_array(X.toarray()[0]), ValueError, "must be 2-D"),
])
def test_bad_sparse_input(make, error, match):
    X, y = digits()
    with pytest.raises(error, match=match):
        SimpleSVC(kernel="rbf" if "overflow" not in match else "linear", gamma=1.0).fit(make(X), y)


def test_sparse_rows_that_would_not_fit_are_refused_before_anything(monkeypatch):
    X, y = digits()
    model = IncrementalSVC().fit(X, y)
    before = snapshot(model)
    monkeypatch.setattr("gpath._sparse.available_memory", lambda: 1e5)
    with pytest.raises(MemoryError, match=r"10 pair\(s\) of 1\d\d rows at most \(1200 in all\) need"):
        model.fit(X, y)
    assert snapshot(model) == before


def test_a_sparse_gram_matrix_and_other_estimators_are_refused():
    X, y = digits()
    with pytest.raises(TypeError, match="Sparse precomputed kernels are not supported"):
        SimpleSVC(kernel="precomputed").fit(scipy.sparse.csr_matrix(np.eye(4)), [0, 1, 0, 1])
    binary = y < 2
    for model in (gpath.SVCPath(), gpath.RobustSVC()):
        with pytest.raises(TypeError, match="sparse"):
            model.fit(X[binary], y[binary])


@pytest.mark.parametrize("cls,key", [(SimpleSVC, "attr:support_vectors_"), (IncrementalSVC, "X")])
def test_a_tampered_sparse_file_is_refused(cls, key, tmp_path):
    X, y = digits()
    path = tmp_path / "model.npz"
    cls(C=5.0).fit(X, y).save(path)
    with np.load(path) as data:
        entries = dict(data)
    for part, value in [("indptr", entries[f"{key}.indptr"][::-1].copy()),  # not a CSR structure
                        ("indices", entries[f"{key}.indices"] + X.shape[1]),  # columns past the features
                        ("data", np.where(np.arange(entries[f"{key}.data"].size) == 0, np.nan,
                                          entries[f"{key}.data"]))]:
        bad = tmp_path / f"bad_{part}.npz"
        with open(bad, "wb") as f:
            np.savez(f, **{**entries, f"{key}.{part}": value})
        with pytest.raises(ValueError, match="not a valid gpath model file"):
            gpath.load(bad)
    if cls is IncrementalSVC:  # other training values: the KKT check from scratch finds them
        bad = tmp_path / "bad_values.npz"
        with open(bad, "wb") as f:
            np.savez(f, **{**entries, "X.data": entries["X.data"] * 1.5})
        with pytest.raises(ValueError, match="KKT"):
            gpath.load(bad)


def test_rows_far_from_the_origin_take_their_distances_from_the_differences():
    from gpath.kernels import Kernel

    X, y = digits()
    far = X * 1e5  # gamma (|x|^2 + |z|^2) ~ 1e4: the expansion alone would lose ~1e-11 in exp
    kernel = Kernel("rbf", 1e-7)
    dense = kernel(far.toarray(), far.toarray())  # the dense kernel takes the differences here
    for K in (kernel(far, far), kernel(far[:7].toarray(), far), kernel(far, far[:7])):
        np.testing.assert_allclose(K, dense[: K.shape[0], : K.shape[1]], rtol=1e-12, atol=1e-300)
    K = kernel(far, far)
    assert np.array_equal(K, K.T)
    model = SimpleSVC(C=10.0, gamma=0.05).fit(X, y)  # a far row to predict: no error, the dense model's value
    dense_model = SimpleSVC(C=10.0, gamma=0.05).fit(X.toarray(), y)
    np.testing.assert_allclose(model.decision_function(X[:1] * 100), dense_model.decision_function(X[:1].toarray() * 100),
                               atol=1e-12)


def test_gamma_scale_of_sparse_rows_equals_the_dense_variance():
    rng = np.random.default_rng(0)
    X = scipy.sparse.random(200, 30, density=0.3, random_state=0, format="csr")
    X.data = 1e4 + rng.normal(size=X.nnz)  # far from 0: a one-pass variance would lose digits
    y = np.arange(200) % 2
    sparse = SimpleSVC(kernel="poly", gamma="scale").fit(X, y).kernel_.gamma
    assert sparse == pytest.approx(1.0 / (30 * X.toarray().var()), rel=1e-12)


def test_a_callable_kernels_block_on_sparse_rows_is_checked():
    X, y = digits()
    for function, error, match in [(lambda A, B: (A @ B.T).toarray() * (1 + 1j), TypeError, "real numbers"),
                                   (lambda A, B: (A @ B.T).toarray().tolist(), TypeError, "must return an array"),
                                   (lambda A, B: (A @ B.T).toarray() * np.nan, ValueError, "not finite")]:
        with pytest.raises(error, match=match):
            SimpleSVC(kernel=function).fit(X, y)


def test_a_sparse_coef_is_of_the_support_vectors_type():
    X, y = digits()
    with sklearn.config_context(sparse_interface="sparray"):
        model = SimpleSVC(kernel="linear").fit(X, y)
    assert isinstance(model.coef_, scipy.sparse.csr_array)  # read under the default config


def test_sparse_updates_are_refused_beyond_memory_and_say_refit(monkeypatch):
    X, y = load_digits(return_X_y=True)
    Xs = scipy.sparse.csr_matrix(X / 16.0)
    model = IncrementalSVC(C=5.0, gamma=0.1).fit(Xs[:200], y[:200] % 3)
    before = snapshot(model)
    monkeypatch.setattr("gpath._sparse.available_memory", lambda: 2e6)
    with pytest.raises(MemoryError, match="pair"):
        model.update(Xs[200:1500], y[200:1500] % 3)
    assert snapshot(model) == before
    monkeypatch.undo()
    model.update(remove=model.sample_ids_[y[:200] % 3 == 2])  # a class leaves: its pairs dropped
    assert model.last_update_.method == "refit" and model.classes_.tolist() == [0, 1]
    assert model.check_kkt() <= 1e-9


def test_partial_fit_starts_a_sparse_stream():
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    Xs = scipy.sparse.csr_matrix(X)
    model = IncrementalSVC(C=5.0, gamma=0.1)
    model.partial_fit(Xs[y == 0][:20], y[y == 0][:20], classes=[0, 1])  # one class: kept, not fitted
    model.partial_fit(X[y == 1][:20], y[y == 1][:20])  # dense rows join the sparse ones
    model.partial_fit(Xs[y == 1][20:30], y[y == 1][20:30])
    rows = np.concatenate([np.flatnonzero(y == 0)[:20], np.flatnonzero(y == 1)[:30]])
    fresh = IncrementalSVC(C=5.0, gamma=0.1).fit(X[rows], y[rows])
    assert scipy.sparse.issparse(model.support_vectors_) and model.check_kkt() <= 1e-9
    np.testing.assert_allclose(model.decision_function(Xs[:40]), fresh.decision_function(X[:40]), atol=1e-9)


def test_a_callable_may_return_a_matrix_on_sparse_rows():
    X, y = digits()
    model = SimpleSVC(kernel=lambda A, B: (A @ B.T).todense(), C=2.0).fit(X, y)
    ref = SimpleSVC(kernel="linear", C=2.0).fit(X, y)
    np.testing.assert_allclose(model.decision_function(X), ref.decision_function(X), atol=1e-9)


def test_a_model_of_sparse_rows_lives_on_the_host():
    import array_api_strict as xp

    X, y = digits()
    model = SimpleSVC().fit(X, y)
    with pytest.raises(TypeError, match="namespace"):
        model.predict(xp.asarray(X.toarray()[:5], device=xp.Device("device1")))
