"""Poisoning attacks against Murmur's mechanisms, and what :mod:`ldp.integrity` makes of them.

Setting: k = 8 options, epsilon = 1, n = 2000 genuine respondents with answer shares
TRUTH (the target, option 3, truly 10 %), and m = round(beta n / (1 - beta)) fake reports, so
that fakes are a share beta of all reports (Cao et al.'s beta = m / (n + m)). The attacks of Cao,
Jia and Gong (USENIX Security 2021, section 4), built as packed reports and tallied like real ones:

- random value (RVA): each fake picks a uniformly random option and randomizes it with the
  mechanism, exactly like an honest respondent answering at random;
- random item (RIA): each fake picks a uniformly random option and sends its encoding without
  randomizing (k-RR: the option; unary: its one-hot vector over the sampled buckets; subset: a set
  holding it; OLH: a random hash and the option's hash value);
- maximal gain (MGA), target option 3: k-RR reports the target; unary encodings set the target's bit
  (dBitFlip samples it) and l = floor(E[W]) - 1 random other sampled bits, so that the weight is
  the honest mean (Cao et al.'s padding against detection); subset selection reports a set holding
  the target; OLH a random hash and the target's hash value.

For each mechanism, attack and beta: the detection rate (share of repetitions where the combined
test is significant at 5 %), the mean estimated fake share, and for the plain estimate (Norm-Sub
projection of the unbiased one) and the recovered one: the target's mean shift from its true share
and the mean of the maximum absolute error over options. beta = 0 is the false-alarm rate, measured
on TRUTH and on EDGE (five options no one chose: the least favorable case for the below-zero test).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ldp import integrity
from ldp.experiments import write_rows
from ldp.mechanisms import Mechanism, make_mechanism
from ldp.mechanisms.base import Tally
from ldp.mechanisms.bitflip import SampledUnaryEncoding
from ldp.mechanisms.krr import KRandomizedResponse
from ldp.mechanisms.local_hashing import OptimalLocalHashing
from ldp.mechanisms.subset import SubsetSelection
from ldp.simplex import project_onto_simplex

K, EPSILON, GENUINE, TARGET = 8, 1.0, 2000, 3
TRUTH = (0.30, 0.25, 0.15, 0.10, 0.10, 0.06, 0.03, 0.01)
EDGE = (0.5, 0.3, 0.2, 0.0, 0.0, 0.0, 0.0, 0.0)
SHARES = (0.01, 0.05, 0.10)
ATTACKS = ("random value", "random item", "maximal gain")
SETTINGS = {
    "k-RR": ("krr", {}),
    "OUE": ("oue", {}),
    "SUE": ("sue", {}),
    "OLH": ("olh", {}),
    "subset selection": ("subset", {}),
    "4BitFlip": ("dbitflip", {"d": 4}),
}


@dataclass(frozen=True)
class Row:
    mechanism: str
    attack: str
    fake_share: float
    detection_rate: float
    estimated_share: float
    plain_target_shift: float
    recovered_target_shift: float
    plain_max_error: float
    recovered_max_error: float


def _random_subsets(count: int, k: int, size: int, must: np.ndarray | None, rng: np.random.Generator) -> np.ndarray:
    """Boolean (count, k) rows with ``size`` options each, uniform, always holding ``must`` (if given)."""
    keys = rng.random((count, k))
    if must is not None:
        keys[np.arange(count), must] = -1.0
    chosen = np.argpartition(keys, size - 1, axis=1)[:, :size]
    rows = np.zeros((count, k), dtype=bool)
    np.put_along_axis(rows, chosen, True, axis=1)
    return rows


def _pack_bits(rows: np.ndarray) -> np.ndarray:
    return np.packbits(rows, axis=1, bitorder="little")


def _unary(mechanism: SampledUnaryEncoding, items: np.ndarray, pad: int, force: bool, rng: np.random.Generator):
    """Unary fakes: buckets sampled (holding the item if ``force``), the item's bit 1 if sampled, ``pad`` more ones."""
    count, k = items.size, mechanism.k
    sampled = _random_subsets(count, k, mechanism.d, items if force else None, rng)
    ones = sampled & (np.arange(k) == items[:, None])
    if pad:
        keys = np.where(sampled & ~ones, rng.random((count, k)), np.inf)
        extra = np.argpartition(keys, pad - 1, axis=1)[:, :pad]
        np.put_along_axis(ones, extra, True, axis=1)
    return np.hstack([_pack_bits(sampled), _pack_bits(ones)])


