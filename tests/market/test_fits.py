"""The fast fits give statsmodels' estimates (the implementations they replace) on real data."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from orecast.market import fits, load_series

ORIGINS = (130, 187, 230)  # iron ore prefixes: non-seasonal and seasonal ETS, both Theta kinds


@pytest.fixture(scope="module")
def logs() -> np.ndarray:
    return np.log(load_series("iron_ore_wb_monthly").to_numpy())


def _close(mean, var, ref_mean, ref_var, *, mean_tol=2e-4, sd_tol=5e-4) -> None:
    np.testing.assert_allclose(mean, ref_mean, atol=mean_tol)
    np.testing.assert_allclose(np.sqrt(var), np.sqrt(ref_var), rtol=sd_tol)


@pytest.mark.parametrize("origin", ORIGINS)
def test_arima110_is_statsmodels_exact_mle(logs, origin):
    from statsmodels.tsa.arima.model import ARIMA

    y = logs[: origin + 1]
    ref = ARIMA(y, order=(1, 1, 0)).fit().get_forecast(6)
    mean, var = fits.arima110(y, 6)
    _close(mean, var, ref.predicted_mean, ref.var_pred_mean, mean_tol=1e-5)


@pytest.mark.parametrize("origin", ORIGINS)
def test_ets_matches_statsmodels_etsmodel(logs, origin):
    from statsmodels.tsa.exponential_smoothing.ets import ETSModel

    y = pd.Series(logs[: origin + 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        candidates = [ETSModel(y, error="add", trend="add", damped_trend=True).fit(disp=False)]
        if fits.looks_seasonal(y.to_numpy(), 12):
            candidates.append(ETSModel(y, error="add", trend="add", damped_trend=True,
                                       seasonal="add", seasonal_periods=12).fit(disp=False))
    best = min(candidates, key=lambda r: r.aicc)
    ref = best.get_prediction(start=len(y), end=len(y) + 5)
    mean, var = fits.ets(y.to_numpy(), 6, 12)
    _close(mean, var, ref.predicted_mean, ref.var_pred_mean)


@pytest.mark.parametrize("origin", ORIGINS)
def test_theta_matches_statsmodels_thetamodel(logs, origin):
    from statsmodels.tsa.forecasting.theta import ThetaModel

    y = logs[: origin + 1]
    ref = ThetaModel(y, period=12, deseasonalize=True).fit().forecast(6)
    mean, _ = fits.theta(y, 6, 12)
    np.testing.assert_allclose(mean, np.asarray(ref), atol=1e-4)


def test_seasonality_test_is_statsmodels_acf(logs):
    from statsmodels.tsa.stattools import acf

    changes = np.diff(logs)
    np.testing.assert_allclose(fits.acf(changes, 12), acf(changes, nlags=12, fft=True), atol=1e-12)


@pytest.mark.parametrize("season", [1, 12])
def test_each_ets_form_has_statsmodels_likelihood_aicc_and_path(season):
    from statsmodels.tsa.exponential_smoothing.ets import ETSModel

    y = load_series("china_pmi_monthly").to_numpy()[-150:]  # PMI: levels, a seasonal index
    seasonal = {"seasonal": "add", "seasonal_periods": 12} if season > 1 else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = ETSModel(pd.Series(y), error="add", trend="add", damped_trend=True,
                       **seasonal).fit(disp=False)
    params, state, sigma2, aicc = fits._ets_fit(y, season)
    assert aicc == pytest.approx(ref.aicc, abs=0.05)  # decides between the two forms
    f, _, w = fits._ets_matrices(params, season)
    path = []
    for _ in range(6):
        path.append(w @ state)
        state = f @ state
    ref_path = ref.get_prediction(start=len(y), end=len(y) + 5).predicted_mean
    np.testing.assert_allclose(path, ref_path, atol=2e-3)  # PMI points
