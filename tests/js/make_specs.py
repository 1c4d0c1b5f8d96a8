"""Write tests/js/specs.json: client specs made by ``ldp``, for the JavaScript tests, and
static/ldp/constants.js: the bounds and mechanism names the browser shares with ``ldp``.

    python -m tests.js.make_specs

tests/ldp/test_js_specs.py fails if the committed files differ from what ldp makes now, so
the JavaScript is always tested against the server's real specs. Numeric mechanisms' specs
follow the categorical ones in specs.json; tests/js/numeric_tables.json holds, for the small
numeric cases, Python's exact report distribution P(report | grid point) to compare with the
one the JavaScript derives from the spec. tests/js/privacy_table.json holds, for those specs and a
few more edge cases, the spec and the privacy ldp states for it (worst-case ln ratio, and delta at
epsilon for the Gaussian), which static/ldp/epsilon.js must recompute from the spec alone.
tests/js/memo_tables.json holds what ldp computes for
RAPPOR, memoization and free text (Bloom positions, epsilons, memoized responses for fixed
secrets, normalized strings), which rappor.test.mjs, memo.test.mjs and text.test.mjs must match.
static/ldp/constants.js is served to the browser: the JavaScript mirrors import every bound and
every family's mechanism names from it instead of copying them by hand.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from ldp import make_mechanism, make_numeric_mechanism
from ldp.crosstab import declared_mechanism
from ldp.designs import DESIGNS
from ldp.mechanisms import OptimalLocalHashing
from ldp.multiselect import PaddingAndSampling, make_set_mechanism
from tests.js import memo_tables

PATH = Path(__file__).with_name("specs.json")
TABLES_PATH = Path(__file__).with_name("numeric_tables.json")
PRIVACY_PATH = Path(__file__).with_name("privacy_table.json")
MEMO_PATH = Path(__file__).with_name("memo_tables.json")
MULTISELECT_PATH = Path(__file__).with_name("multiselect_specs.json")
DESIGN_TABLES_PATH = Path(__file__).with_name("design_tables.json")
CONSTANTS_PATH = Path(__file__).resolve().parents[2] / "static" / "ldp" / "constants.js"

CASES = {
    "krr-k5": ("krr", 5, 1.0, {}),
    "krr-k2": ("krr", 2, 0.5, {}),
    "krr-k12": ("krr", 12, 3.0, {}),
    "focus-k5-m2": ("focus", 5, 1.0, {"focus": [3, 0]}),
    "focus-k20-m4": ("focus", 20, 0.5, {"focus": [0, 1, 2, 3], "within": list(range(1, 17))}),
    "cms-default": ("cms", 5, 2.0, {}),
    "cms-small": ("cms", 5, 1.0, {"hash_count": 16, "width": 16, "hash_seed": 1}),
    "cms-tiny": ("cms", 3, 1.0, {"hash_count": 3, "width": 4, "hash_seed": 1}),
    "4bitflip": ("dbitflip", 5, 1.0, {"d": 4}),
    "5bitflip": ("dbitflip", 5, 0.5, {"d": 5}),
    "1bitflip": ("dbitflip", 5, 1.0, {"d": 1}),
    "3bitflip-k8": ("dbitflip", 8, 2.0, {"d": 3}),
    "sue": ("sue", 5, 1.0, {}),
    "oue": ("oue", 5, 1.0, {}),
    "oue-k3": ("oue", 3, 2.0, {}),
    "olh": ("olh", 5, 2.0, {}),
    "olh-tiny": ("olh", 3, 1.0, {"range_size": 3, "prime": 5}),
    "subset": ("subset", 5, 0.5, {}),
    "subset-k6": ("subset", 6, 1.0, {"subset_size": 3}),
    "hadamard": ("hadamard", 5, 1.0, {}),
    "hadamard-k20": ("hadamard", 20, 2.0, {}),
    "hcms": ("hcms", 5, 2.0, {"hash_count": 16, "width": 16, "hash_seed": 1}),
    "hcms-tiny": ("hcms", 3, 1.0, {"hash_count": 3, "width": 4, "hash_seed": 1}),
    # Randomized-response designs (ldp/designs/): the literature's parameters, and the choice at epsilon.
    "forced-yes-no": ("forced-response", 2, math.log(4), {"forced": ["1/5", "1/5"]}),
    "forced-k3-dice": ("forced-response", 3, math.log(7), {"forced": ["1/6", "1/12", "1/4"]}),
    "forced-k5": ("forced-response", 5, 1.0, {}),
    "unrelated-yes-no": ("unrelated-question", 2, math.log(3), {"p": "1/2", "pi": ["1/2", "1/2"]}),
    "unrelated-k3": ("unrelated-question", 3, math.log(13), {"p": "2/3", "pi": ["1/2", "1/3", "1/6"]}),
    "unrelated-k4": ("unrelated-question", 4, 2.0, {}),
    "warner": ("warner", 2, math.log(3), {"p": "3/4"}),
    "warner-default": ("warner", 2, 0.5, {}),
    "crosswise": ("crosswise", 2, math.log(3), {"p": "1/4"}),
    "crosswise-default": ("crosswise", 2, 2.0, {}),
}

# name, lo, hi, epsilon, params; the small ones (grid <= 10) also get Python's exact table.
NUMERIC_CASES = {
    "num-laplace": ("laplace", 0, 10, 1.0, {"grid": 10}),
    "num-laplace-g1": ("laplace", 0, 1, 0.5, {"grid": 1}),
    "num-laplace-default": ("laplace", -5, 20, 2.0, {}),
    "num-gaussian": ("gaussian", 0, 10, 1.0, {"delta": 1e-5}),
    "num-gaussian-eps01": ("gaussian", 0, 10, 0.1, {"delta": 1e-5}),
    "num-1bitmean": ("1bitmean", 0, 10, 1.0, {"grid": 10}),
    "num-duchi": ("duchi", -1, 1, 0.5, {"grid": 4}),
    "num-piecewise": ("piecewise", 0, 10, 2.0, {"grid": 10}),
    "num-piecewise-default": ("piecewise", 0, 100, 1.0, {}),
    "num-hybrid": ("hybrid", 0, 10, 2.0, {"grid": 10}),
    "num-hybrid-low": ("hybrid", 0, 10, 0.5, {"grid": 10}),
}


# Edge cases for the privacy table only: boundaries of k, d, omega, the Hadamard size, OLH's prime.
PRIVACY_CASES = {
    "focus-k2-m1-eps10": ("focus", 2, 10.0, {"focus": [1]}),
    "focus-k256-m8-eps001": ("focus", 256, 0.01, {"focus": list(range(8))}),
    "krr-k2-eps10": ("krr", 2, 10.0, {}),
    "krr-k256-eps001": ("krr", 256, 0.01, {}),
    "subset-k2": ("subset", 2, 1.0, {}),
    "subset-k10-w9": ("subset", 10, 2.0, {"subset_size": 9}),
    "subset-k10-w1": ("subset", 10, 0.3, {"subset_size": 1}),
    "2bitflip": ("dbitflip", 6, 1.5, {"d": 2}),
    "1bitflip-k2": ("dbitflip", 2, 0.7, {"d": 1}),
    "sue-k2": ("sue", 2, 4.0, {}),
    "oue-k64": ("oue", 64, 0.2, {}),
    "olh-k2": ("olh", 2, 5.0, {}),
    "olh-prime": ("olh", 7, 1.0, {"range_size": 4, "prime": 11}),
    "olh-g100": ("olh", 40, 6.0, {"range_size": 100}),
    "hadamard-k4": ("hadamard", 4, 0.5, {}),
    "hadamard-k7": ("hadamard", 7, 3.0, {}),
    "hadamard-k2": ("hadamard", 2, 1.0, {}),
    "cms-k2": ("cms", 2, 0.1, {"hash_count": 4, "width": 2, "hash_seed": 3}),
    "hcms-k8": ("hcms", 8, 6.0, {"hash_count": 8, "width": 64, "hash_seed": 2}),
    "forced-k256-eps001": ("forced-response", 256, 0.01, {}),
    "unrelated-k2-eps10": ("unrelated-question", 2, 10.0, {}),
    "warner-eps10": ("warner", 2, 10.0, {}),
    "crosswise-below-half": ("crosswise", 2, math.log(2), {"p": "1/3"}),
}
NUMERIC_PRIVACY_CASES = {
    "num-gaussian-delta-large": ("gaussian", -1, 1, 2.0, {"delta": 1e-2, "grid": 20}),
    "num-laplace-g2": ("laplace", 0, 1, 3.0, {"grid": 2}),
    "num-piecewise-eps-small": ("piecewise", 0, 1, 0.05, {"grid": 30}),
    "num-hybrid-eps9": ("hybrid", 0, 1, 9.0, {"grid": 50}),
    "num-duchi-eps001": ("duchi", 0, 1, 0.01, {"grid": 5}),
}


# name, k, epsilon, max_choices; multiselect_specs.json holds each spec and, where the report space
# is small, Python's exact table P(report | set) over every admissible set (ldp.multiselect.all_sets);
# for padding with OLH, that of small_padding_olh() (the default prime is too large to enumerate).
MULTISELECT_CASES = {
    "set-sue-k5-l2": ("set-sue", 5, 1.0, 2),
    "set-oue-k4-l3": ("set-oue", 4, 2.0, 3),
    "set-oue-k6-l2": ("set-oue", 6, 0.5, 2),
    "padding-krr-k4-l2": ("padding-krr", 4, 1.0, 2),
    "padding-krr-k5-l5": ("padding-krr", 5, 3.0, 5),
    "padding-olh-k5-l2": ("padding-olh", 5, 2.0, 2),
}


def small_padding_olh() -> PaddingAndSampling:
    """Padding-and-sampling with OLH (k 3, epsilon 1, l 2) over a hash family small enough to enumerate.

    The oracle is the same construction over k + l = 5 items with range 2 and prime 7, put in place
    of the default one, whose prime makes P^3 g reports, far too many to enumerate.
    tests/ldp/test_multiselect_privacy.py checks its table; multiselect.test.mjs derives it again.
    """
    mechanism = PaddingAndSampling(k=3, epsilon=1.0, max_choices=2, oracle_name="olh")
    object.__setattr__(mechanism, "oracle", OptimalLocalHashing(k=5, epsilon=1.0, range_size=2, prime=7))
    return mechanism


#: Declared cross-tab pairs: the mechanism over k1 k2 options (ldp.crosstab.declared_mechanism).
PAIR_CASES = {"pair-krr-3x4": ("krr", 3, 4, 2.0), "pair-oue-2x3": ("oue", 2, 3, 1.0)}


def render_multiselect() -> str:
    specs, tables = {}, {}
    for key, (name, k1, k2, epsilon) in PAIR_CASES.items():
        mechanism = declared_mechanism(name, k1, k2, epsilon)
        specs[key] = {**mechanism.client_spec(), "pair": [k1, k2]}
        tables[key] = mechanism.report_probabilities().tolist()
    for key, (name, k, epsilon, ell) in MULTISELECT_CASES.items():
        mechanism = make_set_mechanism(name, k, epsilon, ell)
        specs[key] = mechanism.client_spec()
        if name != "padding-olh":
            tables[key] = mechanism.report_probabilities().tolist()
    small = small_padding_olh()
    specs["padding-olh-k3-l2-p7"] = small.client_spec()
    tables["padding-olh-k3-l2-p7"] = small.report_probabilities().tolist()
    return json.dumps({"specs": specs, "tables": tables}) + "\n"


def numeric_mechanisms() -> dict:
    return {
        key: make_numeric_mechanism(name, lo, hi, epsilon, **params)
        for key, (name, lo, hi, epsilon, params) in NUMERIC_CASES.items()
    }


def specs() -> dict[str, dict]:
    categorical = {
        key: make_mechanism(name, k, epsilon, **params).client_spec()
        for key, (name, k, epsilon, params) in CASES.items()
    }
    return categorical | {key: m.client_spec() for key, m in numeric_mechanisms().items()}


def tables() -> dict[str, list]:
    return {key: m.report_probabilities().tolist() for key, m in numeric_mechanisms().items() if m.grid <= 10}


def privacy_table() -> dict[str, dict]:
    """For every spec: the spec, and the (epsilon, delta) ldp states for its parameters."""
    categorical = {**CASES, **PRIVACY_CASES}
    numeric = {**NUMERIC_CASES, **NUMERIC_PRIVACY_CASES}
    table = {}
    for key, (name, k, epsilon, params) in categorical.items():
        m = make_mechanism(name, k, epsilon, **params)
        table[key] = {"spec": m.client_spec(), "epsilon": m.worst_case_log_ratio(), "delta": 0.0}
    for key, (name, lo, hi, epsilon, params) in numeric.items():
        m = make_numeric_mechanism(name, lo, hi, epsilon, **params)
        if name == "gaussian":
            privacy = {"epsilon": m.epsilon, "delta": m.delta_at(m.epsilon)}
        else:
            privacy = {"epsilon": m.worst_case_log_ratio(), "delta": 0.0}
        table[key] = {"spec": m.client_spec(), **privacy}
    return table


def mechanism_families() -> dict[str, tuple[str, ...]]:
    """Every ``ldp`` mechanism name, per summary family (``ldp.registry.NAMES``: shares, mean, multi, text)."""
    from ldp import registry

    return {family: tuple(registry.names(family)) for family in registry.FAMILIES}


def bounds() -> dict[str, tuple[str, int | float | str]]:
    """The limits and hash domains ``ldp`` enforces that the JavaScript checks too: name -> (source, value)."""
    from ldp import freetext, memo, privacy, text
    from ldp.mechanisms import base, cms, hcms, local_hashing, rappor
    from ldp.multiselect import base as multiselect_base
    from ldp.numeric import base as numeric_base

    return {
        "EPSILON_MIN": ("ldp.privacy.EPSILON_MIN", privacy.EPSILON_MIN),
        "EPSILON_MAX": ("ldp.privacy.EPSILON_MAX", privacy.EPSILON_MAX),
        "MAX_OPTIONS": ("ldp.mechanisms.base.MAX_OPTIONS", base.MAX_OPTIONS),
        "MAX_SKETCH_HASH_COUNT": ("ldp.mechanisms.cms.MAX_HASH_COUNT", cms.MAX_HASH_COUNT),
        "MAX_CMS_WIDTH": ("ldp.mechanisms.cms.MAX_WIDTH", cms.MAX_WIDTH),
        "MAX_HCMS_WIDTH": ("ldp.mechanisms.hcms.MAX_WIDTH", hcms.MAX_WIDTH),
        "MAX_RANGE": ("ldp.mechanisms.local_hashing.MAX_RANGE", local_hashing.MAX_RANGE),
        "MAX_SET_OPTIONS": ("ldp.multiselect.base.MAX_SET_OPTIONS", multiselect_base.MAX_SET_OPTIONS),
        "MAX_GRID": ("ldp.numeric.base.MAX_GRID", numeric_base.MAX_GRID),
        "MAX_TEXT_LENGTH": ("ldp.text.MAX_TEXT_LENGTH", text.MAX_TEXT_LENGTH),
        "WHITESPACE": ("ldp.text.WHITESPACE", text.WHITESPACE),
        "MAX_TEXT_SKETCH_HASH_COUNT": ("ldp.freetext.MAX_HASH_COUNT", freetext.MAX_HASH_COUNT),
        "MAX_TEXT_SKETCH_WIDTH": ("ldp.freetext.MAX_WIDTH", freetext.MAX_WIDTH),
        "SKETCH_DOMAIN": ("ldp.freetext.HASH_DOMAIN", freetext.HASH_DOMAIN),
        "MAX_RAPPOR_BITS": ("ldp.mechanisms.rappor.MAX_BITS", rappor.MAX_BITS),
        "MAX_RAPPOR_HASHES": ("ldp.mechanisms.rappor.MAX_HASHES", rappor.MAX_HASHES),
        "MAX_RAPPOR_COHORTS": ("ldp.mechanisms.rappor.MAX_COHORTS", rappor.MAX_COHORTS),
        "RAPPOR_DOMAIN": ("ldp.mechanisms.rappor.HASH_DOMAIN", rappor.HASH_DOMAIN),
        "MEMO_DOMAIN": ("ldp.memo.MEMO_DOMAIN", memo.MEMO_DOMAIN),
        "MEMO_WORDS": ("ldp.memo.DEFAULT_WORDS", memo.DEFAULT_WORDS),
    }


def render_constants() -> str:
    """static/ldp/constants.js: :func:`bounds` and :func:`mechanism_families` as an ES module."""
    lines = [
        "// @ts-check",
        "// Generated by `python -m tests.js.make_specs` from ldp/ (Python): do not edit by hand.",
        "// tests/ldp/test_js_specs.py fails when this file differs from what ldp defines now.",
        "",
    ]
    for name, (source, value) in bounds().items():
        lines += [f"/** {source} */", f"export const {name} = {json.dumps(value)};"]
    families = mechanism_families()
    lines += [
        "",
        "/** The mechanism names of each family, in ldp's order. */",
        "export const FAMILIES = Object.freeze({",
    ]
    lines += [f"  {family}: Object.freeze({json.dumps(list(names))})," for family, names in families.items()]
    lines += ["});"]
    from ldp import registry

    lines += [
        "/** ldp.registry.PHASE_TWO: shares mechanisms of a two-phase survey's phase 2, never offered to a builder. */",
        f"export const PHASE_TWO = Object.freeze({json.dumps(list(registry.PHASE_TWO))});",
    ]
    # The names the JavaScript modules have always used for each family's list; a phase-2 spec is
    # checked, randomized and its epsilon stated as every shares spec is.
    aliases = {"shares": "CATEGORICAL", "mean": "NUMERIC", "multi": "SET", "text": "TEXT"}
    for family in families:
        value = "Object.freeze([...FAMILIES.shares, ...PHASE_TWO])" if family == "shares" else f"FAMILIES.{family}"
        lines += [f"export const {aliases[family]}_MECHANISMS = {value};"]
    return "\n".join(lines) + "\n"


def render_design_tables() -> str:
    """For every design case: Python's channel P(report | answer), which designs.test.mjs derives again."""
    tables = {
        key: make_mechanism(name, k, epsilon, **params).report_probabilities().tolist()
        for key, (name, k, epsilon, params) in CASES.items()
        if name in DESIGNS
    }
    return json.dumps(tables) + "\n"


def render() -> str:
    return json.dumps(specs(), indent=1) + "\n"


def render_tables() -> str:
    return json.dumps(tables()) + "\n"


def render_privacy() -> str:
    return json.dumps(privacy_table()) + "\n"


def render_memo() -> str:
    return json.dumps(memo_tables.tables(), ensure_ascii=False) + "\n"


if __name__ == "__main__":
    PATH.write_text(render())
    TABLES_PATH.write_text(render_tables())
    PRIVACY_PATH.write_text(render_privacy())
    MEMO_PATH.write_text(render_memo())
    MULTISELECT_PATH.write_text(render_multiselect())
    DESIGN_TABLES_PATH.write_text(render_design_tables())
    CONSTANTS_PATH.write_text(render_constants())