def fake_reports(
    mechanism: Mechanism, attack: str, count: int, rng: np.random.Generator, target: int = TARGET
) -> np.ndarray:
    """``count`` packed fake reports of one of ATTACKS against ``mechanism`` (target ``target``)."""
    k = mechanism.k
    if attack == "random value":
        return mechanism.randomize(rng.integers(0, k, count), rng=rng)
    items = rng.integers(0, k, count) if attack == "random item" else np.full(count, target)
    if isinstance(mechanism, KRandomizedResponse):
        return items.astype(np.uint8).reshape(-1, 1)
    if isinstance(mechanism, SubsetSelection):
        return _pack_bits(_random_subsets(count, k, mechanism.omega, items, rng))
    if isinstance(mechanism, OptimalLocalHashing):
        coefficients = rng.integers(0, mechanism.prime, size=(count, 3))
        return mechanism._pack(coefficients, mechanism.hash_values(coefficients, items[:, None])[:, 0])
    if isinstance(mechanism, SampledUnaryEncoding):
        if attack == "random item":
            return _unary(mechanism, items, 0, False, rng)
        distribution = integrity.weight_distribution(mechanism)
        assert distribution is not None  # every unary encoding has a weight distribution
        mean_weight = float(distribution @ np.arange(distribution.size))
        pad = int(np.clip(np.floor(mean_weight) - 1, 0, mechanism.d - 1))
        return _unary(mechanism, items, pad, True, rng)
    raise ValueError(f"no attack written for {mechanism.name!r}")


def _assess(mechanism: Mechanism, packed: np.ndarray) -> integrity.IntegrityResult:
    return integrity.assess(mechanism, mechanism.tally(packed), integrity.weight_profile(mechanism, packed))


def measure(
    label: str, attack: str, share: float, repetitions: int, rng: np.random.Generator, truth: tuple[float, ...] = TRUTH
) -> Row:
    name, params = SETTINGS[label]
    mechanism = make_mechanism(name, k=K, epsilon=EPSILON, **params)
    counts = np.round(np.array(truth) * GENUINE).astype(int)
    values = np.repeat(np.arange(K), counts)
    shares = counts / counts.sum()
    fakes = round(share * values.size / (1 - share))
    found, estimated = 0, 0.0
    shift, errors = np.zeros(2), np.zeros(2)
    for _ in range(repetitions):
        packed = mechanism.randomize(values, rng=rng)
        if fakes:
            packed = np.vstack([packed, fake_reports(mechanism, attack, fakes, rng)])
        result = _assess(mechanism, packed)
        found += result.significant
        estimated += result.fake_share
        for i, estimate in enumerate((result.plain, result.recovered)):
            shift[i] += estimate[TARGET] - shares[TARGET]
            errors[i] += np.abs(estimate - shares).max()
    r = repetitions
    return Row(label, attack, share, found / r, estimated / r, *(shift / r), *(errors / r))


def run(out: Path, repetitions: int = 500, seed: int = 16) -> list[Row]:
    """Every mechanism x attack x share, plus false alarms on TRUTH and EDGE (4 x the repetitions)."""
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    rows = []
    for label in SETTINGS:
        rows.append(measure(label, "none", 0.0, 4 * repetitions, rng))
        rows.append(measure(label, "none (edge)", 0.0, 4 * repetitions, rng, truth=EDGE))
        rows.extend(measure(label, a, s, repetitions, rng) for a in ATTACKS for s in SHARES)
    write_rows(out / "poisoning.csv", rows)
    return rows


