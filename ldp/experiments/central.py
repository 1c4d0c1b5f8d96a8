"""Seed 002's central-DP case study (Park, Oh; Statistics Korea): noise mechanisms and Modips.

1. Noise on a mean and a variance, at epsilon in {0.01, 0.05, 0.1, 0.5, 1, 3} and delta = 1e-5,
   10,000 repetitions, scored by MAE, RMSE and MAPE (formula 6.1):
   * Laplace (epsilon-DP), b = Delta_1 / epsilon, sampled by formula (3.3)
     X = mu - b sgn(U) ln(1 - 2|U|), U uniform on (-1/2, 1/2);
   * the classical Gaussian mechanism for (epsilon, delta)-DP, sigma = Delta_2 sqrt(2 ln(1.25/delta))
     / epsilon (Dwork and Roth, Thm 3.22; valid for epsilon < 1), which is the paper's
     "(epsilon, delta) DP" column: its MAPE ratio to mu-GDP matches this sigma ratio;
   * Gaussian DP: sigma = Delta_2 / mu with the mu that gives (epsilon, delta) through
     delta(epsilon, mu) = Phi(-epsilon/mu + mu/2) - e^epsilon Phi(-epsilon/mu - mu/2)   (ch. 4).
2. Modips (ch. 5-6): Normal likelihood, Normal-Gamma prior; the sufficient statistics (x_bar, s^2)
   get Laplace noise with l1 sensitivities (c1 - c0)/n and (c1 - c0)^2/n for data in [c0, c1],
   each with budget (epsilon - epsilon_0)/m (m = 2 statistics, epsilon_0 = 0 here); a Gibbs
   sampler (M = 5000, burn-in 4000) on the full conditionals (6.7)-(6.8) draws (mu, lambda);
   synthetic records come from N(mu, 1/lambda) at posterior draws; utility is the 95 % interval
   overlap I of formula (6.11).

The paper's data (DART net income of 1,476 listed companies, C + J + G industries) is not
public here. A synthetic stand-in has the paper's n = 1,476, bounds [c0, c1] = [-31,806.73,
47,003.02] (its minimum and maximum, in millions of won), mean 4,356.87 and variance
164,224,210.03 (Table 6.9). These four numbers are all the noise experiment depends on.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from ldp.privacy import gdp_delta
from ldp.privacy import gdp_mu as privacy_gdp_mu

EPSILONS = (0.01, 0.05, 0.1, 0.5, 1.0, 3.0)
DELTA = 1e-5
REPETITIONS = 10_000
PAPER_MU = {0.01: 0.00404732, 0.05: 0.0170583, 0.1: 0.03212011, 0.5: 0.139521, 1.0: 0.2653662, 3.0: 0.7056499}
#: Table 6.3 (net income), MAPE (%) of the noisy mean; the (epsilon, delta) row has no epsilon = 3.
PAPER_MAPE_MEAN = {
    "classical Gaussian": {0.01: 467.9, 0.05: 95.9, 0.1: 46.9, 0.5: 9.6, 1.0: 4.8},
    "Gaussian DP": {0.01: 244.6, 0.05: 57.0, 0.1: 30.2, 0.5: 7.0, 1.0: 3.7, 3.0: 1.4},
}

RECORDS = 1476
LOWER, UPPER = -31_806.73, 47_003.02
MEAN, VARIANCE = 4_356.87, 164_224_210.03
MODIPS_EPSILONS = (0.1, 1.0, 10.0)


# -- Laplace, formula (3.3) ---------------------------------------------------------------------


def laplace_noise(u: np.ndarray | float, sensitivity: float, epsilon: float, log: Callable[[Any], Any] = np.log) -> Any:
    """Formula (3.3) with mu = 0: X = -b sgn(U) ln(1 - 2|U|), b = sensitivity / epsilon.

    The paper's worked example (U = 0.3, Delta f = 1, epsilon = 0.2) prints 1.9897, which is what
    a base-10 logarithm gives; the Laplace distribution needs the natural one:

    >>> round(float(laplace_noise(0.3, 1, 0.2)), 4), round(float(laplace_noise(0.3, 1, 0.2, np.log10)), 4)
    (4.5815, 1.9897)
    """
    b = sensitivity / epsilon
    u = np.asarray(u, dtype=float)
    return -b * np.sign(u) * log(1 - 2 * np.abs(u))


def sample_laplace(
    size: int | tuple[int, ...], sensitivity: float, epsilon: float, rng: np.random.Generator
) -> np.ndarray:
    """Laplace(0, sensitivity/epsilon) noise by formula (3.3) from U uniform on (-1/2, 1/2)."""
    u = rng.uniform(-0.5, 0.5, size=size)
    return laplace_noise(u, sensitivity, epsilon)


# -- Gaussian DP ----------------------------------------------------------------------------------


def gdp_mu(epsilon: float, delta: float = DELTA) -> float:
    """The mu whose mu-GDP mechanism is exactly (epsilon, delta)-DP: :func:`ldp.privacy.gdp_mu`.

    >>> round(gdp_mu(1.0), 4)
    0.2681
    """
    return privacy_gdp_mu(epsilon, delta)


def classical_gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """Dwork and Roth's Gaussian mechanism: sigma = Delta_2 sqrt(2 ln(1.25/delta)) / epsilon."""
    return sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon


