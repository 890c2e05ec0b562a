"""Sparse input: SciPy's sparse rows (text features, one-hot codes) without densifying X.

What :class:`gpath.SimpleSVC` and :class:`gpath.IncrementalSVC` do with a sparse X, as
scikit-learn's ``SVC``:

- ``fit`` computes each pair of classes' kernel values from the pair's sparse rows
  (:func:`kernel_block`: sparse products X Xᵀ, and each row's squared norm for the RBF
  kernel, ``‖x − z‖² = ‖x‖² + ‖z‖² − 2⟨x, z⟩``) into the pair's Gram matrix G, and trains on
  the rows of the precomputed kernel ``[G | index]`` (:func:`gpath.kernels.with_index`):
  every trainer (SMO's start, the exact finish, Platt's folds) runs unchanged on them. X itself
  is never densified; a pair of n_p points holds 8 n_p² bytes (LIBSVM computes kernel columns
  on demand instead), and a fit that would not fit in memory is refused before anything is
  computed (:func:`check_memory`).
- The model publishes what ``SVC`` publishes for sparse input: ``support_vectors_``,
  ``dual_coef_`` and (linear kernel) ``coef_`` as SciPy CSR matrices (``csr_matrix``, or
  ``csr_array`` under scikit-learn's ``sparse_interface="sparray"``).
- Predictions and ``check_kkt`` take the kernel values of rows (sparse, or dense for a model
  fitted on sparse rows) against the sparse support vectors (:func:`kernel_block`).
- A model fitted on dense X refuses sparse rows, as ``SVC`` does. An ``IncrementalSVC`` fitted
  on sparse X updates by refitting each changed pair on its new Gram rows, warm-started from
  its solution (the MID path moves feature rows, which it does not hold).

Everything here is host NumPy/SciPy: sparse input lives on the host.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse
from numba import njit

from ._threads import in_row_blocks
from .linalg import available_memory

__all__ = ["as_published", "check_memory", "check_sparse", "dense", "diagonal", "gram_rows", "is_sparse",
           "kernel_block", "pair_training_rows", "take_rows", "training_kernel", "variance"]

# Values of a block of rows made dense (:func:`_inner_products`, and the RBF pass over K).
_BLOCK = 2**18
# Rows with at least this share of non-zeros are multiplied as dense blocks (BLAS) of at
# least _MIN_DENSE_ROWS rows, where such a block holds at most _MAX_DENSE_VALUES values.
# Gram of 2,000 random rows, dense blocks / sparse product (s): 107 features at 12 % (as Adult)
# 0.03 / 0.06; 2,000 at 10 % 0.27 / 0.20 (about even); 5,000 at 30 % 1.0 / 1.9; 4,097 at
# 50 % 0.9 / 4.2; 20,000 at 5 %: 1.6 / 0.5.
_DENSE_ENOUGH = 0.1
_MIN_DENSE_ROWS = 64
_MAX_DENSE_VALUES = 2**23
# Columns of K per sparse product of sparser rows.
_SPARSE_COLUMNS = 512
# A sparse fit's kernel rows and their transient copies may take at most this share of the
# available host memory.
_MEMORY_SHARE = 0.5


def is_sparse(X) -> bool:
    """Whether X is a SciPy sparse matrix or array."""
    return scipy.sparse.issparse(X)


def check_sparse(X, name: str = "X"):
    """Sparse X as a new float64 CSR matrix in canonical form (sorted indices, no duplicate
    entries; the caller's X is never changed).

    Parameters
    ----------
    X : SciPy sparse matrix or array of shape (n_samples, n_features), any format, 2-D
        (:func:`gpath._validation.check_X` checks its shape)
    name : str
        The argument's name, for the messages.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features), float64

    Raises
    ------
    ValueError
        X complex, or with NaN or inf among its stored values.
    TypeError
        X not numeric.
    """
    if X.dtype.kind == "c":
        raise ValueError(f"{name} must hold real numbers: Complex data not supported (dtype {X.dtype})")
    if X.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers; got dtype {X.dtype}")
    X = scipy.sparse.csr_matrix(X, dtype=np.float64, copy=True)
    X.sum_duplicates()  # also sorts the indices: the products below then add in one order
    if not np.all(np.isfinite(X.data)):
        raise ValueError(f"{name} must be finite; got NaN or inf")
    return X


def variance(X) -> float:
    """The variance of all n·d entries of sparse X (zeros included), in two passes as
    NumPy's ``X.var()`` of the dense X: ``gamma="scale"`` the same for both."""
    size = X.shape[0] * X.shape[1]
    mean = X.data.sum() / size
    centred = X.data - mean
    return float((centred @ centred + (size - X.nnz) * mean * mean) / size)


def _row_norms(X) -> np.ndarray:
    """‖x_i‖² of every row of sparse or dense host X, shape (n,)."""
    if is_sparse(X):
        return np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
    return np.einsum("ij,ij->i", X, X)


def kernel_block(kernel, X1, X2, out=None) -> np.ndarray:
    """The kernel block K(X1, X2) of host rows of which one or both are sparse.

    RBF: ``‖x − z‖²`` from the expansion ``‖x‖² + ‖z‖² − 2⟨x, z⟩`` (sparse rows cannot be
    centred without densifying them), except for rows so far from the origin that its
    round-off would pass 1e-11 in exp(−γ‖x − z‖²) (the dense kernels' limit,
    :data:`gpath.kernels.EXPANSION_LIMIT`): theirs come from the differences themselves.

    Parameters
    ----------
    kernel : Kernel
        Of kind "linear", "rbf", "poly" or "callable" (a callable gets the rows as they are;
        a sparse block it returns is made dense).
    X1 : sparse matrix or ndarray of shape (n1, d), float64
    X2 : sparse matrix or ndarray of shape (n2, d), float64
    out : ndarray of shape (n1, n2), float64, or None
        Where to write the block (a view will do).

    Returns
    -------
    K : ndarray of shape (n1, n2), float64

    Raises
    ------
    ValueError
        The values are not finite (features too large for the kernel, or a callable's NaN).
    TypeError
        A callable kernel's block of another shape, or not real numbers.
    """
    if kernel.function is not None:
        if X1.shape[0] == 0 or X2.shape[0] == 0:  # (not asked of the function: Kernel._call_function)
            K = np.zeros((X1.shape[0], X2.shape[0]))
        else:
            K = kernel.function(X1, X2)
            # A sparse block (X @ Z.T of sparse rows) or its np.matrix (.todense()) as an array.
            K = kernel.checked_block(K.toarray() if is_sparse(K) else np.asarray(K) if isinstance(K, np.matrix)
                                     else K, X1, X2)
        if out is None:
            return K
        out[...] = K
        return out
    K = _inner_products(X1, X2, out)
    if kernel.kind == "rbf":
        _rbf_in_place(K, X1, X2, kernel.gamma)
    elif kernel.kind in ("poly", "sigmoid"):
        K *= kernel.gamma
        K += kernel.coef0
        if kernel.kind == "poly":
            K **= kernel.degree
        else:
            np.tanh(K, out=K)
    if not np.all(np.isfinite(K)):
        raise ValueError(f"the {kernel.kind} kernel's values on the sparse rows are not finite (NaN or inf): "
                         f"scale the features" + (" or lower gamma or the degree" if kernel.kind == "poly" else ""))
    if kernel.offset:
        K += kernel.offset
    return K


def _rbf_in_place(K, X1, X2, gamma: float) -> None:
    """K (holding X1 X2ᵀ) -> exp(−γ‖x − z‖²) in place."""
    from .kernels import EXPANSION_LIMIT

    n1, n2 = _row_norms(X1), _row_norms(X2)
    K *= -2.0
    step = max(1, _BLOCK // max(1, K.shape[1]))
    for a in range(0, K.shape[0], step):  # ‖x‖² + ‖z‖² first: K_ij and K_ji add alike
        K[a : a + step] += n1[a : a + step, None] + n2[None, :]
    # γ(‖x‖² + ‖z‖²) > limit needs one of the two norms above half of it: those rows and
    # columns from the differences.
    far = EXPANSION_LIMIT / (2.0 * gamma)
    far1, far2 = np.flatnonzero(n1 > far), np.flatnonzero(n2 > far)
    if far1.size:
        K[far1, :] = _distances_from_differences(X1[far1], X2)
    if far2.size:
        K[:, far2] = K[far2, :].T if X1 is X2 else _distances_from_differences(X2[far2], X1).T
    np.maximum(K, 0.0, out=K)
    K *= -gamma
    np.exp(K, out=K)


def _distances_from_differences(A, B) -> np.ndarray:
    """‖a − b‖² for the (few) rows a of A against every row of B, from the differences
    ``B − 1 aᵀ`` as a sparse matrix (its non-zeros: B's and a's columns in each row, never
    B dense): (n_A, n_B)."""
    A = scipy.sparse.csr_matrix(A)
    B = scipy.sparse.csr_matrix(B)
    ones = scipy.sparse.csr_matrix(np.ones((B.shape[0], 1)))
    out = np.empty((A.shape[0], B.shape[0]))
    for i in range(A.shape[0]):
        diff = B - ones @ A[i]
        out[i] = np.asarray(diff.multiply(diff).sum(axis=1)).ravel()
    return out


def _inner_products(X1, X2, out=None) -> np.ndarray:
    """X1 X2ᵀ as a dense (n1, n2) array (into ``out`` where given), by blocks of rows: never
    the whole of X1 or X2 dense. Rows with many non-zeros (density ≥ ``_DENSE_ENOUGH``, and
    not too many features) go as dense blocks through BLAS (the product of one-hot codes and
    numbers, Adult's 12 %, runs ~10× faster so than through SciPy's sparse product); sparser
    rows through SciPy's sparse product of one block of X2's rows at a time. For X1 is X2 (a
    Gram matrix) only the blocks on and below the diagonal are computed and the upper
    triangle mirrors the lower: K is symmetric bit for bit."""
    n1, n2 = X1.shape[0], X2.shape[0]
    K = np.empty((n1, n2)) if out is None else out
    d = X1.shape[1]
    gram = X1 is X2
    step = max(_MIN_DENSE_ROWS, _BLOCK // max(1, d))
    dense_blocks = step * d <= _MAX_DENSE_VALUES and all(
        not is_sparse(A) or A.nnz >= _DENSE_ENOUGH * A.shape[0] * d for A in (X1, X2))
    if not dense_blocks:
        step = _SPARSE_COLUMNS
    for a in range(0, n2, step):
        b = min(a + step, n2)
        first = a if gram else 0  # a Gram matrix: its blocks on and below the diagonal
        if dense_blocks:
            Z = dense(X2[a:b])
            for r in range(first, n1, step):
                K[r : r + step, a:b] = dense(X1[r : r + step]) @ Z.T
        else:
            K[first:, a:b] = dense(X1[first:] @ X2[a:b].T)
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
    """k(x_i, x_i) of every row of sparse X, shape (n,), for a built-in ``kernel``."""
    if kernel.kind == "rbf":
        return np.full(X.shape[0], 1.0 + kernel.offset)
    return kernel._of_inner(np, _row_norms(X))


def gram_rows(kernel, X) -> np.ndarray:
    """The rows of sparse X as the trainers take them: ``[K(X, X) | 0..n−1]``
    (:func:`gpath.kernels.with_index`), K symmetric to the last bit; (n, n + 1) float64."""
    n = X.shape[0]
    rows = np.empty((n, n + 1))
    rows[:, n] = np.arange(n)
    kernel_block(kernel, X, X, out=rows[:, :n])
    return rows


def check_memory(pair_sizes, probability: bool, owner: str) -> None:
    """Refuse a sparse fit whose kernel rows would not fit in memory, before anything is
    computed: every pair's rows (8 n_p (n_p + 1) bytes, all held until the fit ends), the
    largest pair's float32 matrix of SMO's start and its shrunk copy (8 n_p²), and with
    ``probability`` Platt's folds (their rows, the gather of SMO's start from them, the
    cross-validated fits: 56 n_p² for the largest pair, and twice every pair's rows again),
    at most half the available memory. The peaks measured on digits (n = 1,797; 2, 3 and 10
    classes, with and without probabilities, both estimators) are 0.6–1.25 of this estimate.

    Raises
    ------
    MemoryError
        Naming the points, the bytes and what to do.
    """
    sizes = np.asarray(pair_sizes, dtype=np.float64)
    largest = float(sizes.max(initial=0.0))
    needed = (24.0 if probability else 8.0) * float(sizes @ (sizes + 1.0)) + (56.0 if probability else 8.0) * largest**2
    available = available_memory()
    if available is not None and needed > _MEMORY_SHARE * available:
        raise MemoryError(f"{owner} trains on sparse X through the kernel matrix of each pair of classes: "
                          f"{sizes.size} pair(s) of {int(largest)} rows at most ({int(sizes.sum())} in all) need "
                          f"{needed / 2**30:.2f} GiB, more than half of the {available / 2**30:.2f} GiB available; "
                          f"fit on a subsample, or on X.toarray() if its n × n_features floats fit")


def training_kernel(kernel, X):
    """The kernel the trainers use on X's training rows: for sparse X the precomputed
    kernel that reads its Gram rows (:func:`pair_training_rows`), else ``kernel``."""
    if not is_sparse(X):
        return kernel
    from .kernels import PRECOMPUTED, Kernel

    return Kernel(PRECOMPUTED)


def pair_training_rows(X, rows, kernel, xp, device):
    """The training rows of one pair of classes as the trainers take them.

    Parameters
    ----------
    X : array of shape (n, d) (namespace ``xp`` on ``device``), or a sparse matrix
        The model's training rows.
    rows : host int ndarray, or None
        The pair's rows among them (None: all).
    kernel : Kernel
        The model's kernel (used for sparse X).

    Returns
    -------
    Dense X: X's rows ``rows``. Sparse X: the pair's own Gram rows (:func:`gram_rows`), their
    indices the pair's own.
    """
    if is_sparse(X):
        return gram_rows(kernel, X if rows is None else X[rows])
    return X if rows is None else take_rows(X, rows, xp, device)


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


def as_published(A, like=None):
    """2-D A (dense or sparse) as the sparse type scikit-learn's ``SVC`` publishes for sparse
    input: CSR, of the type of ``like`` where given (a model's ``support_vectors_``), else
    ``csr_array`` under scikit-learn's ``sparse_interface="sparray"`` and ``csr_matrix``
    otherwise."""
    if like is not None:
        sparray = isinstance(like, scipy.sparse.sparray)
    else:
        import sklearn

        sparray = sklearn.get_config().get("sparse_interface") == "sparray"
    return (scipy.sparse.csr_array if sparray else scipy.sparse.csr_matrix)(A)
