"""The host factor of the bordered margin matrix against a dense solve."""

import numpy as np
import pytest
from helpers import count_condition_estimates

from gpath.linalg import BorderedFactor, SingularMarginError


def _bordered(y, Q):
    m = len(y)
    big = np.zeros((m + 1, m + 1))
    big[0, 1:] = big[1:, 0] = y
    big[1:, 1:] = Q
    return big


def _margin_problem(rng, n, d):
    """Labels and Q = y yᵀ ∘ K of n random points in d features (RBF, a ridge of 1e-6)."""
    pool = rng.standard_normal((n, d))
    labels = rng.choice([-1.0, 1.0], n)
    K = np.exp(-0.3 * ((pool[:, None] - pool[None]) ** 2).sum(-1)) + 1e-6 * np.eye(n)
    return labels, labels[:, None] * labels[None] * K


@pytest.mark.parametrize("seed", range(5))
def test_random_insert_delete_matches_dense_solve(seed):
    rng = np.random.default_rng(seed)
    labels, Q = _margin_problem(rng, 60, 5)
    f = BorderedFactor()
    members: list[int] = []
    for _ in range(300):
        outside = [i for i in range(60) if i not in members]
        if members and (rng.random() < 0.4 or not outside):
            pos = int(rng.integers(len(members)))
            f.delete(pos)
            members.pop(pos)
        else:
            k = int(rng.choice(outside))
            f.insert(k, labels[k], Q[k, f.basis], Q[k, k])
            members.append(k)
        assert f.size == len(members)
        if members:
            big = _bordered(labels[members], Q[np.ix_(members, members)])
            np.testing.assert_array_equal(f.matrix, big)
            rhs = rng.standard_normal(len(members) + 1)
            x = f.solve(rhs)
            expected = np.linalg.solve(big, rhs)
            assert np.abs(x - expected).max() <= 1e-9 * max(1.0, np.abs(expected).max())
            assert np.abs(big @ x - rhs).max() <= 1e-10 * (np.abs(big).max() * np.abs(x).max() + 1)


@pytest.mark.parametrize("from_factor", [False, True])
def test_duplicate_point_without_ridge_is_singular_and_factor_kept(monkeypatch, from_factor):
    # Both estimates: LAPACK's (a small factor) and the one from the factor in hand, whose
    # iteration alone, started from the ones vector, never meets the null direction e₀ − e₂.
    import gpath.linalg

    if from_factor:
        monkeypatch.setattr(gpath.linalg, "_ESTIMATE_FROM_FACTOR", 1)
    y = np.array([1.0, -1.0])
    Q = np.array([[1.0, -0.5], [-0.5, 1.0]])
    f = BorderedFactor()
    f.insert(0, y[0], Q[0, :0], Q[0, 0])
    f.insert(1, y[1], Q[1, :1], Q[1, 1])
    before = f.matrix.copy()
    # A copy of point 0 (same label, same kernel row): 𝐌 gets two equal rows.
    with pytest.raises(SingularMarginError, match="ridge > 0"):
        f.insert(2, y[0], Q[0, :2], Q[0, 0])
    np.testing.assert_array_equal(f.matrix, before)
    x = f.solve(np.array([0.0, 1.0, 1.0]))
    np.testing.assert_allclose(before @ x, [0.0, 1.0, 1.0], atol=1e-14)


def _near_duplicates(gap):
    """Labels and Q = y yᵀ ∘ K (RBF, no ridge) of 30 random points in 3 features and a 31st
    at distance ``gap`` from the first, with its label."""
    rng = np.random.default_rng(3)
    pool = rng.standard_normal((30, 3))
    labels = np.append(rng.choice([-1.0, 1.0], 30), 1.0)
    labels[0] = 1.0
    points = np.vstack([pool, pool[:1] + gap])
    return labels, labels[:, None] * labels[None] * np.exp(-0.5 * ((points[:, None] - points[None]) ** 2).sum(-1))


