"""What ldp computes for RAPPOR, memoization and free text, for the JavaScript tests to match.

Written to tests/js/memo_tables.json by ``python -m tests.js.make_specs``.
"""

from __future__ import annotations

import sys

from ldp import make_mechanism, make_numeric_mechanism
from ldp.freetext import HadamardTextSketch, TextSketch
from ldp.mechanisms.rappor import Rappor
from ldp.memo import (
    dbitflip_epsilon_after_rounds,
    dbitflip_round_epsilon,
    memoized_alpha,
    memoized_dbitflip,
    memoized_one_bit,
    memoized_prr,
    one_bit_epsilon_after_rounds,
    one_bit_round_epsilon,
)
from ldp.text import normalize_text

RAPPOR_CASES = {
    "seed-fig3": Rappor(bits=32, hash_count=2, cohorts=64, f=0.5, p=0.25, q=0.75),
    "google-demo": Rappor(bits=16, hash_count=2, cohorts=64, f=0.5, p=0.5, q=0.75),
    "tiny": Rappor(bits=6, hash_count=3, cohorts=2, f=0.25, p=0.0, q=1.0),
    "wide": Rappor(bits=1024, hash_count=8, cohorts=4, f=0.1, p=0.4, q=0.6),
}
VALUES = ["", "a", "서울", "성균관대학교", "strasse", "chrome.exe", "🙂 emoji"]
TEXTS = [
    "  Straße\u3000 서울 ",
    "\u1100\u1161\u11a8",  # conjoining jamo of 각
    "ΟΔΟΣ",
    "ﬁle\tname\n",
    "İstanbul",
    "e\u0301\u00a0caf\u00c9",
    "\ufeffABC\u2003def\u200b",
    "ǰ",
    "ᏸ",
    "ＡＢＣ　한글",
]
SECRETS = [bytes(range(32)), bytes(32), b"murmur-test-secret-0123456789abc"]


def rappor_tables() -> dict:
    out = {}
    for key, mechanism in RAPPOR_CASES.items():
        out[key] = {
            "spec": mechanism.client_spec(),
            "positions": [
                [value, cohort, list(mechanism.bloom_positions(value, cohort))]
                for value in VALUES
                for cohort in range(min(mechanism.cohorts, 3))
            ],
            "epsilon_one": mechanism.epsilon_one_report(),
            "epsilon_infinity": mechanism.epsilon_infinity(),
            "epsilon_rounds": [mechanism.epsilon_after_rounds(r) for r in range(1, 11)],
            "memoized": [
                [secret.hex(), value, *map(_plain, memoized_prr(secret, "series-7", "q-3", value, mechanism))]
                for secret in SECRETS
                for value in VALUES
            ],
        }
    return out


def _plain(item):
    return item.tolist() if hasattr(item, "tolist") else item


def memo_tables() -> dict:
    dbitflips = {
        "4bitflip": make_mechanism("dbitflip", 5, 1.0, d=4),
        "1bitflip": make_mechanism("dbitflip", 5, 1.0, d=1),
        "3bitflip-k8": make_mechanism("dbitflip", 8, 2.0, d=3),
        "150bitflip-k160": make_mechanism("dbitflip", 160, 3.0, d=150),  # streams beyond 128 words
    }
    one_bit = make_numeric_mechanism("1bitmean", 0, 10, 1.0, grid=10)
    gammas = [0.0, 0.1, 0.25]
    return {
        "dbitflip": {
            key: {
                "spec": m.client_spec(),
                "round_epsilon": [dbitflip_round_epsilon(m, g) for g in gammas],
                "rounds_epsilon": [[dbitflip_epsilon_after_rounds(m, g, r) for r in range(1, 11)] for g in gammas],
                "memoized": [
                    [secret.hex(), value, *memoized_dbitflip(secret, "series-7", "q-3", value, m)]
                    for secret in SECRETS
                    for value in range(min(m.k, 6))
                ],
            }
            for key, m in dbitflips.items()
        },
        "1bitmean": {
            "spec": one_bit.client_spec(),
            "gammas": gammas,
            "round_epsilon": [one_bit_round_epsilon(one_bit, g) for g in gammas],
            "rounds_epsilon": [[one_bit_epsilon_after_rounds(one_bit, g, r) for r in range(1, 11)] for g in gammas],
            "alpha": [[secret.hex(), memoized_alpha(secret, "series-7", "q-3")] for secret in SECRETS],
            "memoized": [
                [secret.hex(), value, *memoized_one_bit(secret, "series-7", "q-3", value, one_bit)]
                for secret in SECRETS
                for value in (0, 0.3, 2.5, 4.44, 7, 9.99, 10)
            ],
        },
        "gammas": gammas,
    }


def text_tables() -> dict:
    folds = [[code, chr(code).casefold()] for code in range(sys.maxunicode + 1) if chr(code).casefold() != chr(code)]
    return {"normalized": [[text, normalize_text(text)] for text in TEXTS + VALUES], "casefold": folds}


def sketch_tables() -> dict:
    sketch = TextSketch(epsilon=2.0, hash_count=8, width=128)
    return {
        "spec": sketch.client_spec(),
        "hadamard_spec": HadamardTextSketch(epsilon=1.5, hash_count=8, width=128).client_spec(),
        "cells": [[value, row, sketch.cell(row, value)] for value in VALUES for row in range(sketch.hash_count)],
    }


def tables() -> dict:
    return {"rappor": rappor_tables(), "memo": memo_tables(), "text": text_tables(), "sketch": sketch_tables()}
