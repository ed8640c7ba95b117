"""The forecasting methods: thin, uniform wrappers over statsmodels.

Each method maps an array of (possibly log) values to a point path and symmetric Gaussian bounds
per level, in the same space. The random walk and drift are closed-form (as in statsforecast);
ETS, ARIMA and Theta are statsmodels' implementations, never re-derived here.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from orecast.market.errors import MarketError

METHODS: tuple[str, ...] = ("naive", "drift", "ets", "arima", "theta", "ensemble")
ENSEMBLE_MEMBERS: tuple[str, ...] = ("ets", "arima", "theta")
METHOD_HELP: dict[str, str] = {
    "naive": "random walk: the last value, bands widening with sqrt(h)",
    "drift": "random walk with drift: the average past change extrapolated",
    "ets": (
        "exponential smoothing ETS(A,Ad,N), or (A,Ad,A) when the changes test seasonal and the "
        "seasonal fit has the lower AICc"
    ),
    "arima": "ARIMA(1,1,0) on the differenced series, without drift",
    "theta": "Theta method (statsmodels ThetaModel), deseasonalised when a season tests significant",
    "ensemble": "the average of ETS, ARIMA and Theta paths and bounds",
    "nowcast": (
        "random walk from the month-end level of a daily indicator (DCE iron ore futures): the last "
        "monthly average times month-end / monthly-average futures; bands from its past errors"
    ),
    "auto": "the method with the lowest recent MAE in a rolling backtest before the origin",
}

# ARIMA(1,1,0): the first-order autocorrelation of changes is what monthly averages and futures
# momentum leave behind; drift was left out because a decade of iron ore has no reliable trend.
ARIMA_ORDER = (1, 1, 0)


@dataclass(frozen=True, slots=True)
class ModelPath:
    """One forecast from one origin, in model space (logs when the series is modelled in logs)."""

    mean: np.ndarray
    lower: dict[int, np.ndarray]
    upper: dict[int, np.ndarray]
    fallback: bool = False  # the model failed to fit and the random walk stood in


def load_models() -> None:
    """Import statsmodels' model modules (slow to import, so only when a model is first fitted)."""
    import statsmodels.tsa.arima.model  # noqa: F401
    import statsmodels.tsa.exponential_smoothing.ets  # noqa: F401
    import statsmodels.tsa.forecasting.theta  # noqa: F401
    import statsmodels.tsa.holtwinters  # noqa: F401


def check_method(method: str, *, allow_auto: bool = True) -> str:
    name = method.strip().lower()
    allowed = (*METHODS, "nowcast", "auto") if allow_auto else (*METHODS, "nowcast")
    if name not in allowed:
        raise MarketError(f"unknown method {method!r}; use one of {', '.join(allowed)}")
    return name


def check_levels(levels: Sequence[float]) -> tuple[int, ...]:
    try:
        out = tuple(sorted({int(round(float(lv))) for lv in levels}))
    except (TypeError, ValueError):
        raise MarketError(f"levels must be numbers between 0 and 100; got {levels!r}") from None
    if not out or any(not 0 < lv < 100 for lv in out):
        raise MarketError(f"levels must be between 0 and 100 (exclusive); got {list(levels)}")
    return out


def _z(level: int) -> float:
    return NormalDist().inv_cdf(0.5 + level / 200.0)


def gaussian(mean: np.ndarray, sd: np.ndarray, levels: tuple[int, ...]) -> ModelPath:
    return ModelPath(
        mean=mean,
        lower={lv: mean - _z(lv) * sd for lv in levels},
        upper={lv: mean + _z(lv) * sd for lv in levels},
    )


def _naive(y: np.ndarray, horizon: int, levels: tuple[int, ...]) -> ModelPath:
    steps = np.arange(1, horizon + 1)
    diffs = np.diff(y)
    sigma = float(np.sqrt(np.mean(diffs**2))) if len(diffs) else 0.0
    return gaussian(np.full(horizon, y[-1]), sigma * np.sqrt(steps), levels)


def _drift(y: np.ndarray, horizon: int, levels: tuple[int, ...]) -> ModelPath:
    steps = np.arange(1, horizon + 1)
    diffs = np.diff(y)
    slope = float(diffs.mean())
    sigma = float(diffs.std(ddof=1)) if len(diffs) > 1 else 0.0
    # Forecasting: Principles and Practice, table 5.2: the slope's own uncertainty widens the band.
    sd = sigma * np.sqrt(steps * (1 + steps / max(len(y) - 1, 1)))
    return gaussian(y[-1] + slope * steps, sd, levels)


def looks_seasonal(y: np.ndarray, season: int) -> bool:
    """The seasonality test statsmodels' Theta uses: autocorrelation of the changes at the
    seasonal lag, against the 10 % critical value of a chi-squared(1). It spares a seasonal ETS
    fit (the slowest model here) on series with no season, such as iron ore."""
    from statsmodels.tsa.stattools import acf

    changes = np.diff(y)
    rho = acf(changes, nlags=season, fft=True)
    denominator = float(np.sum(rho[:-1] ** 2))
    return bool(len(changes) * rho[-1] ** 2 / denominator > 2.705543454095404)