# -- the noise experiment ------------------------------------------------------------------------


def synthetic_financial_data(rng: np.random.Generator, records: int = RECORDS) -> np.ndarray:
    """Bounded data with the paper's n, bounds, mean and variance (see the module docstring)."""
    values = np.clip(rng.normal(MEAN, math.sqrt(VARIANCE), size=records), LOWER, UPPER)
    for _ in range(20):  # rescale to the exact moments, clip, repeat until both hold
        values = MEAN + (values - values.mean()) * math.sqrt(VARIANCE / values.var())
        values = np.clip(values, LOWER, UPPER)
    return values


@dataclass(frozen=True)
class NoiseRow:
    statistic: str
    mechanism: str
    epsilon: float
    noise_scale: float
    mae: float
    rmse: float
    mape: float


def utility(noisy: np.ndarray, truth: float) -> tuple[float, float, float]:
    """MAE, RMSE and MAPE (%) of repeated noisy values against the truth (formula 6.1)."""
    error = noisy - truth
    return float(np.abs(error).mean()), float(np.sqrt((error**2).mean())), float(100 * np.abs(error / truth).mean())


def noise_experiment(repetitions: int = REPETITIONS, seed: int = 2022) -> list[NoiseRow]:
    rng = np.random.default_rng(seed)
    data = synthetic_financial_data(rng)
    width = UPPER - LOWER
    statistics = {"mean": (data.mean(), width / RECORDS), "variance": (data.var(), width**2 / RECORDS)}
    rows = []
    for statistic, (truth, sensitivity) in statistics.items():
        for epsilon in EPSILONS:
            mechanisms = {
                "Laplace": ("b", sensitivity / epsilon, sample_laplace(repetitions, sensitivity, epsilon, rng)),
                "Gaussian DP": ("sigma", sensitivity / gdp_mu(epsilon), None),
            }
            if epsilon < 1:  # the classical analysis holds for epsilon < 1 only
                mechanisms["classical Gaussian"] = (
                    "sigma",
                    classical_gaussian_sigma(epsilon, DELTA, sensitivity),
                    None,
                )
            for name, (_, scale, noise) in mechanisms.items():
                noise = rng.normal(0, scale, repetitions) if noise is None else noise
                rows.append(NoiseRow(statistic, name, epsilon, scale, *utility(truth + noise, truth)))
    return rows


# -- Modips ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NormalGammaPrior:
    """mu ~ N(mu0, sigma0^2), lambda ~ Gamma(alpha0, rate beta0); vague: variances 1e10 (ch. 5)."""

    mu0: float = 0.0
    sigma0_squared: float = 1e10
    alpha0: float = 0.01
    beta0: float = 1e-6  # prior variance of lambda: alpha0 / beta0^2 = 1e10


def gibbs_normal_gamma(
    mean: float,
    variance: float,
    n: int,
    rng: np.random.Generator,
    iterations: int = 5000,
    burn_in: int = 4000,
    prior: NormalGammaPrior = NormalGammaPrior(),
) -> tuple[np.ndarray, np.ndarray]:
    """Posterior draws of (mu, lambda) from the sufficient statistics (x_bar, s^2), after burn-in.

    Full conditionals (6.7) and (6.8), with s^2 the biased sample variance (1/n) sum (x - x_bar)^2:
      mu | lambda ~ N((lambda n x_bar + mu0/sigma0^2) / (lambda n + 1/sigma0^2), 1 / (lambda n + 1/sigma0^2))
      lambda | mu ~ Gamma(n/2 + alpha0, rate = (n s^2 + n (x_bar - mu)^2)/2 + beta0)
    """
    mus, lambdas = np.empty(iterations), np.empty(iterations)
    lam = 1.0 / max(variance, 1e-12)
    for m in range(iterations):
        precision = lam * n + 1 / prior.sigma0_squared
        mu = rng.normal((lam * n * mean + prior.mu0 / prior.sigma0_squared) / precision, math.sqrt(1 / precision))
        rate = (n * variance + n * (mean - mu) ** 2) / 2 + prior.beta0
        lam = rng.gamma(n / 2 + prior.alpha0, 1 / rate)
        mus[m], lambdas[m] = mu, lam
    return mus[burn_in:], lambdas[burn_in:]