@pytest.mark.parametrize("gap", [1e-5, 3e-6])
def test_near_duplicate_point_with_a_tiny_pivot_enters_by_a_new_factor(gap):
    # A pivot below 1e-8 of the diagonal, but 𝐌 far from singular at rcond 1e-13: the point
    # goes in (the factor rebuilt), and solves stay accurate. A near duplicate at distance
    # 1e-9 (kernel gap ~1e-18) is singular to round-off and refused.
    labels, Q = _near_duplicates(gap)
    f = BorderedFactor()
    for k in range(31):
        f.insert(k, labels[k], Q[k, f.basis], Q[k, k])
    big = _bordered(labels, Q)
    np.testing.assert_array_equal(f.matrix, big)
    rhs = np.random.default_rng(4).standard_normal(32)
    x = f.solve(rhs)
    assert np.abs(big @ x - rhs).max() <= 1e-8 * np.abs(big).max() * np.abs(x).max()
    _, Qt = _near_duplicates(1e-9)
    g = BorderedFactor()
    for k in range(30):
        g.insert(k, labels[k], Qt[k, g.basis], Qt[k, k])
    with pytest.raises(SingularMarginError, match="ridge > 0"):
        g.insert(30, labels[30], Qt[30, g.basis], Qt[30, 30])
    assert g.size == 30


@pytest.mark.parametrize("from_factor", [False, True])
def test_whether_a_tiny_pivot_is_singular_does_not_depend_on_the_kernels_scale(monkeypatch, from_factor):
    # The near duplicates above (a pivot of 1e-10 of the diagonal: regular; 1e-18: singular)
    # with Q scaled by c, as features of size √c scale a linear kernel: 𝐌's border of ones
    # does not scale with Q, and 𝐌's condition number grows as c or 1 / c. Regular must stay
    # regular at every c (1 / κ is 4e-12 with the border scaled; unscaled, 4e-20 at c = 10⁻⁸
    # and 1e-24 at 10¹²: SimpleSVM took such a 𝐌 for singular, fuzz_real_data seed 22,124),
    # and singular stay singular.
    import gpath.linalg

    if from_factor:
        monkeypatch.setattr(gpath.linalg, "_ESTIMATE_FROM_FACTOR", 1)
    rng = np.random.default_rng(4)
    for gap, regular in ((1e-5, True), (1e-9, False)):
        labels, Q = _near_duplicates(gap)
        for c in (1e-8, 1e-4, 1.0, 1e4, 1e8, 1e12):
            f = BorderedFactor()
            for k in range(30):
                f.insert(k, labels[k], c * Q[k, f.basis], c * Q[k, k])
            if regular:
                f.insert(30, labels[30], c * Q[30, f.basis], c * Q[30, 30])
                big = _bordered(labels, c * Q)
                rhs = rng.standard_normal(32)
                x = f.solve(rhs)
                assert np.abs(big @ x - rhs).max() <= 1e-8 * (np.abs(big).max() * np.abs(x).max() + 1)
            else:
                with pytest.raises(SingularMarginError, match="ridge > 0"):
                    f.insert(30, labels[30], c * Q[30, f.basis], c * Q[30, 30])
                assert f.size == 30


def test_empty_margin_solve_raises():
    with pytest.raises(SingularMarginError, match="empty"):
        BorderedFactor().solve(np.zeros(1))


def test_delete_out_of_range():
    f = BorderedFactor()
    f.insert(0, 1.0, np.zeros(0), 1.0)
    with pytest.raises(IndexError, match="out of range"):
        f.delete(1)


