"""Sparse input: SciPy's sparse rows (text features, one-hot codes) without densifying X.

What :class:`gpath.SimpleSVC` and :class:`gpath.IncrementalSVC` do with a sparse X, as
scikit-learn's ``SVC``:

- ``fit`` computes the kernel values of the training rows from the sparse rows themselves
  (one sparse product X Xᵀ, and each row's squared norm for the RBF kernel,
  ``‖x − z‖² = ‖x‖² + ‖z‖² − 2⟨x, z⟩``) into the n × n Gram matrix G, and trains on the rows
  of the precomputed kernel ``[G | index]`` (:func:`gpath.kernels.with_index`): every trainer
  (pairs, Platt's folds, SMO's start, the exact finish) runs unchanged on it. X itself is
  never densified; G takes 8 n² bytes (LIBSVM computes kernel columns on demand instead), and
  a fit whose G would not fit in memory is refused before anything is computed.
- The model publishes what ``SVC`` publishes for sparse input: ``support_vectors_``,
  ``dual_coef_`` and (linear kernel) ``coef_`` as SciPy CSR matrices (``csr_matrix``, or
  ``csr_array`` under scikit-learn's ``sparse_interface="sparray"``).
- Predictions and ``check_kkt`` take the kernel values of rows (sparse, or dense for a model
  fitted on sparse rows) against the sparse support vectors (:func:`kernel_block`).
- A model fitted on dense X refuses sparse rows, as ``SVC`` does; a model fitted on sparse X
  cannot be updated (its training rows are Gram rows of a fixed n).

Everything here is host NumPy/SciPy: sparse input lives on the host.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse
from numba import njit

from ._threads import in_row_blocks
from .linalg import available_memory

__all__ = ["as_published", "check_sparse", "dense", "diagonal", "gram_rows", "is_sparse", "kernel_block",
           "take_rows", "training_rows", "variance"]

# Values of a block of rows made dense (:func:`_inner_products`, and the RBF pass over K).
_BLOCK = 2**18
# Rows with at least this share of non-zeros are multiplied as dense blocks (BLAS).
_DENSE_ENOUGH = 0.05
# Columns of K per sparse product of sparser rows.
_SPARSE_COLUMNS = 512
# The Gram rows may take at most this share of the available host memory.
_MEMORY_SHARE = 0.5


def is_sparse(X) -> bool:
    """Whether X is a SciPy sparse matrix or array."""
    return scipy.sparse.issparse(X)


def check_sparse(X, name: str = "X", n_features: int | None = None, owner: str | None = None):
    """A sparse X as a float64 CSR matrix with sorted indices (a new one: the caller's X is
    never changed).

    Raises
    ------
    ValueError
        X complex, without rows or columns, of the wrong number of columns, or with NaN or
        inf among its stored values.
    TypeError
        X not numeric.
    """
    if X.dtype.kind == "c":
        raise ValueError(f"{name} must hold real numbers: Complex data not supported (dtype {X.dtype})")
    if X.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers; got dtype {X.dtype}")
    for axis, what in ((0, "sample"), (1, "feature")):
        if X.shape[axis] == 0:
            raise ValueError(f"{name} has 0 {what}(s) (shape={tuple(X.shape)}) while a minimum of 1 is required.")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"{name} has {X.shape[1]} features, but {owner or 'the model'} is expecting "
                         f"{n_features} features as input.")
    X = scipy.sparse.csr_matrix(X, dtype=np.float64, copy=True)
    X.sum_duplicates()  # also sorts the indices: the products below then add in one order
    if not np.all(np.isfinite(X.data)):
        raise ValueError(f"{name} must be finite; got NaN or inf")
    return X


def variance(X) -> float:
    """The variance of all n·d entries of sparse X (zeros included): scikit-learn's
    ``X.var()`` for ``gamma="scale"``."""
    n = X.shape[0] * X.shape[1]
    mean = X.data.sum() / n
    return float((X.data @ X.data) / n - mean * mean)


def _row_norms(X) -> np.ndarray:
    """‖x_i‖² of every row of sparse or dense host X, shape (n,)."""
    if is_sparse(X):
        return np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
    return np.einsum("ij,ij->i", X, X)


def kernel_block(kernel, X1, X2, out=None) -> np.ndarray:
    """K(X1, X2) of shape (n1, n2), float64 NumPy, for host rows of which one or both are
    sparse (``kernel`` a :class:`gpath.kernels.Kernel` of kind "linear", "rbf", "poly" or
    "callable"; a callable gets the rows as they are, and a sparse block it returns is
    densified). ``out``: where to write it (an (n1, n2) float64 array or view)."""
    if kernel.function is not None:
        K = kernel.function(X1, X2)
        K = K.toarray() if is_sparse(K) else np.asarray(K)
        if K.shape != (X1.shape[0], X2.shape[0]):
            raise TypeError(f"kernel {getattr(kernel.function, '__name__', 'function')}(X, Z) must return an array "
                            f"of shape {(X1.shape[0], X2.shape[0])}; got shape {K.shape}")
        if out is None:
            out = np.empty(K.shape)
        out[...] = K
        K = out
    else:
        K = _inner_products(X1, X2, out)
        if kernel.kind == "rbf":
            from .kernels import EXPANSION_LIMIT  # the dense kernels' limit (1e-11 in exp(−γ d²))

            n1, n2 = _row_norms(X1), _row_norms(X2)
            reach = kernel.gamma * (np.max(n1, initial=0.0) + np.max(n2, initial=0.0))
            if reach > EXPANSION_LIMIT:
                # Sparse rows cannot be centred (the dense kernels' remedy) without densifying.
                raise ValueError(f"the rbf kernel on these sparse rows would lose precision: gamma (|x|^2 + |z|^2) = "
                                 f"{reach:.3g} > {EXPANSION_LIMIT:.3g}, so exp(-gamma |x - z|^2) from the expansion "
                                 f"|x|^2 + |z|^2 - 2 <x, z> would err by more than 1e-11; scale the rows (e.g. "
                                 f"MaxAbsScaler or Normalizer, which keep them sparse), lower gamma, or pass "
                                 f"X.toarray()")
            K *= -2.0
            step = max(1, _BLOCK // max(1, K.shape[1]))
            for a in range(0, K.shape[0], step):  # ‖x‖² + ‖z‖² first: K_ij and K_ji add alike
                K[a : a + step] += n1[a : a + step, None] + n2[None, :]
            np.maximum(K, 0.0, out=K)
            K *= -kernel.gamma
            np.exp(K, out=K)
        elif kernel.kind == "poly":
            K *= kernel.gamma
            K += kernel.coef0
            K **= kernel.degree
    if not np.all(np.isfinite(K)):
        raise ValueError(f"the {kernel.kind} kernel's values on the sparse rows are not finite (NaN or inf): "
                         f"scale the features" + (" or lower gamma or the degree" if kernel.kind == "poly" else ""))
    if kernel.offset:
        K += kernel.offset
    return K


def _inner_products(X1, X2, out=None) -> np.ndarray:
    """X1 X2ᵀ as a dense (n1, n2) array (into ``out`` where given), by blocks of rows: never
    the whole of X1 or X2 dense. Rows with many non-zeros (density ≥ ``_DENSE_ENOUGH``) go as
    dense blocks through BLAS (the product of one-hot codes and numbers, Adult's 12 %, runs
    ~10× faster so than through SciPy's sparse product); sparser rows (text) through SciPy's
    sparse product of one block of X2's rows at a time. For X1 is X2 (a Gram matrix) only
    the blocks on and below the diagonal are computed and the upper triangle mirrors the
    lower: K is symmetric bit for bit."""
    n1, n2 = X1.shape[0], X2.shape[0]
    K = np.empty((n1, n2)) if out is None else out
    d = X1.shape[1]
    gram = X1 is X2
    dense_blocks = all(not is_sparse(A) or A.nnz >= _DENSE_ENOUGH * A.shape[0] * d for A in (X1, X2))
    step = max(1, min(n2, _BLOCK // max(1, d))) if dense_blocks else _SPARSE_COLUMNS
    for a in range(0, n2, step):
        b = min(a + step, n2)
        first = a if gram else 0  # a Gram matrix: its blocks on and below the diagonal
        if dense_blocks:
            Z = dense(X2[a:b])
            for r in range(first, n1, step):
                K[r : r + step, a:b] = dense(X1[r : r + step]) @ Z.T
        else:
            block = X1[first:] @ X2[a:b].T
            K[first:, a:b] = dense(block)
    if gram:  # the upper triangle mirrors the lower (BLAS's A Aᵀ need not be symmetric)
        in_row_blocks(_mirror_lower, n1, K)
    return K


@njit(nogil=True, cache=True)
def _mirror_lower(start, stop, K):  # pragma: no cover - compiled
    """Rows ``start:stop`` of K's strict upper triangle from its lower one, K_ij = K_ji, in
    tiles (a row of the upper triangle is a column of the lower)."""
    n = K.shape[0]
    tile = 64
    for i0 in range(start, stop, tile):
        i1 = min(i0 + tile, stop)
        for j0 in range(i0, n, tile):
            j1 = min(j0 + tile, n)
            for i in range(i0, i1):
                for j in range(max(j0, i + 1), j1):
                    K[i, j] = K[j, i]


def diagonal(kernel, X) -> np.ndarray:
    """k(x_i, x_i) of every row of sparse X, shape (n,)."""
    if kernel.function is not None:
        return np.array([kernel_block(kernel, X[i], X[i])[0, 0] for i in range(X.shape[0])])
    if kernel.kind == "rbf":
        return np.full(X.shape[0], 1.0 + kernel.offset)
    sq = _row_norms(X)
    k = sq if kernel.kind == "linear" else (kernel.gamma * sq + kernel.coef0) ** kernel.degree
    return k + kernel.offset


def gram_rows(kernel, X, owner: str) -> np.ndarray:
    """The training rows of sparse X as the trainers take them: ``[K(X, X) | index]``
    (:func:`gpath.kernels.with_index`), K symmetric to the last bit.

    Raises
    ------
    MemoryError
        G would take more than half the available host memory (the message gives n, the
        bytes and what to do); nothing is computed.
    ValueError
        The kernel's values are not finite.
    """
    n = X.shape[0]
    needed = 8.0 * n * (n + 1)
    available = available_memory()
    if available is not None and needed > _MEMORY_SHARE * available:
        raise MemoryError(f"{owner} trains on sparse X through its n × n kernel matrix: n = {n} needs "
                          f"{needed / 2**30:.2f} GiB, more than half of the {available / 2**30:.2f} GiB available; "
                          f"fit on a subsample, or on X.toarray() if its n × n_features floats fit")
    rows = np.empty((n, n + 1))
    rows[:, n] = np.arange(n)
    kernel_block(kernel, X, X, out=rows[:, :n])
    return rows


def training_rows(X, kernel, owner: str):
    """``(X_fit, rows, train_kernel)``: the rows the model publishes (support vectors) and the
    rows and kernel the trainers take. Dense X: X, X and ``kernel``; sparse X: X, its Gram rows
    (:func:`gram_rows`) and the precomputed kernel that reads them."""
    if not is_sparse(X):
        return X, X, kernel
    from .kernels import PRECOMPUTED, Kernel

    return X, gram_rows(kernel, X, owner), Kernel(PRECOMPUTED)


def take_rows(A, rows, xp, device):
    """Rows ``rows`` (host ints) of A, sparse (a CSR matrix) or an array of ``xp`` on
    ``device``."""
    if is_sparse(A):
        return A[np.asarray(rows, dtype=np.int64)]
    from ._array_api import to_device

    return xp.take(A, to_device(np.asarray(rows, dtype=np.int64), xp, device), axis=0)


def dense(A):
    """A as a dense array (``A.toarray()`` if sparse, else A)."""
    return A.toarray() if is_sparse(A) else A


def as_published(A):
    """Host 2-D A as the sparse type scikit-learn's ``SVC`` publishes for sparse input: CSR,
    ``csr_array`` under scikit-learn's ``sparse_interface="sparray"``, else ``csr_matrix``."""
    import sklearn

    csr = scipy.sparse.csr_array if sklearn.get_config().get("sparse_interface") == "sparray" else scipy.sparse.csr_matrix
    return csr(A)
