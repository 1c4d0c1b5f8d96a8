"""Write tests/js/specs.json: client specs made by ``ldp``, for the JavaScript tests.

    python -m tests.js.make_specs

tests/ldp/test_js_specs.py fails if the committed file differs from what ldp makes now, so
the JavaScript is always tested against the server's real specs.
"""

from __future__ import annotations

import json
from pathlib import Path

from ldp import make_mechanism

PATH = Path(__file__).with_name("specs.json")

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


def specs() -> dict[str, dict]:
    return {
        key: make_mechanism(name, k, epsilon, **params).client_spec()
        for key, (name, k, epsilon, params) in CASES.items()
    }


def render() -> str:
    return json.dumps(specs(), indent=1) + "\n"


if __name__ == "__main__":
    PATH.write_text(render())
