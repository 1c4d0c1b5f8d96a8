"""Verifiable randomization (ldp.verifiable): exact privacy of what the server learns, and soundness."""

from __future__ import annotations

import itertools
import json
import math
import shutil
import subprocess
from fractions import Fraction

import numpy as np
import pytest

from ldp import verifiable
from ldp.mechanisms import make_mechanism
from ldp.verifiable import Channel, ServerSession, VerificationError, respond

SMALL = Channel(((3, 1, 1), (1, 3, 1), (1, 1, 3)))  # k-RR at ln 3, n = 5
TINY = Channel(((2, 1), (1, 2)))  # randomized response at ln 2, n = 3: the fast loop's round trip


def all_shuffles(channel: Channel, value: int):
    """Every path of the client's Fisher-Yates shuffle, each with probability 1 / n!."""
    n = channel.slots
    for path in itertools.product(*(range(i + 1) for i in range(n - 1, 0, -1))):
        draws = iter(path)
        yield verifiable.shuffled_slots(channel, value, lambda bound, draws=draws: next(draws))


def test_what_the_server_learns_is_epsilon_ldp_whatever_slot_it_takes():
    # The server takes one slot j (its choice, even adversarial); the client's uniform shuffle makes that
    # slot's output N[y][x] / n for every j, so the worst log ratio over outputs and inputs is the channel's.
    channel, n = SMALL, SMALL.slots
    law = {}
    for x in range(channel.inputs):
        shuffles = list(all_shuffles(channel, x))
        assert len(shuffles) == math.factorial(n)
        for j in range(n):
            for y in range(channel.outputs):
                law[x, j, y] = Fraction(sum(s[j] == y for s in shuffles), len(shuffles))
                assert law[x, j, y] == Fraction(channel.counts[y][x], n)
    worst = max(
        math.log(law[x, j, y] / law[x2, j, y])
        for x, x2, j, y in itertools.product(range(3), range(3), range(n), range(3))
    )
    assert worst == pytest.approx(math.log(3), abs=1e-15) and worst == pytest.approx(channel.epsilon(), abs=1e-15)


@pytest.mark.parametrize(
    ("name", "k"),
    [("krr", 5), ("krr", 2), ("warner", 2), ("crosswise", 2), ("forced-response", 2), ("unrelated-question", 2)],
)
def test_quantized_channels_never_exceed_the_mechanisms_epsilon(name, k):
    mechanism = make_mechanism(name, k=k, epsilon=1.0)
    channel = Channel.of(mechanism)
    assert channel.epsilon() <= 1.0 and channel.epsilon() > 0.97
    assert np.abs(channel.probabilities() - mechanism.report_probabilities()).max() < 0.01


@pytest.mark.slow
def test_an_honest_answer_is_accepted_and_gives_the_taken_slot():
    seeded = np.random.default_rng(5)

    def below(bound: int) -> int:
        return int(seeded.integers(0, 2**62)) * int(seeded.integers(0, 2**62)) % bound

    server = ServerSession.start(TINY, below)
    message = respond(TINY, 1, server.offer(), below)
    report = server.receive(message)
    assert report in range(2)
    with pytest.raises(VerificationError, match="already"):
        server.receive(message)


@pytest.mark.slow
def test_a_client_that_fills_every_slot_with_the_target_is_refused():
    # Output manipulation: a channel whose every slot is output 0, used to answer the real one.
    server = ServerSession.start(SMALL)
    forged_channel = Channel(((5, 5, 5), (0, 0, 0), (0, 0, 0)))  # (refused: its proofs prove another statement)
    message = respond(forged_channel, 0, server.offer())
    with pytest.raises(VerificationError):
        server.receive(message)


@pytest.mark.slow
def test_a_tampered_ciphertext_or_proof_is_refused():
    server = ServerSession.start(SMALL)
    message = respond(SMALL, 1, server.offer())
    u, v = message["ciphertexts"][3]
    message["ciphertexts"][3] = [u, hex(int(v, 16) * verifiable.G % verifiable.P)]
    with pytest.raises(VerificationError):
        server.receive(message)
    other = ServerSession.start(SMALL)
    answer = respond(SMALL, 1, other.offer())
    answer["session"] = server.session.hex()
    with pytest.raises(VerificationError):
        ServerSession(SMALL, other.session, other.index, other.secret).receive(
            answer | {"inputs": answer["inputs"][:2]}
        )


@pytest.mark.slow
def test_the_group_is_what_its_strings_derive():
    assert verifiable.derive_parameters() == (verifiable.P, verifiable.Q)
    assert verifiable.P.bit_length() == 2048 and verifiable.Q.bit_length() == 256
    assert verifiable.is_probable_prime(verifiable.P) and verifiable.is_probable_prime(verifiable.Q)
    assert verifiable.in_group(verifiable.G) and verifiable.in_group(verifiable.H)


def browser_answer(channel: Channel, value: int, offer: dict[str, str]) -> dict:
    """static/ldp/verifiable.js's answer, computed by node (crypto.getRandomValues, WebCrypto)."""
    script = (
        'import { respond } from "./static/ldp/verifiable.js";\n'
        f"console.log(JSON.stringify(await respond({json.dumps(channel.spec())}, {value}, {json.dumps(offer)})));"
    )
    done = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.parametrize("channel", [TINY, SMALL], ids=["n=3", "n=5"])
def test_the_server_accepts_the_browsers_answers_and_takes_its_chosen_slot(channel):
    for value in range(channel.inputs):
        server = ServerSession.start(channel)
        assert server.receive(browser_answer(channel, value, server.offer())) in range(channel.outputs)
    # The browser answering for another channel (every slot the same output) is refused.
    server = ServerSession.start(channel)
    forged = Channel(tuple(tuple(channel.slots if y == 0 else 0 for _ in row) for y, row in enumerate(channel.counts)))
    with pytest.raises(VerificationError):
        server.receive(browser_answer(forged, 0, server.offer()))


@pytest.mark.slow
def test_a_ciphertext_that_would_fail_only_on_slots_the_client_dislikes_is_refused():
    # Selective failure: ciphertexts that decrypt to G^y H instead of G^y would make the transfer break
    # exactly when the server's secret j hits them. The encryption proof binds V_i = K_i^t G^y to the
    # committed y with no H factor (and the challenge covers the ciphertexts), so such an answer is
    # refused before anything is decrypted.
    server = ServerSession.start(SMALL)
    answer = respond(SMALL, 0, server.offer())
    for i, (u, v) in enumerate(answer["ciphertexts"]):
        if i % 2:
            answer["ciphertexts"][i] = [u, hex(int(v, 16) * verifiable.H % verifiable.P)]
    with pytest.raises(VerificationError):
        server.receive(answer)
