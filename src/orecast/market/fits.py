"""Fast fits of the fixed-order models: the same estimators as statsmodels, without its machinery.

`auto` ranks every candidate on ~120 rolling origins, so a cold forecast fits some 360 small
models. Through statsmodels' generic optimiser (numerical gradients over every parameter, result
objects with Hessians) that took 16-26 s of CPU. Each model here has a fixed specification, which
allows a much cheaper route to the same estimate:

* ARIMA(1,1,0): the exact Gaussian likelihood of an AR(1) on the changes, with the variance
  concentrated out, is a function of one parameter; it is maximised to 1e-10.
* ETS(A,Ad,N) and ETS(A,Ad,A): for given smoothing parameters the one-step errors are a linear
  filter of the data plus a linear function of the initial states, so the initial states have a
  closed-form least-squares solution and only the 3-4 smoothing parameters are searched
  (L-BFGS-B, statsmodels' bounds, start values and parametrisation). statsmodels searches the
  initial states numerically too and can stop short of this optimum.
* Theta: statsmodels' two-step estimator (OLS slope, SES with the first value as level), with the
  SES smoothing parameter found by a bounded scalar search.

`tests/market/test_fits.py` checks each against statsmodels on the bundled iron ore series.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize, minimize_scalar
from scipy.signal import lfilter

_EDGE = 1e-4  # statsmodels' bounds on the smoothing parameters: (1e-4, 1 - 1e-4)
_SEASONAL_CRITICAL = 2.705543454095404  # 10 % point of a chi-squared(1)


def acf(x: np.ndarray, nlags: int) -> np.ndarray:
    """Sample autocorrelations 0..nlags (statsmodels' `acf` with its defaults)."""
    d = np.asarray(x, dtype=float) - np.mean(x)
    denom = float(d @ d)
    return np.array([float(d[: len(d) - k] @ d[k:]) / denom for k in range(nlags + 1)])


def looks_seasonal(y: np.ndarray, season: int, *, changes: bool = True) -> bool:
    """The seasonality test of statsmodels' Theta: the autocorrelation at the seasonal lag against
    the 10 % critical value of a chi-squared(1). ETS applies it to the changes; Theta, like
    statsmodels' `ThetaModel` by default, to the values themselves."""
    x = np.diff(y) if changes else np.asarray(y, dtype=float)
    rho = acf(x, season)
    return bool(len(x) * rho[-1] ** 2 / np.sum(rho[:-1] ** 2) > _SEASONAL_CRITICAL)


# --- ARIMA(1,1,0) ------------------------------------------------------------------------------


def arima110(y: np.ndarray, horizon: int) -> tuple[np.ndarray, np.ndarray]:
    """Median path and forecast variance of ARIMA(1,1,0) without constant, exact MLE."""
    d = np.diff(y)
    n = len(d)
    # S(phi) = sum of squared innovations of the exact AR(1) likelihood: (1-phi^2) d1^2 + ...
    a = float(d @ d)
    b = float(d[1:] @ d[:-1])
    c = float(d[:-1] @ d[:-1]) - float(d[0] ** 2)

    def neg(phi: float) -> float:
        s = a - 2 * b * phi + c * phi * phi
        return 0.5 * n * np.log(max(s, 1e-300)) - 0.5 * np.log(1 - phi * phi)

    res = minimize_scalar(neg, bounds=(-0.9999, 0.9999), method="bounded",
                          options={"xatol": 1e-10})
    phi = float(res.x)
    sigma2 = (a - 2 * b * phi + c * phi * phi) / n
    powers = phi ** np.arange(1, horizon + 1)
    mean = y[-1] + d[-1] * np.cumsum(powers)
    psi = np.cumsum(phi ** np.arange(horizon))  # psi-weights of the integrated process
    return mean, sigma2 * np.cumsum(psi**2)


# --- ETS with additive errors and a damped additive trend -----------------------------------------


def _ets_matrices(params: np.ndarray, season: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Transition F, gain g and measurement w of the innovations form x_t = F x_{t-1} + g e_t,
    y_t = w x_{t-1} + e_t, states (level, trend, s_t, …, s_{t-m+1})."""
    alpha, beta, gamma, phi = params
    k = 2 + (season if season > 1 else 0)
    f = np.zeros((k, k))
    f[0, 0], f[0, 1], f[1, 1] = 1.0, phi, phi
    w = np.zeros(k)
    w[0], w[1] = 1.0, phi
    g = np.zeros(k)
    g[0], g[1] = alpha, beta
    if k > 2:
        f[2, k - 1] = 1.0
        f[3:, 2 : k - 1] = np.eye(k - 3)
        w[k - 1] = 1.0
        g[2] = gamma
    return f, g, w


def _ets_errors(
    params: np.ndarray, y: np.ndarray, season: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One-step errors for the best initial states: (errors, initial states, D = F - g w)."""
    f, g, w = _ets_matrices(params, season)
    k = len(w)
    n = len(y)
    dmat = f - np.outer(g, w)  # x_t = D x_{t-1} + g y_t, e_t = y_t - w x_{t-1}
    rows = np.empty((k + 1, k))  # w D^(t-1), t = 1..k+1
    rows[0] = w
    for j in range(1, k + 1):
        rows[j] = rows[j - 1] @ dmat
    # e = H(z) y with H = det(I - F/z) / det(I - D/z). The numerator is known from the model's
    # structure: (1 - 1/z)(1 - phi/z)(1 - 1/z^m). The denominator follows from H's first k+1
    # Markov parameters (1, -w D^(j-1) g) by solving (den * h) = num term by term.
    num = np.convolve([1.0, -1.0], [1.0, -params[3]])
    if k > 2:
        num = np.convolve(num, np.r_[1.0, np.zeros(season - 1), -1.0])
    h = np.concatenate(([1.0], -(rows[:k] @ g)))
    den = np.empty(k + 1)
    for j in range(k + 1):
        den[j] = num[j] - den[:j] @ h[j:0:-1]
    from_data = lfilter(num, den, y)
    # Each column of the rows w D^(t-1) follows the recurrence of den: an impulse response
    # through 1/den whose input is den convolved with the column's first k+1 terms.
    seed = np.zeros((n, k))
    toeplitz = np.zeros((k + 1, k + 1))
    for i in range(k + 1):
        toeplitz[i:, i] = den[: k + 1 - i]
    seed[: min(n, k + 1)] = (toeplitz @ rows)[: min(n, k + 1)]
    m = lfilter([1.0], den, seed, axis=0)
    free = slice(0, k - 1) if k > 2 else slice(0, k)  # the oldest seasonal is fixed at 0
    design = m[:, free]
    try:
        x0 = np.linalg.solve(design.T @ design, design.T @ from_data)
    except np.linalg.LinAlgError:
        x0, *_ = np.linalg.lstsq(design, from_data, rcond=None)
    state = np.zeros(k)
    state[free] = x0
    return from_data - design @ x0, state, dmat


def _ets_fit(y: np.ndarray, season: int) -> tuple[np.ndarray, np.ndarray, float, float]:
    """(params alpha, beta, gamma, phi; final state; sigma^2; AICc) of ETS(A,Ad,N|A)."""
    seasonal = season > 1
    n = len(y)

    def external(theta: np.ndarray) -> np.ndarray:
        # statsmodels' internal parametrisation: beta* = beta/alpha, gamma* = gamma/(1-alpha).
        alpha = theta[0]
        gamma = theta[2] * (1 - alpha) if seasonal else 0.0
        return np.array([alpha, theta[1] * alpha, gamma, theta[-1]])

    def objective(theta: np.ndarray) -> float:
        err, _, _ = _ets_errors(external(theta), y, season)
        sse = float(err @ err)
        return 0.5 * n * np.log(sse) if np.isfinite(sse) and sse > 0 else 1e10

    start = [0.1, 0.1] + ([0.01 / 0.9] if seasonal else []) + [0.98]
    bounds = [(_EDGE, 1 - _EDGE)] * (3 if seasonal else 2) + [(0.8, 0.98)]
    res = minimize(objective, np.array(start), method="SLSQP", bounds=bounds)
    params = external(res.x)
    err, state, dmat = _ets_errors(params, y, season)
    # Run the filter forward to the last state: x_n = D^n x_0 + (contribution of the data).
    f, g, w = _ets_matrices(params, season)
    x = state
    for value in y:
        x = dmat @ x + g * value
    sigma2 = float(err @ err) / n
    llf = -n / 2 * (np.log(2 * np.pi * sigma2) + 1)
    df = (5 if not seasonal else 6 + season) + 1  # statsmodels: parameters + 1 for the variance
    aicc = -2 * llf + 2 * df * n / (n - df - 1) if n - df - 1 > 0 else np.inf
    return params, x, sigma2, aicc


def ets(y: np.ndarray, horizon: int, season: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean path and forecast variance of ETS(A,Ad,N), or (A,Ad,A) when the changes test
    seasonal and its AICc is lower."""
    fits = [_ets_fit(y, 1)]
    if season > 1 and len(y) >= 3 * season and looks_seasonal(y, season):
        fits.append(_ets_fit(y, season))
    params, x, sigma2, _ = min(fits, key=lambda fit: fit[3] if np.isfinite(fit[3]) else np.inf)
    f, g, w = _ets_matrices(params, season if len(x) > 2 else 1)
    mean = np.empty(horizon)
    weights = np.empty(horizon)  # w F^(j-1) g, the effect of one error j steps on
    state, direction = x, g
    for j in range(horizon):
        mean[j] = w @ state
        weights[j] = w @ direction
        state, direction = f @ state, f @ direction
    variance = sigma2 * (1 + np.concatenate(([0.0], np.cumsum(weights[:-1] ** 2))))
    return mean, variance


# --- Theta ---------------------------------------------------------------------------------------


def _ses_errors(y: np.ndarray, alpha: float, level: float) -> np.ndarray:
    """One-step errors of simple exponential smoothing from initial `level`."""
    # l_t = alpha y_t + (1 - alpha) l_{t-1}; the forecast of y_t is l_{t-1}.
    levels = lfilter([alpha], [1.0, alpha - 1.0], y, zi=[(1 - alpha) * level])[0]
    return y - np.concatenate(([level], levels[:-1]))


def _decompose(y: np.ndarray, period: int) -> tuple[np.ndarray, str]:
    """The seasonal factors of statsmodels' `seasonal_decompose` (centred moving average,
    multiplicative when every factor is positive, else additive), one per position."""
    if period % 2 == 0:
        filt = np.r_[0.5, np.ones(period - 1), 0.5] / period
    else:
        filt = np.ones(period) / period
    half = len(filt) // 2
    trend = np.full(len(y), np.nan)
    trend[half : len(y) - half] = np.convolve(y, filt, mode="valid")
    for kind in ("mul", "add") if y.min() > 0 else ("add",):
        detrended = y / trend if kind == "mul" else y - trend
        means = np.array([np.nanmean(detrended[i::period]) for i in range(period)])
        means = means / means.mean() if kind == "mul" else means - means.mean()
        if kind == "add" or means.min() > 0:
            return np.tile(means, len(y) // period + 1)[: len(y)], kind
    raise AssertionError("unreachable")


def theta(y: np.ndarray, horizon: int, season: int) -> tuple[np.ndarray, np.ndarray]:
    """statsmodels' `ThetaModel(...).fit().forecast(horizon)` (theta = 2, two-step estimates)
    and the variance of its SES part (the IMA(1,1) formula statsmodels uses)."""
    n = len(y)
    seasonal = season > 1 and n >= 2 * season and looks_seasonal(y, season, changes=False)
    work, factors, kind = y, None, "mul"
    if seasonal:
        factors, kind = _decompose(y, season)
        work = y / factors if kind == "mul" else y - factors
    t = np.arange(n, dtype=float)
    b0 = float(np.linalg.lstsq(np.c_[np.ones(n), t], work, rcond=None)[0][1])
    res = minimize_scalar(lambda a: float(np.sum(_ses_errors(work, a, work[0]) ** 2)),
                          bounds=(0.0, 1.0), method="bounded", options={"xatol": 1e-10})
    alpha = float(res.x)
    last_level = work[-1] - _ses_errors(work, alpha, work[0])[-1]
    one_step = alpha * work[-1] + (1 - alpha) * last_level
    h = np.arange(horizon, dtype=float)
    if alpha > 0:
        h += 1 / alpha - (1 - alpha) ** n / alpha
    mean = 0.5 * b0 * h + one_step
    if factors is not None:
        season_ahead = factors[(n + np.arange(horizon)) % season]
        mean = mean * season_ahead if kind == "mul" else mean + season_ahead
    # Innovation variance: SES one-step errors at this alpha on the data as given, from the
    # heuristic initial level (intercept of a line through the first ten values).
    first = y[:10]
    level0 = float(np.linalg.lstsq(np.c_[np.ones(len(first)), np.arange(1, len(first) + 1)],
                                   first, rcond=None)[0][0])
    sigma2 = float(np.mean(_ses_errors(y, alpha, level0)[1:] ** 2))
    steps = np.arange(horizon)
    return mean, (1 + steps * (1 + (alpha - 1) ** 2)) * sigma2