def markdown(rows: list[Row]) -> str:
    """The table for docs/experiments.md (percentages)."""
    lines = [
        "| mechanism | attack | fakes | detected | est. share | target shift: plain | recovered "
        "| max error: plain | recovered |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.mechanism} | {r.attack} | {100 * r.fake_share:.0f} % | {100 * r.detection_rate:.1f} % | "
            f"{100 * r.estimated_share:.1f} % | {100 * r.plain_target_shift:+.1f} | "
            f"{100 * r.recovered_target_shift:+.1f} | "
            f"{100 * r.plain_max_error:.1f} | {100 * r.recovered_max_error:.1f} |"
        )
    return "\n".join(lines)


# -- Cao et al.'s maximal-gain attack against what "Automatic" picks --------------------------------

#: k = 5 options, epsilon = 1 (EPSILON), 2000 genuine respondents (GENUINE); the target, option 4, truly 10 %.
AUTO_K, AUTO_TARGET = 5, 4
AUTO_TRUTH = (0.30, 0.25, 0.20, 0.15, 0.10)
AUTO_SHARES = (0.05, 0.10)
#: What "Automatic" can pick for a choice question (:func:`ldp.advisor.recommend` over k from 2 to 64 and
#: epsilon from 0.1 to 10: k-RR, or subset selection with omega >= 2; in a recurring survey the memoized
#: dBitFlip, d = k or d = 1, :func:`surveys.series.memoization.memoized_choice`). At k = 5 and epsilon = 1 it
#: picks k-RR (dBitFlip with d = 5 when recurring); omega = 2 is its subset size at k = 5 below epsilon = 0.6.
AUTOMATIC: dict[str, tuple[str, dict[str, int]]] = {
    "k-RR": ("krr", {}),
    "subset selection (ω = 2)": ("subset", {"subset_size": 2}),
    "dBitFlip (d = k = 5)": ("dbitflip", {"d": 5}),
    "dBitFlip (d = 1)": ("dbitflip", {"d": 1}),
}
#: Mechanisms "Automatic" does not pick, measured for the results page's capability table.
REFERENCE: dict[str, tuple[str, dict[str, int]]] = {"OUE": ("oue", {}), "SUE": ("sue", {}), "OLH": ("olh", {})}


@dataclass(frozen=True)
class GainRow:
    """One mechanism at one fake share: how often flagged, and the target's error plain and recovered."""

    mechanism: str
    name: str
    automatic: bool
    fake_share: float
    runs: int
    flagged: float
    """False-alarm rate at fake share 0, detection rate otherwise."""
    plain_shift: float
    """Mean of the plain estimate of the target minus its true share (the attack's gain)."""
    recovered_shift: float
    plain_error: float
    """Mean absolute error of the plain estimate of the target."""
    recovered_error: float
    flagged_shift: float
    """Mean recovered target minus truth over the flagged runs only (what the page shows; nan if none)."""