def test_unbordered_factor_matches_dense_solve():
    # The outlier path's active-set matrix has no border: Q_EE alone.
    rng = np.random.default_rng(7)
    pool = rng.standard_normal((30, 4))
    Q = np.exp(-0.5 * ((pool[:, None] - pool[None]) ** 2).sum(-1)) + 1e-6 * np.eye(30)
    f = BorderedFactor(bordered=False)
    assert f.solve(np.zeros(0)).shape == (0,)
    members: list[int] = []
    for k in rng.permutation(30)[:20]:
        f.insert(int(k), None, Q[k, f.basis], Q[k, k])
        members.append(int(k))
        if len(members) % 3 == 0:
            f.delete(1)
            members.pop(1)
        rhs = rng.standard_normal(len(members))
        np.testing.assert_allclose(f.solve(rhs), np.linalg.solve(Q[np.ix_(members, members)], rhs), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("change", ["insert", "delete", "insert_block", "refactor", "solve", "grow"])
def test_a_shared_factor_copies_r_and_q_before_either_writes_them(change):
    # BorderedFactor.share: two factors hold the same R and Q_MM until one of them writes; the
    # other must then read exactly what it read before, whichever of them writes.
    rng = np.random.default_rng(3)
    pool = rng.standard_normal((40, 4))
    labels = rng.choice([-1.0, 1.0], 40)
    K = np.exp(-0.3 * ((pool[:, None] - pool[None]) ** 2).sum(-1)) + 1e-6 * np.eye(40)
    Q = labels[:, None] * labels[None] * K

    def build(points):
        f = BorderedFactor()
        for k in points:
            f.insert(k, labels[k], Q[k, f.basis], Q[k, k])
        return f

    for writer in ("shared", "original"):
        original = build(range(12))
        shared = original.share()
        assert shared._r is original._r  # nothing copied yet
        fixed, changed = (original, shared) if writer == "shared" else (shared, original)
        R, matrix, basis = fixed._r[:12, :12].copy(), fixed.matrix, fixed.basis.copy()
        if change == "insert":
            changed.insert(20, labels[20], Q[20, changed.basis], Q[20, 20])
        elif change == "delete":
            changed.delete(3)
        elif change == "insert_block":
            new = np.array([20, 21, 22])
            assert changed.insert_block(new, labels[new], Q[np.ix_(new, changed.basis)], Q[np.ix_(new, new)])
        elif change == "refactor":
            changed.refactor()
        elif change == "solve":
            changed.solve(rng.standard_normal(13))
        else:
            for k in range(20, 40):  # past its capacity: new arrays
                changed.insert(k, labels[k], Q[k, changed.basis], Q[k, k])
        assert changed._r is not fixed._r and changed._q is not fixed._q
        np.testing.assert_array_equal(fixed._r[:12, :12], R)
        np.testing.assert_array_equal(fixed.matrix, matrix)
        np.testing.assert_array_equal(fixed.basis, basis)
        members = list(changed.basis)
        np.testing.assert_array_equal(changed.matrix, _bordered(labels[members], Q[np.ix_(members, members)]))
        rhs = rng.standard_normal(len(members) + 1)
        np.testing.assert_allclose(_bordered(labels[members], Q[np.ix_(members, members)]) @ changed.solve(rhs),
                                   rhs, rtol=0, atol=1e-8)
        # The factor that did not write still solves its own system (with its own arrays now).
        rhs = rng.standard_normal(13)
        np.testing.assert_allclose(matrix @ fixed.solve(rhs), rhs, rtol=0, atol=1e-8)


def test_a_spent_factor_that_shares_r_and_q_gives_its_spare_instead():
    rng = np.random.default_rng(4)
    f = BorderedFactor()
    for k in range(8):
        f.insert(k, 1.0 if k % 2 else -1.0, rng.random(k) * 0.01, 1.0 + k)
    f.spare = spare = f.copy()
    new = f.share()
    new.take_spare(f)
    assert new.spare is spare and not new._shares  # the spent one is no reader: R and Q its own
    later = new.copy(into=new.spare)
    assert later._r is spare._r and later._r is not new._r
    np.testing.assert_array_equal(later.matrix, new.matrix)
    other = new.copy()
    other.take_spare(new)
    assert other.spare is new


@pytest.mark.parametrize("each", [True, False])  # one point at a time (compiled), or the block step
@pytest.mark.parametrize("m0, p", [(0, 1), (0, 34), (10, 5), (60, 60), (100, 40)])
def test_a_block_of_points_enters_as_the_dense_matrix_says(monkeypatch, each, m0, p):
    import gpath.linalg

    monkeypatch.setattr(gpath.linalg, "_EACH_UP_TO", 10**6 if each else 0)
    rng = np.random.default_rng(m0 + p)
    n = m0 + p + 2  # and two more: a new point, and a duplicate of a margin point
    pool = rng.standard_normal((n, 6))
    labels = rng.choice([-1.0, 1.0], n)
    K = np.exp(-0.1 * ((pool[:, None] - pool[None]) ** 2).sum(-1)) + 1e-8 * np.eye(n)
    Q = labels[:, None] * labels[None] * K
    f = BorderedFactor()
    for k in range(m0):
        f.insert(k, labels[k], Q[k, f.basis], Q[k, k])
    new = np.arange(m0, m0 + p)
    assert f.insert_block(new, labels[new], Q[np.ix_(new, f.basis)], Q[np.ix_(new, new)])
    members = list(range(m0 + p))
    big = _bordered(labels[members], Q[np.ix_(members, members)])
    np.testing.assert_array_equal(f.matrix, big)
    np.testing.assert_array_equal(f.basis, members)
    rhs = rng.standard_normal(m0 + p + 1)
    np.testing.assert_allclose(big @ f.solve(rhs), rhs, rtol=0, atol=1e-7 * np.abs(rhs).max())
    # A block of a new point and a duplicate of a margin point (no ridge: a zero pivot, after
    # the new point went in) leaves it as it was; alone, the duplicate too.
    Qd, labels_d = Q.copy(), labels.copy()
    Qd[n - 1], Qd[:, n - 1], labels_d[n - 1] = Q[members[-1]], Q[:, members[-1]], labels[members[-1]]
    Qd[n - 1, n - 1] = Q[members[-1], members[-1]]
    R, matrix = f._r[: m0 + p, : m0 + p].copy(), f.matrix
    top, rho, scale = f._top, f._rho, f._floats[1]
    for block in (np.array([n - 2, n - 1]), np.array([n - 1])):
        assert not f.insert_block(block, labels_d[block], Qd[np.ix_(block, f.basis)], Qd[np.ix_(block, block)])
        np.testing.assert_array_equal(f._r[: m0 + p, : m0 + p], R)
        np.testing.assert_array_equal(f.matrix, matrix)
        np.testing.assert_array_equal(f.basis, members)
        assert f.size == m0 + p and f._top == top and f._rho == rho and f._floats[1] == scale
        np.testing.assert_allclose(big @ f.solve(rhs), rhs, rtol=0, atol=1e-7 * np.abs(rhs).max())
    # and the new point still enters alone, as the dense matrix says (its slot free again)
    f.insert(n - 2, labels[n - 2], Q[n - 2, f.basis], Q[n - 2, n - 2])
    members.append(n - 2)
    np.testing.assert_array_equal(f.matrix, _bordered(labels[members], Q[np.ix_(members, members)]))


def _linear_margin_problem(n, d, ridge, seed=0):
    """Labels and Q = y yᵀ ∘ (X Xᵀ + ridge I) of n points in d < n features: every point past
    d + 1 gives a pivot near the ridge, far below 1e-8 of the diagonal."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * 10.0
    labels = rng.choice([-1.0, 1.0], n)
    return labels, labels[:, None] * labels[None] * (X @ X.T + ridge * np.eye(n))


@pytest.mark.parametrize("floor", [0.0, 1e-6])
def test_pivots_above_the_ridges_floor_need_no_condition_estimate(monkeypatch, floor):
    # A linear kernel in 3 features with the ridge 1e-6: Q + ρ y yᵀ is of rank 4 but for the
    # ridge, so each point from the fifth on has a pivot near 1e-6 against its own diagonal,
    # 600 to 70,000, "tiny". Without a floor each
    # one costs a condition estimate and a new factor; with the ridge as the floor, the pivots
    # are known not to be round-off of zeros, and the factor is updated as for any other point.

    labels, Q = _linear_margin_problem(40, 3, 0.0)
    Q = Q * 100.0 + 1e-6 * np.eye(40)
    estimates = count_condition_estimates(monkeypatch)
    f = BorderedFactor(floor=floor)
    for k in range(40):
        f.insert(k, labels[k], Q[k, f.basis], Q[k, k])
    assert len(estimates) == (0 if floor else 40 - 4)
    big = _bordered(labels, Q)
    np.testing.assert_array_equal(f.matrix, big)
    rhs = np.random.default_rng(1).standard_normal(41)
    x = f.solve(rhs)
    assert np.abs(big @ x - rhs).max() <= 1e-10 * (np.abs(big).max() * np.abs(x).max() + 1)


def test_a_resolved_floor_is_trusted_past_the_condition_number_the_estimate_refuses(monkeypatch):
    # Two features of size 10² (diagonals up to 6e5), the ridge 1e-6, 60 margin points: 𝐌's
    # condition number is some 3.6e13, past 1 / rcond, which LAPACK's estimate would call
    # singular. Float64 still resolves the ridge beside the diagonal (16·60·ε·1.2e6 ≈ 2.5e-7,
    # with ρ): the pivots are no round-off of zeros, the points go in without an estimate, and
    # the factor's solves are backward stable (the margin equations' residual is round-off).
    import gpath.linalg

    labels, Q = _linear_margin_problem(60, 2, 0.0)
    Q = Q * 1e3 + 1e-6 * np.eye(60)
    big = _bordered(labels, Q)
    assert gpath.linalg._reciprocal_condition(big) < 1e-13
    estimates = count_condition_estimates(monkeypatch)
    f = BorderedFactor(floor=1e-6)
    for k in range(60):
        f.insert(k, labels[k], Q[k, f.basis], Q[k, k])
    assert not estimates and f.size == 60
    np.testing.assert_array_equal(f.matrix, big)
    rhs = np.random.default_rng(1).standard_normal(61)
    x = f.solve(rhs)
    assert np.abs(big @ x - rhs).max() <= 1e-14 * np.abs(big).max() * np.abs(x).max()


def test_a_floor_that_float64_cannot_resolve_beside_the_diagonal_is_not_trusted():
    # The ridge 1e-6 beside kernel values near 1e12 (features of size 1e5): a pivot of the
    # ridge's size is within the diagonal's round-off, and the condition number decides, as
    # without a floor (here: singular, refused, the factor kept).
    labels, Q = _linear_margin_problem(6, 2, 0.0)
    Q = Q * 1e10 + 1e-6 * np.eye(6)
    f = BorderedFactor(floor=1e-6)
    for k in range(3):
        f.insert(k, labels[k], Q[k, f.basis], Q[k, k])
    before = f.matrix.copy()
    with pytest.raises(SingularMarginError, match="ridge > 0"):
        f.insert(3, labels[3], Q[3, f.basis], Q[3, 3])
    np.testing.assert_array_equal(f.matrix, before)


@pytest.mark.parametrize("m,p", [(0, 3), (5, 0), (1, 1), (37, 5), (120, 40)])
def test_the_block_triangular_solve_reads_the_factors_storage_in_place(m, p):
    # dtrsm on the upper triangle R[:m, :m] of a larger row-major array (the factor's
    # storage), p right-hand sides as rows: each row b becomes R⁻ᵀ b; nothing else changes.
    from gpath._blas import dtrsm_upper_t

    rng = np.random.default_rng(m + p)
    R = rng.standard_normal((m + 7, m + 7))
    R[np.diag_indices(m + 7)] = np.abs(R.diagonal()) + 3.0
    before = R.copy()
    B = rng.standard_normal((p, m))
    expected = np.linalg.solve(np.triu(R[:m, :m]).T, B.T).T if m and p else B.copy()
    dtrsm_upper_t(R, m, B)
    np.testing.assert_allclose(B, expected, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(R, before)


@pytest.mark.parametrize("bordered", [False, True])
def test_the_condition_estimate_from_the_factor_in_hand_bounds_the_exact_one(bordered):
    # Hager's estimate of ‖𝐌⁻¹‖₁ (with the tiny pivot's column of 𝐌⁻¹) is a lower bound, within
    # a small factor: 1 / κ₁ from it lies between the exact value and three times it, after
    # deletes as after inserts, and agrees with LAPACK's estimate from a factor of its own.
    import gpath.linalg

    rng = np.random.default_rng(5)
    for n, spread in ((4, 1.0), (40, 1e-3), (120, 1e-6)):
        V = np.linalg.qr(rng.standard_normal((n, n)))[0]
        Q = (V * np.geomspace(spread, 1.0, n)) @ V.T
        labels = rng.choice([-1.0, 1.0], n)
        f = BorderedFactor(bordered=bordered)
        for k in range(n):
            f.insert(k, labels[k], Q[k, f.basis], Q[k, k])
        for k in (n // 2, 0):
            f.delete(k)
            M = f._scaled(labels[f.basis], Q[np.ix_(f.basis, f.basis)])  # (its border scaled by w)
            exact = 1.0 / np.linalg.cond(M, 1)
            estimate = f._reciprocal_condition_from_factor(f.size - 1)
            assert exact * (1 - 1e-8) <= estimate <= 3.0 * exact
            assert estimate == pytest.approx(gpath.linalg._reciprocal_condition(M), rel=0.5)


def test_a_tiny_pivot_is_decided_without_a_factor_of_its_own(monkeypatch):
    # A linear kernel in two features, the ridge 1e-6 near a pivot's round-off beside the
    # diagonal: past the third point every pivot is of the ridge's size, "tiny", and 𝐌's
    # condition number some 1e15. Where the floor does not vouch for such a pivot (8 points,
    # at |M| = 20–32), the estimate from the factor in hand (O(|M|²)) decides, as LAPACK's
    # estimate from a factor of 𝐌 of its own (O(|M|³), no longer asked) would: refused, the
    # factor exact.
    import gpath.linalg

    monkeypatch.setattr(gpath.linalg, "_ESTIMATE_FROM_FACTOR", 1)  # (from 128 points on, by default)
    labels, Q = _linear_margin_problem(40, 2, 0.0)
    top = 1e-6 / (2 * 41 * gpath.linalg._EPS)
    Q = Q * (top / (2 * Q.diagonal().max())) + 1e-6 * np.eye(40)
    lapack, from_factor = gpath.linalg._reciprocal_condition, BorderedFactor._reciprocal_condition_from_factor
    pairs = []
    monkeypatch.setattr(BorderedFactor, "_reciprocal_condition_from_factor",
                        lambda self, tiny: pairs.append((from_factor(self, tiny), lapack(self._scaled(
                            labels[self.basis], Q[np.ix_(self.basis, self.basis)])))) or pairs[-1][0])
    asked = count_condition_estimates(monkeypatch)
    f = BorderedFactor(floor=1e-6)
    refused = 0
    for k in range(40):
        try:
            f.insert(k, labels[k], Q[k, f.basis], Q[k, k])
        except SingularMarginError:
            refused += 1
    assert refused == len(pairs) == len(asked) == 8
    for estimate, reference in pairs:
        assert estimate <= f.rcond and reference <= f.rcond
        assert estimate == pytest.approx(reference, rel=0.5)
    big = _bordered(labels[f.basis], Q[np.ix_(f.basis, f.basis)])
    np.testing.assert_array_equal(f.matrix, big)
    rhs = np.random.default_rng(1).standard_normal(f.size + 1)
    x = f.solve(rhs)
    assert np.abs(big @ x - rhs).max() <= 1e-10 * (np.abs(big).max() * np.abs(x).max() + 1)


@pytest.mark.parametrize("bordered", [False, True])
def test_a_zero_pivot_without_a_floor_is_singular(bordered):
    # The first point's shifted diagonal q_kk + ρ exactly 0 (unbordered: q_kk = 0; bordered:
    # q_kk = −1, whose shift is 1): a zero pivot, refused, not written into R.
    f = BorderedFactor(bordered=bordered)
    with pytest.raises(SingularMarginError):
        f.insert(0, 1.0, np.zeros(0), -1.0 if bordered else 0.0)
    assert f.size == 0


def test_a_block_whose_new_factor_fails_leaves_the_factor_as_it_was(monkeypatch):
    # An indefinite Q (not a kernel's) whose bordered 𝐌 with the block is regular: the block
    # step's pivots are tiny (its Schur complement is not positive definite), the estimate
    # passes, and the new factor of Q̃ fails. The factor is as it was (its free slots' order
    # and write log aside), and still solves.
    import gpath.linalg

    monkeypatch.setattr(gpath.linalg, "_EACH_UP_TO", 0)
    rng = np.random.default_rng(3)
    A = rng.standard_normal((12, 12))
    w, V = np.linalg.eigh(A @ A.T)
    w[:3] = -np.abs(w[:3]) - 1.0
    Q = (V * w) @ V.T
    Q = (Q + Q.T) / 2
    labels = rng.choice([-1.0, 1.0], 12)
    f = BorderedFactor()
    members = []
    for k in np.argsort(-np.diag(Q)).tolist():
        try:
            f.insert(k, labels[k], Q[k, f.basis], Q[k, k])
            members.append(k)
        except SingularMarginError:
            pass
        if len(members) == 3:
            break
    new = np.array([k for k in range(12) if k not in members])
    m, top, R, Qtop, floats = f.size, f._top, f._r[:3, :3].copy(), f._q[: f._top, : f._top].copy(), f._floats.copy()
    assert gpath.linalg._reciprocal_condition(f._with_block(labels[new], Q[np.ix_(new, f.basis)],
                                                            Q[np.ix_(new, new)])) > f.rcond
    assert not f.insert_block(new, labels[new], Q[np.ix_(new, f.basis)], Q[np.ix_(new, new)])
    assert f.size == m and f._top == top
    np.testing.assert_array_equal(f.basis, members)
    np.testing.assert_array_equal(f._r[:3, :3], R)
    np.testing.assert_array_equal(f._q[:top, :top], Qtop)
    np.testing.assert_array_equal(f._floats, floats)
    big = _bordered(labels[members], Q[np.ix_(members, members)])
    rhs = rng.standard_normal(4)
    np.testing.assert_allclose(big @ f.solve(rhs), rhs, rtol=0, atol=1e-10 * np.abs(big).max())


def test_a_large_block_with_tiny_pivots_but_a_regular_matrix_enters_by_one_new_factor(monkeypatch):
    # More than _EACH_UP_TO points whose pivots are tiny (no floor) but whose 𝐌 is regular:
    # one condition estimate and one factor for the block, where one point at a time took
    # one of each per point (an SMO start with 1,250 free points, a linear kernel: 124 s).
    import gpath.linalg

    monkeypatch.setattr(gpath.linalg, "_EACH_UP_TO", 0)
    labels, Q = _linear_margin_problem(60, 3, 1e-6)
    estimates = count_condition_estimates(monkeypatch)
    f = BorderedFactor()
    for k in range(10):
        f.insert(k, labels[k], Q[k, f.basis], Q[k, k])
    estimates.clear()
    new = np.arange(10, 60)
    assert f.insert_block(new, labels[new], Q[np.ix_(new, f.basis)], Q[np.ix_(new, new)])
    assert len(estimates) == 1
    big = _bordered(labels, Q)
    np.testing.assert_array_equal(f.matrix, big)
    np.testing.assert_array_equal(f.basis, np.arange(60))
    rhs = np.random.default_rng(2).standard_normal(61)
    x = f.solve(rhs)
    assert np.abs(big @ x - rhs).max() <= 1e-10 * (np.abs(big).max() * np.abs(x).max() + 1)
    # Without the ridge the block's 𝐌 is singular: refused, the factor as it was.
    g = BorderedFactor()
    Q0 = Q - 1e-6 * np.eye(60)
    for k in range(10):
        g.insert(k, labels[k], Q[k, g.basis], Q[k, k])
    matrix, R = g.matrix, g._r[:10, :10].copy()
    assert not g.insert_block(new, labels[new], Q0[np.ix_(new, g.basis)], Q0[np.ix_(new, new)])
    np.testing.assert_array_equal(g.matrix, matrix)
    np.testing.assert_array_equal(g._r[:10, :10], R)
    assert g.size == 10


@pytest.mark.parametrize("saved", [2, 4])
def test_a_factor_pickled_before_loads(saved):
    # Models saved before the floor kept two floats (ρ and the scale: the floor is then 0);
    # those saved while rcond was a third float beside it, four.
    import pickle

    labels, Q = _linear_margin_problem(8, 3, 1e-6)
    f = BorderedFactor(floor=1e-6)
    for k in range(8):
        f.insert(k, labels[k], Q[k, f.basis], Q[k, k])
    state = f.__getstate__()
    state["_floats"] = np.concatenate([state["_floats"], [1e-13]])[:saved]
    old = object.__new__(BorderedFactor)
    old.__setstate__(state)
    assert old._floats.tolist() == [f._rho, f._floats[1], 0.0 if saved == 2 else 1e-6]
    np.testing.assert_array_equal(old.matrix, f.matrix)
    assert pickle.loads(pickle.dumps(f))._floats[2] == 1e-6


def _used(f):
    """What a factor's reads see: R[:m, :m], Q_MM by slot, its small arrays and scalars (its
    free slots' order past its capacity aside)."""
    m, top = f.m, f._top
    return (f._r[:m, :m].copy(), f._q[:top, :top].copy(), f._y[:m].copy(), f._g[:m].copy(), f.basis.copy(),
            f._qs[:m].copy(), f._floats.copy(), int(f._ints[0]), top)


@pytest.mark.parametrize("seed", range(4))
def test_a_copy_into_the_factor_it_came_from_copies_what_its_log_names(seed):
    # A stream: each update copies the state's factor into the spent one's arrays (the factor it
    # was copied from) and changes the copy; the copy then takes only the rows of R and the Q
    # slots written since. Whatever the changes (inserts, deletes anywhere, a block, a refactor,
    # a rejected update that leaves the spare as it was, more slots than the log holds), that
    # copy must equal a full copy bit for bit.
    import gpath.linalg

    rng = np.random.default_rng(seed)
    labels, Q = _margin_problem(rng, 120, 4)
    state = BorderedFactor()
    for k in range(30):
        state.insert(k, labels[k], Q[k, state.basis], Q[k, k])
    logged = 0
    for step in range(80):
        full = state.copy()  # fresh arrays: a full copy
        twin = state.__dict__.get("_twin")
        spare = getattr(state, "spare", None)
        if (spare is not None and twin is not None and twin[0]() is spare._r
                and state._ints[gpath.linalg._LOGGED] <= gpath.linalg._LOG):
            logged += 1
        new = state.copy(into=spare)
        assert _equal(_used(new), _used(full))
        members = list(new.basis)
        kind = rng.choice(["insert", "delete", "both", "block", "refactor"], p=[0.3, 0.3, 0.3, 0.05, 0.05])
        if (kind in ("delete", "both") or new.size > 90) and len(members) > 2:
            new.delete(int(rng.integers(len(members))))
        if kind in ("insert", "both") or len(new.basis) < 3:
            outside = [i for i in range(120) if i not in list(new.basis)]
            k = int(rng.choice(outside))
            new.insert(k, labels[k], Q[k, new.basis], Q[k, k])
        if kind == "block" and new.size < 60:  # more slots than the log holds
            outside = np.array([i for i in range(120) if i not in list(new.basis)])
            block = rng.choice(outside, size=40, replace=False)
            assert new.insert_block(block, labels[block], Q[np.ix_(block, new.basis)], Q[np.ix_(block, block)])
        if kind == "refactor":
            new.refactor()
        if rng.random() < 0.15:  # rejected: the state stays, its spare untouched
            continue
        new.take_spare(state)
        state = new
        members = list(state.basis)
        np.testing.assert_array_equal(state.matrix, _bordered(labels[members], Q[np.ix_(members, members)]))
    assert logged > 40  # most copies took the log's way


def _equal(a, b):
    return all(np.array_equal(u, v) if isinstance(u, np.ndarray) else u == v for u, v in zip(a, b, strict=True))


@pytest.mark.parametrize("big_first", [True, False])
def test_a_diagonal_spread_over_twenty_orders_keeps_every_row(big_first):
    # Zero rows of a linear kernel (Q_kk the ridge 1e-6) beside rows of features of size
    # 5e6 and 1.6e7 (Q_kk = 2.5e13, 2.7e14): with ρ = the largest diagonal, ρ y yᵀ drowned
    # the ridge of the zero rows, and their pivots, against the largest diagonal, were
    # "tiny" and the condition estimate called 𝐌 singular. ρ now stays within 1e4 of the
    # smallest positive diagonal entry (a point that ρ would drown refactors), each pivot is
    # judged against its own row, the estimate scales the rows to a unit diagonal, and the
    # solves hold the margin equations to round-off, as LAPACK's LU solve does.
    X = np.array([[5e6, 0.0], [0.0, 0.0], [0.0, 0.0], [3e6, -1.6e7], [0.0, 0.0], [0.0, 0.0]])
    labels = np.array([1.0, -1.0, 1.0, -1.0, -1.0, 1.0])
    order = np.arange(6) if big_first else np.array([1, 2, 4, 5, 0, 3])
    X, labels = X[order], labels[order]
    Q = np.outer(labels, labels) * (X @ X.T + 1e-6 * np.eye(6))
    f = BorderedFactor()
    for k in range(6):
        f.insert(k, labels[k], Q[k, f.basis], Q[k, k])
    assert f.size == 6 and f._rho <= 1e4 * 1e-6
    big = _bordered(labels, Q)
    rhs = np.concatenate([[0.3], np.ones(6)])
    x_lu = np.linalg.solve(big, rhs)
    x = f.solve(rhs)
    # To the 4 digits that ρ may take from the smallest rows (it took every one of them):
    # α, b (in units of the margins y f) and each row of Q against its terms
    np.testing.assert_allclose(x[1:], x_lu[1:], rtol=1e-11, atol=0)
    assert abs(x[0] - x_lu[0]) <= 1e-11
    row_scale = np.abs(big) @ np.abs(x) + np.abs(rhs)
    assert np.all(np.abs(big @ x - rhs)[1:] <= 1e-11 * row_scale[1:])
