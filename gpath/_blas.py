"""BLAS routines callable from Numba-compiled code (host, float64).

Numba compiles loops well but not a triangular solve at BLAS speed (blocked, vectorized), and
it offers no ``trsv`` of its own. SciPy ships the reference interface of its BLAS as Cython
function pointers (:mod:`scipy.linalg.cython_blas`); they are registered here as named LLVM
symbols, so compiled functions call them by name: no Python in between, and Numba's on-disk
cache stays valid from one process to the next (an address would not).

Matrices are row-major (C order) with leading dimension ``lda``: to Fortran BLAS a row-major
upper triangle R is the column-major lower triangle Rᵀ.
"""

from __future__ import annotations

import llvmlite.binding as llvm
import numpy as np
from numba import njit, types
from numba.extending import get_cython_function_address

__all__ = ["dsymv", "dtrsm_upper_t", "dtrsv_upper"]

_p = types.voidptr
for _name in ("dtrsv", "dtrsm", "dsymv"):
    llvm.add_symbol(f"gpath_{_name}", get_cython_function_address("scipy.linalg.cython_blas", _name))
_dtrsv = types.ExternalFunction("gpath_dtrsv", types.void(_p, _p, _p, _p, _p, _p, _p, _p))
_dsymv = types.ExternalFunction("gpath_dsymv", types.void(_p, _p, _p, _p, _p, _p, _p, _p, _p, _p))
_dtrsm = types.ExternalFunction("gpath_dtrsm", types.void(_p, _p, _p, _p, _p, _p, _p, _p, _p, _p, _p))

_L, _N, _T, _U = ord("L"), ord("N"), ord("T"), ord("U")


@njit(cache=True)
def dtrsv_upper(R, m, x, transpose):
    """x ← R⁻ᵀx (``transpose``) or R⁻¹x, for the upper triangle R[:m, :m] of the row-major R
    (its leading dimension is R.shape[1]); x is a contiguous float64 vector."""
    if m == 0:
        return
    chars = np.empty(3, dtype=np.uint8)
    chars[0] = _L  # R by rows is Rᵀ by columns: a lower triangle
    chars[1] = _N if transpose else _T
    chars[2] = _N  # non-unit diagonal
    ints = np.empty(3, dtype=np.int32)
    ints[0], ints[1], ints[2] = m, R.shape[1], 1
    _dtrsv(chars[0:].ctypes, chars[1:].ctypes, chars[2:].ctypes, ints[0:].ctypes, R.ctypes,
           ints[1:].ctypes, x.ctypes, ints[2:].ctypes)


@njit(cache=True)
def dsymv(Q, m, x, out):
    """out ← Q[:m, :m] x for the symmetric row-major Q (one triangle read)."""
    if m == 0:
        return
    chars = np.empty(1, dtype=np.uint8)
    chars[0] = _U  # 'U' by columns is the lower triangle by rows; Q is kept in full
    ints = np.empty(3, dtype=np.int32)
    ints[0], ints[1], ints[2] = m, Q.shape[1], 1
    scalars = np.empty(2)
    scalars[0], scalars[1] = 1.0, 0.0
    _dsymv(chars[0:].ctypes, ints[0:].ctypes, scalars[0:].ctypes, Q.ctypes, ints[1:].ctypes, x.ctypes,
           ints[2:].ctypes, scalars[1:].ctypes, out.ctypes, ints[2:].ctypes)


@njit(cache=True)
def dtrsm_upper_t(R, m, B):
    """Each row b of B ← R⁻ᵀ b, for the upper triangle R[:m, :m] of the row-major R, B a
    C-contiguous float64 array of shape (p, m): one level-3 pass over R for p right-hand
    sides, where p level-2 solves read it p times (and LAPACK's dtrtrs from Python first
    copies R[:m, :m] into an array of its own)."""
    p = B.shape[0]
    if m == 0 or p == 0:
        return
    chars = np.empty(4, dtype=np.uint8)
    # B by rows is Bᵀ (m × p) by columns; R by rows is the lower triangle Rᵀ by columns.
    chars[0], chars[1], chars[2], chars[3] = _L, _L, _N, _N  # side, uplo, transa, diag
    ints = np.empty(4, dtype=np.int32)
    ints[0], ints[1], ints[2], ints[3] = m, p, R.shape[1], B.shape[1]
    one = np.ones(1)
    _dtrsm(chars[0:].ctypes, chars[1:].ctypes, chars[2:].ctypes, chars[3:].ctypes, ints[0:].ctypes,
           ints[1:].ctypes, one.ctypes, R.ctypes, ints[2:].ctypes, B.ctypes, ints[3:].ctypes)
