"""Kernel functions and columns of Q in the caller's array namespace.

Parameter names and meanings follow scikit-learn's ``SVC``: ``kernel`` (a name, in any case,
or a callable), ``gamma`` (a float, ``"scale"`` = 1 / (n_features · X.var()) or ``"auto"`` =
1 / n_features), ``degree`` and ``coef0``.

The kernels of the C-SVCs (:class:`gpath.SimpleSVC`, :class:`gpath.IncrementalSVC`; the other
estimators refuse them):

``kernel="sigmoid"``, tanh(gamma ⟨x, z⟩ + coef0) as scikit-learn's, is not positive
semi-definite: the dual is not convex, and a model of it is a KKT point of that dual (a local
solution, as LIBSVM's, exact to round-off; another solver, or another start, may reach
another). |K| ≤ 1 bounds the scale of y f as for RBF.

``kernel="precomputed"`` reads the kernel values from the user's Gram matrix. The
estimator stores each training row as its row of the Gram matrix G followed by its own index,
``[G[i, :] | i]``, and a row to predict as ``[K(x, x_1..x_n) | −1]``: then K(row, row') is
``row[index of row']``, every block and column of Q is a lookup, and the trainers' row subsets
(pairs, folds) need nothing else (:func:`with_index`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from numbers import Real

import numpy as np

from . import _sparse
from ._array_api import get_namespace_and_device, is_array_api, scalars, to_device, to_host
from ._sparse import is_sparse

__all__ = ["KERNELS", "PRECOMPUTED", "Kernel", "check_saveable", "kernel_products", "q_columns", "with_index"]

KERNELS = ("linear", "rbf", "poly", "sigmoid")
# The names only the C-SVCs take (module docstring).
SVC_ONLY = ("sigmoid", "precomputed")
PRECOMPUTED = "precomputed"
# Rows per block when a callable kernel's values k(x_i, z_i) are taken from the diagonals of
# small blocks (a callable only gives whole blocks).
_PAIRED_BLOCK = 64


@dataclass(frozen=True)
class Kernel:
    """A resolved kernel: ``kind`` with a numeric ``gamma``, or a callable.

    Parameters
    ----------
    kind : {"linear", "rbf", "poly", "sigmoid", "callable", "precomputed"}
        ``linear``: ⟨x, z⟩; ``rbf``: exp(−gamma ‖x − z‖²);
        ``poly``: (gamma ⟨x, z⟩ + coef0) ** degree; ``sigmoid``: tanh(gamma ⟨x, z⟩ + coef0)
        (not positive semi-definite: module docstring); ``callable``: ``function(X, Z)``;
        ``precomputed``: ``x[index of z]`` on rows made by :func:`with_index`.
    gamma : float
        Kernel coefficient of ``rbf``, ``poly`` and ``sigmoid`` (ignored by the others), > 0.
    degree : int
        Degree of ``poly``.
    coef0 : float
        Independent term of ``poly`` and ``sigmoid``.
    offset : float
        Constant added to every kernel value: K + offset models an intercept (regularized
        like the weights) in the problems without a bias term (the outlier path).
    function : callable or None
        For ``kind="callable"``: ``function(X, Z)`` returns the kernel block of shape
        (n, m) for X of shape (n, d) and Z of shape (m, d), an array of the namespace and on
        the device of X and Z (gpath calls it with its arrays as they are and does not move
        what it returns). It must be a positive semi-definite kernel; it is called on blocks
        of rows (single rows too), so it must not depend on which rows come together.
    """

    kind: str
    gamma: float = 1.0
    degree: int = 3
    coef0: float = 0.0
    offset: float = 0.0
    function: Callable | None = None

    @classmethod
    def from_params(cls, kernel, gamma, degree, coef0, X, svc: bool = False) -> Kernel:
        """Validate scikit-learn-style parameters and resolve ``gamma`` on training data ``X``.

        Parameters
        ----------
        kernel : {"linear", "rbf", "poly", "sigmoid", "precomputed"} or callable
            A name in any case (``"RBF"`` is ``"rbf"``), or ``kernel(X, Z) -> (n, m)``
            (see ``function`` above; ``gamma``, ``degree`` and ``coef0`` are then checked but
            not used, as in scikit-learn's SVC).
        gamma : float or {"scale", "auto"}
        degree : int
        coef0 : float
        X : array of shape (n_samples, n_features)
            Training inputs (any array-API namespace), used by ``gamma="scale"``; for
            ``"precomputed"`` the rows of :func:`with_index`.
        svc : bool
            Whether the caller is one of the C-SVCs, which also take ``"sigmoid"`` and
            ``"precomputed"`` (a Gram matrix for X).

        Raises
        ------
        ValueError
            For an unknown kernel name, ``"sigmoid"`` or ``"precomputed"`` where the caller
            does not take it,
            a non-positive or unknown gamma, or a degree < 1.
        TypeError
            For a kernel that is neither a string nor callable.
        """
        if callable(kernel):
            kind, function = "callable", kernel
        elif isinstance(kernel, str):
            kind, function = kernel.lower(), None
            if kind in SVC_ONLY and not svc:
                why = (" (not positive semi-definite: this estimator's problem needs a convex dual)"
                       if kind == "sigmoid" else "")
                raise ValueError(f"kernel={kind!r} is taken by SimpleSVC and IncrementalSVC{why}; pass the features "
                                 f"and a kernel, or a callable kernel, here")
            if kind not in KERNELS and kind != PRECOMPUTED:
                raise ValueError(f"kernel must be one of {KERNELS} (in any case) or a callable "
                                 f"kernel(X, Z) -> (n, m); got {kernel!r}")
        else:
            raise TypeError(f"kernel must be one of {KERNELS} or a callable kernel(X, Z) -> (n, m); "
                            f"got {type(kernel).__name__} {kernel!r}")
        d = X.shape[1]
        sparse = is_sparse(X)
        if isinstance(gamma, str):
            if gamma == "scale":
                gamma_value = 1.0
                if function is None and kind != PRECOMPUTED:
                    if sparse:
                        var = _sparse.variance(X)
                    else:
                        xp, _ = get_namespace_and_device(X)
                        var = scalars(xp, xp.mean((X - xp.mean(X)) ** 2))[0]
                    gamma_value = 1.0 / (d * var) if var > 0 else 1.0
                    if math.isinf(gamma_value) and kind != "linear":  # X.var() < 1e-308: features of ~1e-160
                        raise ValueError(f"gamma='scale' is 1 / (n_features · X.var()), which overflows "
                                         f"float64 on X (X.var() = {var:.3g}); scale the features")
            elif gamma == "auto":
                gamma_value = 1.0 / d
            else:
                raise ValueError(f"gamma must be a positive float, 'scale' or 'auto'; got {gamma!r}")
        elif isinstance(gamma, Real) and not isinstance(gamma, bool) and 0 < gamma < math.inf:
            gamma_value = float(gamma)
        else:
            raise ValueError(f"gamma must be a positive finite float, 'scale' or 'auto'; got {gamma!r}")
        if kind == "poly" and (int(degree) != degree or degree < 1):
            raise ValueError(f"degree must be an integer >= 1; got {degree!r}")
        if not isinstance(coef0, Real) or not math.isfinite(coef0):
            raise ValueError(f"coef0 must be a finite real number; got {coef0!r}")
        kernel = cls(kind, gamma_value, int(degree), float(coef0), function=function)
        if sparse and function is None and X.shape[0]:
            # ‖x − z‖² ≤ 2‖x‖² + 2‖z‖²; K(x, x) for the others: finite on every row, or refused.
            diag = _sparse.diagonal(dataclasses.replace(kernel, kind="linear") if kind == "rbf" else kernel, X)
            if not np.all(np.isfinite(4.0 * diag)):
                raise ValueError(f"the {kind} kernel overflows float64 on the sparse X (features up to "
                                 f"{np.max(np.abs(X.data), initial=0.0):.3g}); scale the features"
                                 + (" or lower gamma or the degree" if kind == "poly" else ""))
            return kernel
        if function is None and kind == "rbf" and X.shape[0]:
            # Squared distances beyond float64 make exp(−γ d²) NaN (γ = "scale" is then 0): a
            # model fitted on them would be silently wrong.
            xp, _ = get_namespace_and_device(X)
            centred = X - xp.mean(X, axis=0)
            radius = scalars(xp, xp.max(xp.vecdot(centred, centred)))[0]
            if not math.isfinite(radius):
                raise ValueError(f"the rbf kernel overflows float64 on X (the squared distances between rows "
                                 f"exceed 1.8e308: features up to {scalars(xp, xp.max(xp.abs(X)))[0]:.3g}); "
                                 f"scale the features")
        if function is None and kind != "rbf" and X.shape[0]:
            xp, _ = get_namespace_and_device(X)
            k_max = scalars(xp, xp.max(xp.abs(kernel.diagonal(X))))[0]
            if not math.isfinite(k_max):
                raise ValueError(f"the {kind} kernel overflows float64 on X (K(x, x) = {k_max} for some row: "
                                 f"features up to {scalars(xp, xp.max(xp.abs(X)))[0]:.3g}); scale the features"
                                 + (" or lower gamma or the degree" if kind == "poly" else ""))
        return kernel

    def __call__(self, X1, X2, rows: CenteredRows | None = None):
        """Kernel block K(X1, X2) of shape (n1, n2), in the namespace and on the device of X1;
        ``rows``: X1 centred once (:class:`CenteredRows`, RBF), when X1 is ``rows.X``. Where X1
        or X2 is a SciPy sparse matrix: a NumPy block from the sparse rows
        (:func:`gpath._sparse.kernel_block`; ``rows`` is not used).

        Raises
        ------
        TypeError
            A callable kernel that returns something else than an array of X1's namespace on
            its device, or of another shape than (n1, n2).
        """
        if is_sparse(X1) or is_sparse(X2):
            return _sparse.kernel_block(self, X1, X2)
        block = self._block(X1, X2, rows)
        if self.offset:
            block += self.offset
        return block

    def _block(self, X1, X2, rows=None):
        xp, _ = get_namespace_and_device(X1, X2)
        if self.function is not None:
            return self._call_function(xp, X1, X2)
        if self.kind == PRECOMPUTED:  # X1's Gram values at X2's indices (a new array)
            return xp.take(X1, xp.astype(X2[:, -1], xp.int64), axis=1)
        if self.kind == "rbf":
            return xp.exp(-self.gamma * _squared_distances(xp, X1, X2, self.gamma, rows))
        inner = X1 @ X2.T
        if self.kind == "linear":
            return inner
        if self.kind == "sigmoid":
            return xp.tanh(self.gamma * inner + self.coef0)
        return (self.gamma * inner + self.coef0) ** self.degree

    def _call_function(self, xp, X1, X2):
        """``function(X1, X2)`` checked, as a new float64 array (callers scale it in place).
        An empty block (an update that only removes points asks for the kernel values of no
        added row) is not asked of the function: scikit-learn's pairwise kernels, the usual
        callables, refuse arrays of 0 rows."""
        if X1.shape[0] == 0 or X2.shape[0] == 0:
            _, device = get_namespace_and_device(X1)
            return xp.zeros((X1.shape[0], X2.shape[0]), dtype=xp.float64, device=device)
        return self.checked_block(self.function(X1, X2), X1, X2)

    def checked_block(self, K, X1, X2):
        """What the callable kernel returned for (X1, X2), checked, as a new float64 array in
        the namespace of X1 (NumPy for sparse rows).

        Raises
        ------
        TypeError
            Not an array of X1's namespace on its device, of another shape than (n1, n2), or
            not real numbers.
        ValueError
            Values that are not finite.
        """
        xp, device = get_namespace_and_device(X1)
        shape = (X1.shape[0], X2.shape[0])
        name = getattr(self.function, "__name__", type(self.function).__name__)
        if not is_array_api(K):
            raise TypeError(f"kernel {name}(X, Z) must return an array of shape {shape} in the namespace of "
                            f"X and Z ({xp.__name__}); got {type(K).__name__}")
        kq, kdev = get_namespace_and_device(K)
        if kq.__name__ != xp.__name__ or str(kdev) != str(device):
            raise TypeError(f"kernel {name}(X, Z) must return an array in the namespace and on the device of "
                            f"X and Z ({xp.__name__!r} on {device!r}); got {kq.__name__!r} on {kdev!r}: "
                            f"gpath cannot move it there for you (compute it with X's own namespace)")
        if tuple(K.shape) != shape:
            raise TypeError(f"kernel {name}(X, Z) must return an array of shape {shape} for X of shape "
                            f"{tuple(X1.shape)} and Z of shape {tuple(X2.shape)}; got shape {tuple(K.shape)}")
        if not (xp.isdtype(K.dtype, "real floating") or xp.isdtype(K.dtype, "integral")):
            raise TypeError(f"kernel {name}(X, Z) must return real numbers; got dtype {K.dtype}")
        K = xp.astype(K, xp.float64, copy=True)
        if not scalars(xp, xp.all(xp.isfinite(K)))[0]:
            raise ValueError(f"kernel {name}(X, Z) returned values that are not finite (NaN or inf) for X of "
                             f"shape {tuple(X1.shape)} and Z of shape {tuple(X2.shape)}")
        return K

    @property
    def positive_semidefinite(self) -> bool:
        """Whether every Gram matrix of this kernel is positive semi-definite by construction:
        RBF, linear, and a polynomial with ``coef0 ≥ 0``, with ``offset ≥ 0`` (a sum of such
        kernels). Not the sigmoid; not a callable or precomputed kernel, whose values are the
        user's."""
        return (self.function is None and self.offset >= 0.0
                and (self.kind in ("rbf", "linear") or (self.kind == "poly" and self.coef0 >= 0.0)))

    def centered_rows(self, X):
        """X prepared for many blocks K(X, Z) (:class:`CenteredRows`) where the kernel
        centres its rows (RBF); None for the others, whose blocks need no preparation."""
        return CenteredRows(X) if self.kind == "rbf" and self.function is None else None

    def diagonal(self, X):
        """The kernel diagonal ``k(x_i, x_i)``, shape (n,), in the namespace of X."""
        if is_sparse(X) and self.function is None:
            return _sparse.diagonal(self, X)
        xp, device = get_namespace_and_device(X)
        if self.function is not None or self.kind == PRECOMPUTED:
            return self.paired(X, X)
        if self.kind == "rbf":
            return xp.full(X.shape[0], 1.0 + self.offset, dtype=xp.float64, device=device)
        return self._of_inner(xp, xp.vecdot(X, X))

    def _of_inner(self, xp, inner):
        """The kernel value from the inner product ⟨x, z⟩ (linear, poly, sigmoid), offset
        added."""
        k = (inner if self.kind == "linear" else xp.tanh(self.gamma * inner + self.coef0) if self.kind == "sigmoid"
             else (self.gamma * inner + self.coef0) ** self.degree)
        return k + self.offset if self.offset else k

    def paired(self, X1, X2):
        """Kernel values of matching rows, ``k(X1[i], X2[i])``: one value per row.

        A callable kernel gives them from the diagonals of blocks of 64 rows (64 kernel
        values per row, one call per block).

        Parameters
        ----------
        X1, X2 : arrays of shape (n, n_features), one namespace and device

        Returns
        -------
        k : array of shape (n,), in the namespace and on the device of X1
            ``paired(X, X)`` is the kernel diagonal.
        """
        xp, device = get_namespace_and_device(X1, X2)
        if self.function is not None:
            parts, n = [], X1.shape[0]
            for start in range(0, n, _PAIRED_BLOCK):
                rows = slice(start, min(start + _PAIRED_BLOCK, n))
                K = self._call_function(xp, X1[rows, :], X2[rows, :])
                on_diagonal = xp.eye(K.shape[0], dtype=xp.float64, device=device) != 0.0
                parts.append(xp.sum(xp.where(on_diagonal, K, 0.0), axis=1))
            k = xp.concat(parts) if parts else xp.zeros(0, dtype=xp.float64, device=device)
        elif self.kind == PRECOMPUTED:  # X1[i, index of X2[i]]: one take from the flattened rows
            width = X1.shape[1]
            at = xp.arange(X1.shape[0], dtype=xp.int64, device=device) * width + xp.astype(X2[:, -1], xp.int64)
            k = xp.take(xp.reshape(X1, (-1,)), at)
        elif self.kind == "rbf":
            diff = X1 - X2
            k = xp.exp(-self.gamma * xp.sum(diff * diff, axis=1))
        else:
            return self._of_inner(xp, xp.sum(X1 * X2, axis=1))
        return k + self.offset if self.offset else k


def with_index(G, first: int = 0):
    """The rows of a precomputed kernel as gpath keeps them: ``[G | index]`` (module docstring).

    Parameters
    ----------
    G : array of shape (m, n), float64
        Kernel values of m points against the n training points.
    first : int
        Index of the first row among the training points (``fit``: 0, each row its own
        index); −1: rows that are not training points (to predict), every index −1.

    Returns
    -------
    array of shape (m, n + 1), in the namespace and on the device of G
    """
    xp, device = get_namespace_and_device(G)
    m = G.shape[0]
    index = (xp.full(m, -1.0, dtype=xp.float64, device=device) if first < 0 else
             xp.arange(first, first + m, dtype=xp.float64, device=device))
    return xp.concat([G, index[:, None]], axis=1)


def check_saveable(kernel, owner: str) -> None:
    """Raise TypeError if a model with ``kernel`` cannot go into gpath's NumPy-only model
    format: a callable kernel is code, which the format never holds (pickle the model
    instead).

    Parameters
    ----------
    kernel : Kernel or None
    owner : str
        The estimator's name, for the message.

    Raises
    ------
    TypeError
    """
    if isinstance(kernel, Kernel) and kernel.function is not None:
        name = getattr(kernel.function, "__name__", type(kernel.function).__name__)
        raise TypeError(f"cannot save {owner} with the callable kernel {name!r}: gpath's model format holds "
                        f"arrays and JSON only, never code; pickle the model instead (pickle.dump), which "
                        f"works where the callable pickles (a module-level function, not a lambda)")


# The expansion ‖x − c‖² + ‖z − c‖² − 2⟨x − c, z − c⟩ errs by about 8ε(‖x − c‖² + ‖z − c‖²); in
# exp(−γ d²) that is a relative error of 8εγ(‖x − c‖² + ‖z − c‖²). Above this γ(‖x − c‖² +
# ‖z − c‖²) the error would pass 1e-11 and the distances are computed from the differences.
EXPANSION_LIMIT = 1e-11 / (8 * np.finfo(np.float64).eps)
# Elements of the (rows, columns, features) differences computed at once.
_CHUNK = 2**22


class CenteredRows:
    """The rows X of many kernel blocks K(X, Z), centred once (RBF kernel).

    :func:`_squared_distances` centres both sides on a point c near the data; for a trainer
    that asks for K(X, Z) with one X and many small Z, the centring of X and its squared norms
    (as costly as the matrix product of a block of 16 columns) are computed here once, c being
    the mean of X's rows.

    Parameters
    ----------
    X : array of shape (n, d), float64

    Attributes
    ----------
    X : array of shape (n, d)
        The rows, as given.
    center : array of shape (d,)
        c, the mean of the rows.
    centered : array of shape (n, d)
        X − c.
    norms : array of shape (n,)
        ‖x − c‖² of every row.
    max_norm : float
        The largest of them (0 for no rows).
    """

    def __init__(self, X):
        xp, _ = get_namespace_and_device(X)
        self.X = X
        self.center = xp.mean(X, axis=0)
        self.centered = X - self.center
        self.norms = xp.vecdot(self.centered, self.centered)
        self.max_norm = scalars(xp, xp.max(self.norms))[0] if X.shape[0] else 0.0


def _squared_distances(xp, X1, X2, gamma, rows: CenteredRows | None = None):
    """‖x − z‖² for every pair of rows, shape (n1, n2), accurate for data far from the origin.

    ‖x − z‖² = ‖x − c‖² + ‖z − c‖² − 2⟨x − c, z − c⟩ for any c: with c the mean of X2's rows the
    terms are of the size of the distances themselves, so the expansion (one matrix product)
    does not cancel catastrophically when the data sit far from the origin (timestamps,
    coordinates); for one column (c = z) or one row (c = x), it is the plain differences.
    Where γ is so large that its remaining round-off would show in exp(−γ d²), the differences
    themselves are used, in chunks of rows.
    """
    if X1.shape[0] == 0 or X2.shape[0] == 0:
        return xp.zeros((X1.shape[0], X2.shape[0]), dtype=X1.dtype, device=get_namespace_and_device(X1)[1])
    if X1.shape[0] == 1 and rows is None:  # c = x: the differences themselves (a stream's one row)
        diff = X2 - X1
        return xp.reshape(xp.vecdot(diff, diff), (1, X2.shape[0]))
    if rows is not None and X2.shape[0] > 1:  # X1 centred already (rows.X is X1)
        c, X1c, n1c, max_n1c = rows.center, rows.centered, rows.norms, rows.max_norm
        X2c = X2 - c
        n2c = xp.vecdot(X2c, X2c)
    else:
        c = xp.mean(X2, axis=0)
        X1c, X2c = X1 - c, X2 - c
        n1c, n2c = xp.vecdot(X1c, X1c), xp.vecdot(X2c, X2c)
        if X2.shape[0] == 1:  # c = z: the differences themselves
            return n1c[:, None]
        max_n1c = scalars(xp, xp.max(n1c))[0]
    if gamma * (max_n1c + scalars(xp, xp.max(n2c))[0]) > EXPANSION_LIMIT:
        # From X1 and X2 as given, not centred: where a far point pulls c away from both x and
        # z, x − c and z − c each carry a round-off of ε‖x − c‖ that x − z does not.
        chunk, n1 = max(1, _CHUNK // max(1, X2.shape[0] * X2.shape[1])), X1.shape[0]
        parts = []
        for start in range(0, n1, chunk):
            diff = X1[start : min(start + chunk, n1), None, :] - X2[None, :, :]
            parts.append(xp.sum(diff * diff, axis=2))
        return xp.concat(parts, axis=0)
    inner = X1c @ X2c.T
    inner *= -2.0
    inner += n1c[:, None]
    inner += n2c[None, :]
    return xp.maximum(inner, 0.0)


def kernel_products(kernel, X, Z, coef, block: int = 2048):
    """``K(X, Z) @ coef`` and ``|K(X, Z)| @ |coef|`` from fresh kernel values, as host arrays:
    the margins a from-scratch KKT check recomputes, and the size of the terms they sum (the
    scale its round-off is relative to).

    Parameters
    ----------
    kernel : Kernel or callable
    X : device array (or sparse rows) of shape (n, d)
        The rows whose values are computed, ``block`` at a time (``8·block·m`` bytes of kernel
        values at once).
    Z : device array (or sparse rows) of shape (m, d)
    coef : device array of shape (m,) or (m, k), float64

    Returns
    -------
    products, sizes : ndarray of shape (n,) or (n, k), float64
        Zeros where Z has no row.
    """
    xp, _ = get_namespace_and_device(coef)
    n = X.shape[0]
    products, sizes = np.zeros((n, *coef.shape[1:])), np.zeros((n, *coef.shape[1:]))
    if Z.shape[0]:
        coef_abs = xp.abs(coef)
        for lo in range(0, n, block):
            hi = min(lo + block, n)
            K = kernel(X[lo:hi, :], Z)
            products[lo:hi], sizes[lo:hi] = to_host(K @ coef), to_host(xp.abs(K) @ coef_abs)
    return products, sizes


def q_columns(kernel: Kernel, X, X_cols, col_rows: np.ndarray, ridge: float, y=None, y_cols=None,
              rows: CenteredRows | None = None):
    """Columns of Q = diag(y) K diag(y) + ridge·I for the points ``X_cols``.

    Parameters
    ----------
    kernel : Kernel
    X : array of shape (n, d)
        All training points (rows of Q).
    X_cols : array of shape (k, d)
        The points whose columns are wanted.
    col_rows : host int array of shape (k,)
        Row of each column's own point in X (-1 if it is not a training row): where the ridge
        goes.
    ridge : float
    y, y_cols : arrays of shape (n,) and (k,), or None
        Labels ±1 for classification (Q_ij = y_i y_j K_ij); None for regression (Q = K).
    rows : CenteredRows or None
        X centred once, for a caller that asks for many blocks of the same rows.

    Returns
    -------
    Q_cols : array of shape (n, k), in the namespace and on the device of X
    """
    block = kernel(X, X_cols, rows)  # a new array: scaled in place below
    if y is not None:
        block *= y[:, None]
        block *= y_cols[None, :]
    return with_ridge(block, col_rows, ridge)


def with_ridge(block, col_rows: np.ndarray, ridge: float):
    """``block`` (n, k) with ``ridge`` added at row ``col_rows[j]`` of each column j (none where
    it is −1): the columns' own diagonal entries of Q. In place where it can be."""
    xp, device = get_namespace_and_device(block)
    own = np.flatnonzero(col_rows >= 0)
    if ridge and own.size:
        k = col_rows.size
        if own.size == k and np.all(np.diff(col_rows) == 1):  # rows a, a+1, …: a k × k identity
            a = int(col_rows[0])
            block[a : a + k, :] += ridge * xp.eye(k, dtype=block.dtype, device=device)
        elif own.size <= 16:  # a few single entries
            for j in own:
                block[int(col_rows[j]), int(j)] += ridge
        else:  # one pass instead of a launch per entry (no integer-array scatter in the standard)
            rows = xp.arange(block.shape[0], device=device)[:, None]
            at = to_device(np.where(col_rows >= 0, col_rows, -1), xp, device, dtype=rows.dtype)[None, :]
            block = xp.where(rows == at, block + ridge, block)
    return block
