"""The two-phase experiment's arms run end to end (ldp.experiments.adaptive, a few surveys)."""

from __future__ import annotations

import numpy as np

from ldp.experiments.adaptive import adaptive_errors, shares


def test_a_skewed_phase_one_leads_the_optimistic_rule_to_focus_and_the_joint_estimate_is_close():
    """k = 20, Zipf(1.1), 1,000 respondents at epsilon = 2 (where the docs' table has the optimistic
    rule focus in 85 of 100 surveys): in 8 seeded surveys it focuses at least once, and every
    survey's largest error stays below 0.25 (the fixed design's mean there is 0.05)."""
    population = np.random.default_rng([29, 20, 1000]).multinomial(1000, shares("zipf", 20))
    one = np.random.default_rng(1).multivariate_hypergeometric(population, 150)
    errors, used = adaptive_errors(one, population - one, 20, 2.0, 8, np.random.default_rng(2), "optimistic")
    assert "focus" in used
    assert errors.shape == (8,) and np.all(errors < 0.25)
    guarded, kept = adaptive_errors(one, population - one, 20, 2.0, 8, np.random.default_rng(2), "guarded")
    assert kept == "subset2 8"