def measure_gain(
    label: str, name: str, params: dict[str, int], share: float, repetitions: int, rng: np.random.Generator
) -> GainRow:
    """R runs of GENUINE honest reports of AUTO_TRUTH plus the maximal-gain fakes making up ``share``."""
    mechanism = make_mechanism(name, k=AUTO_K, epsilon=EPSILON, **params)
    values = np.repeat(np.arange(AUTO_K), np.round(np.array(AUTO_TRUTH) * GENUINE).astype(int))
    truth = AUTO_TRUTH[AUTO_TARGET]
    fakes = round(share * values.size / (1 - share))
    flagged, shifts, errors, when_flagged = 0, np.zeros(2), np.zeros(2), 0.0
    for _ in range(repetitions):
        packed = mechanism.randomize(values, rng=rng)
        if fakes:
            packed = np.vstack([packed, fake_reports(mechanism, "maximal gain", fakes, rng, target=AUTO_TARGET)])
        result = _assess(mechanism, packed)
        flagged += result.significant
        for i, estimate in enumerate((result.plain, result.recovered)):
            shifts[i] += estimate[AUTO_TARGET] - truth
            errors[i] += abs(estimate[AUTO_TARGET] - truth)
        if result.significant:
            when_flagged += result.recovered[AUTO_TARGET] - truth
    r = repetitions
    automatic = label in AUTOMATIC
    flagged_shift = when_flagged / flagged if flagged else float("nan")
    (plain_shift, recovered_shift), (plain_error, recovered_error) = shifts / r, errors / r
    return GainRow(
        label,
        name,
        automatic,
        share,
        r,
        flagged / r,
        plain_shift,
        recovered_shift,
        plain_error,
        recovered_error,
        flagged_shift,
    )


def run_automatic(repetitions: int = 200, honest: int = 400, seed: int = 26) -> list[GainRow]:
    """Every mechanism of AUTOMATIC and REFERENCE: ``honest`` runs without fakes, ``repetitions`` per share."""
    rng = np.random.default_rng(seed)
    rows = []
    for label, (name, params) in {**AUTOMATIC, **REFERENCE}.items():
        rows.append(measure_gain(label, name, params, 0.0, honest, rng))
        rows.extend(measure_gain(label, name, params, s, repetitions, rng) for s in AUTO_SHARES)
    return rows


def recovery_verdicts(rows: list[GainRow]) -> dict[str, bool]:
    """Per registry name: whether every measured setting of it earns a recovered estimate on the page.

    The page shows one only when the check flags the reports: the flagged runs' recovered estimate and
    the mean over all runs of what is shown (recovered when flagged, plain otherwise) must both be within
    integrity.RECOVERY_TOLERANCE of the truth on the target and closer than the plain estimate, at every
    fake share, with a false-alarm rate of at most integrity.ALPHA and the attack flagged in at least
    half of the runs at the largest share.
    """
    verdicts: dict[str, bool] = {}
    largest = max(AUTO_SHARES)
    for row in rows:
        if row.fake_share == 0:
            ok = row.flagged <= integrity.ALPHA
        else:
            shift = row.flagged_shift
            ok = bool(
                shift == shift and abs(shift) <= integrity.RECOVERY_TOLERANCE and abs(shift) < abs(row.plain_shift)
            )
            ok = ok and (row.fake_share < largest or row.flagged >= 0.5)
        verdicts[row.name] = verdicts.get(row.name, True) and ok
    return verdicts


def report(out: Path, repetitions: int = 500) -> str:
    """Everything ``python -m ldp.experiments poisoning`` prints: the issue-16 table (k = 8, every attack)
    and the issue-26 maximal-gain table (k = 5, what Automatic picks), both also written as CSV."""
    broad = markdown(run(out, repetitions=repetitions))
    automatic = run_automatic(repetitions=repetitions, honest=2 * repetitions)
    write_rows(out / "poisoning_automatic.csv", automatic)
    verifiable = run_verifiable(repetitions=repetitions)
    write_rows(out / "poisoning_verifiable.csv", verifiable)
    return f"{broad}\n\n{markdown_automatic(automatic)}\n\n{markdown_verifiable(verifiable)}"