def _ets(y: np.ndarray, horizon: int, levels: tuple[int, ...], season: int) -> ModelPath:
    import pandas as pd
    from statsmodels.tsa.exponential_smoothing.ets import ETSModel

    # statsmodels' ETS prediction frame needs an index; a RangeIndex is enough.
    y = pd.Series(y)
    fits = [ETSModel(y, error="add", trend="add", damped_trend=True).fit(disp=False)]
    if season > 1 and len(y) >= 3 * season and looks_seasonal(y.to_numpy(), season):
        fits.append(
            ETSModel(
                y, error="add", trend="add", damped_trend=True, seasonal="add",
                seasonal_periods=season,
            ).fit(disp=False)
        )
    best = min(fits, key=lambda r: r.aicc if np.isfinite(r.aicc) else np.inf)
    pred = best.get_prediction(start=len(y), end=len(y) + horizon - 1)
    # Additive-error ETS has exact Gaussian intervals: the same numbers as `summary_frame`,
    # without building a frame per level.
    mean = np.asarray(pred.predicted_mean, dtype=float)
    return gaussian(mean, np.sqrt(np.asarray(pred.var_pred_mean, dtype=float)), levels)


def _arima(y: np.ndarray, horizon: int, levels: tuple[int, ...]) -> ModelPath:
    from statsmodels.tsa.arima.model import ARIMA

    result = ARIMA(y, order=ARIMA_ORDER).fit()
    pred = result.get_forecast(horizon)
    mean = np.asarray(pred.predicted_mean, dtype=float)
    sd = np.sqrt(np.asarray(pred.var_pred_mean, dtype=float))
    return gaussian(mean, sd, levels)


def _theta(y: np.ndarray, horizon: int, levels: tuple[int, ...], season: int) -> ModelPath:
    from statsmodels.tsa.forecasting.theta import ThetaModel
    from statsmodels.tsa.holtwinters import SimpleExpSmoothing

    seasonal = season > 1 and len(y) >= 2 * season
    result = ThetaModel(y, period=season if seasonal else 1, deseasonalize=seasonal).fit()
    mean = np.asarray(result.forecast(horizon), dtype=float)
    alpha = float(result.params.iloc[1])
    # statsmodels estimates the innovation variance by refitting an ARIMA(0,1,1) by MLE, which
    # takes ~0.3 s near a unit root; the SES one-step residuals at the fitted alpha estimate the
    # same variance in milliseconds. The h-step formula is statsmodels' own (IMA(1,1) structure).
    ses = SimpleExpSmoothing(y, initialization_method="estimated").fit(
        smoothing_level=alpha, optimized=False
    )
    sigma2 = float(np.mean(np.asarray(ses.resid, dtype=float)[1:] ** 2))
    steps = np.arange(horizon)
    sd = np.sqrt((1 + steps * (1 + (alpha - 1) ** 2)) * sigma2)
    return gaussian(mean, sd, levels)


def combine(paths: Sequence[ModelPath]) -> ModelPath:
    """Average paths and bounds (quantile averaging), a simple combination that is hard to beat."""
    levels = paths[0].lower.keys()
    return ModelPath(
        mean=np.mean([p.mean for p in paths], axis=0),
        lower={lv: np.mean([p.lower[lv] for p in paths], axis=0) for lv in levels},
        upper={lv: np.mean([p.upper[lv] for p in paths], axis=0) for lv in levels},
        fallback=any(p.fallback for p in paths),
    )


def predict(
    method: str, y: np.ndarray, horizon: int, levels: tuple[int, ...], season: int = 1
) -> ModelPath:
    """Fit `method` to `y` (model space) and forecast `horizon` steps with bounds per level."""
    if method == "naive":
        return _naive(y, horizon, levels)
    if method == "drift":
        return _drift(y, horizon, levels)
    if method == "ensemble":
        return combine([predict(m, y, horizon, levels, season) for m in ENSEMBLE_MEMBERS])
    try:
        with warnings.catch_warnings():
            # Convergence chatter from statsmodels says nothing the backtest does not measure.
            warnings.simplefilter("ignore")
            if method == "ets":
                path = _ets(y, horizon, levels, season)
            elif method == "arima":
                path = _arima(y, horizon, levels)
            elif method == "theta":
                path = _theta(y, horizon, levels, season)
            else:
                raise MarketError(f"unknown method {method!r}")
    except (np.linalg.LinAlgError, ValueError, IndexError) as exc:
        if isinstance(exc, MarketError):
            raise
        path = None
    ok = path is not None and all(
        np.isfinite(a).all() for a in (path.mean, *path.lower.values(), *path.upper.values())
    )
    if not ok:
        fallback = _naive(y, horizon, levels)
        return ModelPath(fallback.mean, fallback.lower, fallback.upper, fallback=True)
    return path
