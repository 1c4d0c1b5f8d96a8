from __future__ import annotations

import pytest

from ldp import make_mechanism


def seed_mechanisms(epsilon: float = 1.0, k: int = 5) -> list:
    """The three seed mechanisms in the settings of seed 004's survey experiment."""
    return [
        make_mechanism("krr", k=k, epsilon=epsilon),
        make_mechanism("cms", k=k, epsilon=epsilon, hash_count=512, width=128),
        make_mechanism("dbitflip", k=k, epsilon=epsilon, d=k - 1),
        make_mechanism("dbitflip", k=k, epsilon=epsilon, d=k),
        make_mechanism("sue", k=k, epsilon=epsilon),
        make_mechanism("oue", k=k, epsilon=epsilon),
        make_mechanism("olh", k=k, epsilon=epsilon),
        make_mechanism("subset", k=k, epsilon=epsilon),
        make_mechanism("hadamard", k=k, epsilon=epsilon),
        make_mechanism("hcms", k=k, epsilon=epsilon, hash_count=64, width=32),
    ]


def mechanism_id(mechanism) -> str:
    return f"{mechanism.name}{mechanism.params().get('d', '')}"


@pytest.fixture(params=seed_mechanisms(), ids=mechanism_id)
def mechanism(request):
    return request.param