def interval_overlap(original: tuple[float, float], synthetic: tuple[float, float]) -> float:
    """Formula (6.11): I = (U_i - L_i) / (2 (U_o - L_o)) + (U_i - L_i) / (2 (U_s - L_s)); 0 if disjoint."""
    low, high = max(original[0], synthetic[0]), min(original[1], synthetic[1])
    if high <= low:
        return 0.0
    return (high - low) / (2 * (original[1] - original[0])) + (high - low) / (2 * (synthetic[1] - synthetic[0]))


def mean_interval(values: np.ndarray) -> tuple[float, float]:
    """Formula (6.10): x_bar -/+ t_(0.975, n-1) S / sqrt(n - 1)."""
    n = values.size
    half = stats.t.ppf(0.975, n - 1) * values.std() / math.sqrt(n - 1)
    return float(values.mean() - half), float(values.mean() + half)


@dataclass(frozen=True)
class ModipsRow:
    epsilon: float
    posterior_mean: float
    posterior_variance: float
    synthetic_mean: float
    synthetic_variance: float
    synthetic_min: float
    synthetic_q1: float
    synthetic_median: float
    synthetic_q3: float
    synthetic_max: float
    overlap: float


def modips(
    data: np.ndarray, epsilon: float, rng: np.random.Generator, epsilon0: float = 0.0, statistics: int = 2
) -> tuple[ModipsRow, np.ndarray]:
    """Sanitize (x_bar, s^2) with Laplace noise, sample the posterior, draw synthetic records."""
    n, width = data.size, UPPER - LOWER
    budget = (epsilon - epsilon0) / statistics
    noisy_mean = data.mean() + sample_laplace(1, width / n, budget, rng)[0]
    # A noisy variance can come out negative; the posterior needs a positive one.
    noisy_variance = max(data.var() + sample_laplace(1, width**2 / n, budget, rng)[0], 1e-9 * width**2)
    mus, lambdas = gibbs_normal_gamma(noisy_mean, noisy_variance, n, rng)
    draw = rng.integers(0, mus.size, size=n)
    synthetic = rng.normal(mus[draw], 1 / np.sqrt(lambdas[draw]))
    low, q1, median, q3, high = map(float, np.percentile(synthetic, [0, 25, 50, 75, 100]))
    row = ModipsRow(
        epsilon,
        float(mus.mean()),
        float(1 / lambdas.mean()),
        float(synthetic.mean()),
        float(synthetic.var()),
        low,
        q1,
        median,
        q3,
        high,
        interval_overlap(mean_interval(data), mean_interval(synthetic)),
    )
    return row, synthetic


def modips_experiment(seed: int = 2023, repetitions: int = 1) -> list[ModipsRow]:
    """Modips at each epsilon; with repetitions > 1 the rows are averaged."""
    rng = np.random.default_rng(seed)
    data = synthetic_financial_data(rng)
    rows = []
    for epsilon in MODIPS_EPSILONS:
        runs = [modips(data, epsilon, rng)[0] for _ in range(repetitions)]
        fields = list(asdict(runs[0]))
        rows.append(ModipsRow(**{f: float(np.mean([getattr(r, f) for r in runs])) for f in fields}))
    return rows


def mu_table(delta: float = DELTA) -> list[dict[str, float]]:
    """The exact mu for each epsilon against the paper's table, with delta at the paper's mu."""
    return [
        {
            "epsilon": e,
            "mu_exact": gdp_mu(e, delta),
            "mu_paper": PAPER_MU[e],
            "relative_difference": PAPER_MU[e] / gdp_mu(e, delta) - 1,
            "delta_at_paper_mu": gdp_delta(e, PAPER_MU[e]),
        }
        for e in EPSILONS
    ]


def run(out: Path, repetitions: int = REPETITIONS, modips_repetitions: int = 20) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    mus = mu_table()
    noise = noise_experiment(repetitions)
    modips_rows = modips_experiment(repetitions=modips_repetitions)
    for name, rows in (
        ("gdp_mu.csv", mus),
        ("noise.csv", [asdict(r) for r in noise]),
        ("modips.csv", [asdict(r) for r in modips_rows]),
    ):
        with (out / name).open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    return {"mu": mus, "noise": noise, "modips": modips_rows}
