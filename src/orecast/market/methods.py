"""The forecasting methods: uniform wrappers that return a path with Gaussian bounds.

Each method maps an array of (possibly log) values to a point path and symmetric Gaussian bounds
per level, in the same space. The random walk and drift are closed-form (as in statsforecast);
ETS, ARIMA and Theta are statsmodels' estimators computed by `orecast.market.fits` (checked
against statsmodels in the tests), because `auto` fits hundreds of them.
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
    "theta": "Theta method (as statsmodels' ThetaModel), deseasonalised when a season tests significant",
    "ensemble": "the average of ETS, ARIMA and Theta paths and bounds",
    "nowcast": (
        "the last monthly average moved as a daily indicator's (DCE iron ore futures') monthly average "
        "moved over the months it is known past it, then a random walk from the indicator's last level "
        "(its last month's end over that month's average); bands from its past errors"
    ),
    "auto": "the method with the lowest recent MAE in a rolling backtest before the origin",
}

@dataclass(frozen=True, slots=True)
class ModelPath:
    """One forecast from one origin, in model space (logs when the series is modelled in logs)."""

    mean: np.ndarray
    lower: dict[int, np.ndarray]
    upper: dict[int, np.ndarray]
    fallback: bool = False  # the model failed to fit and the random walk stood in


def load_models() -> None:
    """Import the numerical modules the model fits use (once, before the first fit)."""
    import orecast.market.fits  # noqa: F401


def check_method(method: str, *, allow_auto: bool = True) -> str:
    name = method.strip().lower()
    allowed = (*METHODS, "nowcast", "auto") if allow_auto else (*METHODS, "nowcast")
    if name not in allowed:
        raise MarketError(f"unknown method {method!r}; use one of {', '.join(allowed)}",
                          "unknown_method", method=method, choices=list(allowed))
    return name


def check_levels(levels: Sequence[float]) -> tuple[int, ...]:
    try:
        out = tuple(sorted({int(round(float(lv))) for lv in levels}))
    except (TypeError, ValueError):
        raise MarketError(f"levels must be numbers between 0 and 100; got {levels!r}",
                          "bad_levels", value=repr(levels)) from None
    if not out or any(not 0 < lv < 100 for lv in out):
        raise MarketError(f"levels must be between 0 and 100 (exclusive); got {list(levels)}",
                          "bad_levels", value=repr(list(levels)))
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


def _ets(y: np.ndarray, horizon: int, levels: tuple[int, ...], season: int) -> ModelPath:
    from orecast.market.fits import ets

    mean, variance = ets(y, horizon, season)
    return gaussian(mean, np.sqrt(variance), levels)


# ARIMA(1,1,0): the first-order autocorrelation of changes is what monthly averages and futures
# momentum leave behind; drift was left out because a decade of iron ore has no reliable trend.
def _arima(y: np.ndarray, horizon: int, levels: tuple[int, ...]) -> ModelPath:
    from orecast.market.fits import arima110

    mean, variance = arima110(y, horizon)
    return gaussian(mean, np.sqrt(variance), levels)


def _theta(y: np.ndarray, horizon: int, levels: tuple[int, ...], season: int) -> ModelPath:
    from orecast.market.fits import theta

    mean, variance = theta(y, horizon, season)
    return gaussian(mean, np.sqrt(variance), levels)


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
            # Overflow chatter from a diverging fit says nothing the backtest does not measure.
            warnings.simplefilter("ignore")
            if method == "ets":
                path = _ets(y, horizon, levels, season)
            elif method == "arima":
                path = _arima(y, horizon, levels)
            elif method == "theta":
                path = _theta(y, horizon, levels, season)
            else:
                raise MarketError(f"unknown method {method!r}", "unknown_method", method=method,
                                  choices=[*METHODS, "nowcast"])
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