def markdown_automatic(rows: list[GainRow]) -> str:
    """The maximal-gain table for docs/integrity.md (percentages and points)."""
    lines = [
        "| mechanism | Automatic | fakes | runs | flagged | gain: plain | recovered | recovered when flagged "
        "| abs. error: plain | recovered |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        flagged = "–" if r.flagged_shift != r.flagged_shift else f"{100 * r.flagged_shift:+.1f}"
        lines.append(
            f"| {r.mechanism} | {'yes' if r.automatic else 'no'} | {100 * r.fake_share:.0f} % | {r.runs} | "
            f"{100 * r.flagged:.1f} % | {100 * r.plain_shift:+.1f} | {100 * r.recovered_shift:+.1f} | {flagged} | "
            f"{100 * r.plain_error:.1f} | {100 * r.recovered_error:.1f} |"
        )
    return "\n".join(lines)


# -- the attack's gain with and without verifiable randomization (ldp.verifiable) ------------

#: k-RR as Automatic picks it at k = 5, and the binary designs at k = 2 (target "yes", truly 30 %).
VERIFIABLE: dict[str, tuple[str, int, tuple[float, ...], int]] = {
    "k-RR": ("krr", AUTO_K, AUTO_TRUTH, AUTO_TARGET),
    "Warner": ("warner", 2, (0.7, 0.3), 1),
    "forced response": ("forced-response", 2, (0.7, 0.3), 1),
}


@dataclass(frozen=True)
class VerifiableRow:
    mechanism: str
    fake_share: float
    runs: int
    epsilon: float
    """The verifiable channel's epsilon' (quantized to at most verifiable.MAX_SLOTS slots, <= EPSILON)."""
    gain_without: float
    """Mean plain estimate of the target minus truth under the maximal-gain attack (fakes report the target)."""
    gain_with: float
    """The same when every report goes through the verifiable channel: fakes can only input the target."""


def verifiable_gain(label: str, share: float, repetitions: int, rng: np.random.Generator) -> VerifiableRow:
    """The target's mean shift, without and with verifiable randomization, at a fake share ``share``.

    With it, a report is one slot of the channel the proofs enforce (ldp.verifiable): honest and fake
    reports are draws of the channel's row for their input, and the best a fake can do is input the
    target; the estimate inverts the channel. Drawing reports from that law is what the protocol yields
    (tests/ldp/test_verifiable.py enumerates it and checks that other answers are refused).
    """
    from ldp import verifiable  # noqa: PLC0415 - the group's constants are computed on import

    name, k, truth, target = VERIFIABLE[label]
    mechanism = make_mechanism(name, k=k, epsilon=EPSILON)
    channel = verifiable.Channel.of(mechanism)
    law = channel.probabilities()
    counts = np.round(np.array(truth) * GENUINE).astype(int)
    fakes = round(share * counts.sum() / (1 - share))
    inverse = np.linalg.inv(law.T)
    gain_without = gain_with = 0.0
    for _ in range(repetitions):
        attacked = mechanism.sample_tallies(counts, 1, rng=rng)[0]
        attacked[target] += fakes  # without: every fake reports the target
        estimate = mechanism.estimate(Tally(int(attacked.sum()), attacked))
        gain_without += project_onto_simplex(estimate.proportions)[target] - truth[target]
        drawn = sum(rng.multinomial(n_t, law[t]) for t, n_t in enumerate(counts)) + rng.multinomial(fakes, law[target])
        unbiased = inverse @ (drawn / drawn.sum())  # with: fakes input the target, the channel randomizes it
        gain_with += project_onto_simplex(unbiased)[target] - truth[target]
    r = repetitions
    return VerifiableRow(label, share, r, channel.epsilon(), gain_without / r, gain_with / r)


def run_verifiable(repetitions: int = 500, seed: int = 2021) -> list[VerifiableRow]:
    rng = np.random.default_rng(seed)
    return [verifiable_gain(label, share, repetitions, rng) for label in VERIFIABLE for share in AUTO_SHARES]


def markdown_verifiable(rows: list[VerifiableRow]) -> str:
    lines = [
        "| mechanism | fakes | runs | ε′ (verifiable) | gain without | gain with | bound (fakes' share) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.mechanism} | {100 * r.fake_share:.0f} % | {r.runs} | {r.epsilon:.4f} | "
            f"{100 * r.gain_without:+.1f} | {100 * r.gain_with:+.1f} | {100 * r.fake_share:.0f} |"
        )
    return "\n".join(lines)
