"""Write tests/js/specs.json: client specs made by ``ldp``, for the JavaScript tests.

    python -m tests.js.make_specs

tests/ldp/test_js_specs.py fails if the committed files differ from what ldp makes now, so
the JavaScript is always tested against the server's real specs. Numeric mechanisms' specs
follow the categorical ones in specs.json; tests/js/numeric_tables.json holds, for the small
numeric cases, Python's exact report distribution P(report | grid point) to compare with the
one the JavaScript derives from the spec.
"""

from __future__ import annotations

import json
from pathlib import Path

from ldp import make_mechanism, make_numeric_mechanism

PATH = Path(__file__).with_name("specs.json")
TABLES_PATH = Path(__file__).with_name("numeric_tables.json")

CASES = {
    "krr-k5": ("krr", 5, 1.0, {}),
    "krr-k2": ("krr", 2, 0.5, {}),
    "krr-k12": ("krr", 12, 3.0, {}),
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


def render() -> str:
    return json.dumps(specs(), indent=1) + "\n"


def render_tables() -> str:
    return json.dumps(tables()) + "\n"


if __name__ == "__main__":
    PATH.write_text(render())
    TABLES_PATH.write_text(render_tables())
