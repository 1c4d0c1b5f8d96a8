"""Verifiable randomization: the server fixes the randomness with the browser, which can only choose its input.

Kato, Cao and Yoshikawa (DBSec 2021, ref. 1), after Ambainis, Jakobsson and Lipmaa's cryptographic
randomized response (ref. 2): an honest report of input x is one of n *slots* drawn uniformly, of which
N[y][x] carry output y (a :class:`Channel`, P(y | x) = N[y][x] / n). The client fills the n slots for its
input, shuffles them secretly and commits to everything; the server takes exactly one slot by 1-out-of-n
oblivious transfer, at an index j it drew and keeps secret; zero-knowledge proofs show that the committed
slots hold the right multiset for *some* committed input and that every encrypted slot is the committed
one. So:

- **the client cannot choose its report**: it never learns j (the oblivious transfer hides it), so any
  shuffle leaves the taken slot's output distributed as N[., x] / n; a report that is not such a draw
  fails a proof. Its one freedom is x, the *input*, so fake respondents can move an estimate only as
  much as honest respondents answering x would (Cao et al.'s input-manipulation bound, ref. 3): by at
  most the fakes' share of the reports;
- **the server learns one output**: Pedersen commitments hide perfectly, the proofs are (honest-verifier)
  zero-knowledge, and the other slots are ElGamal ciphertexts under keys whose secret the server does not
  know (DDH); the slot it takes is a uniform draw from the client's own shuffle, so what it learns about x
  is y ~ N[., x] / n whatever j it picked, and the protocol is epsilon'-LDP with
  epsilon' = max_y ln(max_x N[y][x] / min_x N[y][x]) <= epsilon (:meth:`Channel.epsilon`), enumerated in
  tests/ldp/test_verifiable.py.

**Group.** A Schnorr group: P a 2048-bit prime, Q a 256-bit prime dividing P - 1, derived from fixed
strings (nothing up the sleeve, re-derived by :func:`derive_parameters`): Q is the first prime from
``expand(b"murmur-vrm-q", 256) | 2^255 | 1`` upwards in steps of 2; for counter c = 0, 1, ..., with
x = ``expand(b"murmur-vrm-p" + c, 2048) | 2^2047``, P = x - (x mod 2Q) + 1, the first that is a prime of
2048 bits (c = 843). G, H and the oblivious transfer's bases B_i are :func:`hash_to_group` of fixed tags,
so nobody knows a discrete logarithm between them. ``expand(tag, bits)`` is the first ``bits`` bits of
SHA-512(tag || 0) || SHA-512(tag || 1) || ... (4-byte big-endian counters).

**Protocol** (channel N with n slots, k_in inputs, k_out outputs; all exponents mod Q):

1. Server (:meth:`ServerSession.start`): session id S (32 random bytes), index j uniform in [0, n) and
   s uniform in Z_Q, kept secret; it sends S and K = G^s if j = 0, else B_j G^-s (Naor and Pinkas's
   1-out-of-n transfer, ref. 4). Key i is K_0 = K and K_i = B_i / K for i >= 1: the server knows the
   secret s of K_j only, and K hides j perfectly.
2. Client (:func:`respond`): the multiset of N[y][x] copies of each y, shuffled (Fisher-Yates with secure
   randomness) into slots y_0 .. y_{n-1}. Commitments X_u = G^[u = x] H^rho_u (u < k_in) and
   D_iy = G^[y_i = y] H^r_iy; ciphertexts U_i = G^t_i, V_i = K_i^t_i G^y_i. Proofs, all with one
   Fiat-Shamir challenge c = SHA-512(everything above and every first message) mod Q:
   every X_u and D_iy commits a bit (Cramer-Damgard-Schoenmakers OR of two Schnorr proofs, ref. 5);
   prod_u X_u / G and each prod_y D_iy / G are powers of H (one-hot: Schnorr); for each output y,
   prod_i D_iy prod_u X_u^-N[y][u] is a power of H (the slots hold N[y][x] copies of y); and, with
   Y_i = prod_y D_iy^y, knowledge of (t, y, r) such that U_i = G^t, V_i = K_i^t G^y and Y_i = G^y H^r
   (the ciphertext holds exactly the committed slot: a ciphertext that decrypts to anything else, which
   would let a client make the transfer fail only when j hits a slot it dislikes, fails this proof).
   The challenge hashes, in this order: the
   domain string ``murmur-vrm-v1``, S, K (every element as 256 big-endian bytes), the channel's counts as
   compact JSON (``[[8,3,3],[3,8,3],[3,3,8]]``), the commitments X then D (row by row), the ciphertexts,
   the bit proofs' two first messages, the sum and count proofs' first messages, the encryption proofs'
   three first messages. Numbers travel as hexadecimal strings ("0x...").
3. Server (:meth:`ServerSession.receive`): checks every element is in the group and every proof, then
   decrypts slot j: G^y = V_j / U_j^s, y < k_out by table. That y is the report, stored like any other.

**What a browser must do** is exactly step 2: (k_in + n k_out) bit proofs and n encryption proofs,
about 4 (k_in + n k_out) + 6 n exponentiations with 256-bit exponents modulo a 2048-bit prime
(static/ldp/verifiable.js, BigInt); randomness from ``crypto.getRandomValues``, hashing by WebCrypto.

**Limits.** A client may abort after step 1, but it has learned nothing about its report then, so
aborting cannot select a report. The server must keep (j, s) per session until the answer and use each
once (a replayed answer fails: S is in the challenge). Privacy rests on the client's shuffle and the
hardness of discrete logarithms and DDH in the group, not on the server's honesty; integrity (the report
is a draw of the channel) on the proofs' soundness and the secrecy of j.

References
----------
1. F. Kato, Y. Cao, M. Yoshikawa. "Preventing manipulation attack in local differential privacy using
   verifiable randomization mechanism." DBSec 2021, LNCS 12840, 43-60 (arXiv:2104.06569).
2. A. Ambainis, M. Jakobsson, H. Lipmaa. "Cryptographic randomized response techniques." PKC 2004.
3. X. Cao, J. Jia, N. Z. Gong. "Data poisoning attacks to local differential privacy protocols."
   USENIX Security 2021.
4. M. Naor, B. Pinkas. "Efficient oblivious transfer protocols." SODA 2001.
5. R. Cramer, I. Damgard, B. Schoenmakers. "Proofs of partial knowledge and simplified design of
   witness hiding protocols." CRYPTO 1994.

>>> channel = Channel.of(KRandomizedResponse(k=3, epsilon=1.0), max_slots=16)
>>> channel.counts, round(channel.epsilon(), 4)
(((8, 3, 3), (3, 8, 3), (3, 3, 8)), 0.9808)

A round trip (``server = ServerSession.start(channel)``, ``server.receive(respond(channel, x,
server.offer()))``) is in tests/ldp/test_verifiable.py; it costs seconds, see docs/integrity.md.
"""

from __future__ import annotations

import hashlib
import json
import math
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from ldp.mechanisms.base import Mechanism
from ldp.mechanisms.krr import KRandomizedResponse

__all__ = ["Channel", "ServerSession", "VerificationError", "respond"]

P = int(
    "d51c6f2b5df312969c34b45200807ba25de4629a2d27813483fa8bae77a3c70a7bbd71e74d4602e67b482503d458a4383dcea04cce"
    "ad9e3d267c1616d41c07b3c7ff24bc0dd445b4989d1e743e48de5dfbf7bbe561e552cf0323e3b7bfa9ff4374c81aa7c7c7c4e582a785"
    "671ff825af5b0ce44883a4262105fe9ab7d38128817f4235297f2872045e48f3a3c263a644d4b2d1aabe62925c31255e594220462dde"
    "a91b364572f71f79c4e2cf958efca84b0c321840f1ea73f13a6098381bb7f9ffcf9d1986bf047db8f8bea3b67db956998ae034e7da94"
    "6dd545be4b1533354868338c4700dfb0eaa563268e73ade150d9f13397ca10fbbe41aaddde416496b7",
    16,
)
Q = int("9f5b918cb295e111d28ea6e0e3f583c88ee0c9d4372c4474ee774ff46c317477", 16)
P_COUNTER = 843
ELEMENT_BYTES, SCALAR_BYTES = 256, 32
DOMAIN = b"murmur-vrm-v1"
#: The most slots a channel may have (the browser's work grows with n k_out).
MAX_SLOTS = 64


def expand(tag: bytes, bits: int) -> int:
    """The first ``bits`` bits of SHA-512(tag || 0) || SHA-512(tag || 1) || ... as an integer."""
    out = b""
    counter = 0
    while len(out) * 8 < bits:
        out += hashlib.sha512(tag + counter.to_bytes(4, "big")).digest()
        counter += 1
    return int.from_bytes(out, "big") >> (len(out) * 8 - bits)


def hash_to_group(tag: bytes) -> int:
    """An element of the order-Q subgroup nobody knows a logarithm of: expand(tag || c, 2304) mod P raised
    to (P - 1) / Q, for the first 4-byte counter c that does not give 1."""
    counter = 0
    while True:
        element = pow(expand(tag + counter.to_bytes(4, "big"), 2304) % P, (P - 1) // Q, P)
        if element != 1:
            return element
        counter += 1


G = hash_to_group(b"murmur-vrm-g")
H = hash_to_group(b"murmur-vrm-h")
G_INVERSE = pow(G, Q - 1, P)


class FixedBase:
    """Powers of a fixed base by 4-bit windows: table[w][d] = base^(d 16^w), so base^e costs one product
    per nonzero window of e (at most 64 for e < Q) instead of pow's ~384 (static/ldp/verifiable.js too)."""

    def __init__(self, base: int) -> None:
        self.table: list[list[int]] = []
        power = base
        for _ in range(64):
            row = [1]
            for _ in range(15):
                row.append(row[-1] * power % P)
            self.table.append(row)
            power = row[15] * power % P

    def __call__(self, exponent: int) -> int:
        result, e, window = 1, exponent % Q, 0
        while e:
            if e & 15:
                result = result * self.table[window][e & 15] % P
            e >>= 4
            window += 1
        return result


G_POWER, H_POWER = FixedBase(G), FixedBase(H)


@lru_cache(maxsize=MAX_SLOTS)
def transfer_base(i: int) -> int:
    """B_i (i >= 1), the oblivious transfer's fixed random elements."""
    return hash_to_group(b"murmur-vrm-ot" + i.to_bytes(4, "big"))


def element_bytes(x: int) -> bytes:
    return x.to_bytes(ELEMENT_BYTES, "big")


def challenge(parts: list[bytes]) -> int:
    """The Fiat-Shamir challenge: SHA-512 of the parts' concatenation, mod Q."""
    return int.from_bytes(hashlib.sha512(b"".join(parts)).digest(), "big") % Q


def in_group(x: int) -> bool:
    return 1 < x < P and pow(x, Q, P) == 1


class VerificationError(ValueError):
    """A client's answer that does not prove a draw of the channel."""


@dataclass(frozen=True)
class Channel:
    """N[y][x] slots of n carry output y for input x; every column sums to n."""

    counts: tuple[tuple[int, ...], ...]

    def __post_init__(self) -> None:
        sums = {sum(row[x] for row in self.counts) for x in range(len(self.counts[0]))}
        if len(sums) != 1 or min(min(row) for row in self.counts) < 0 or not 0 < sums.pop() <= MAX_SLOTS:
            raise ValueError("every input's slots must be the same number n, at most MAX_SLOTS")

    @property
    def slots(self) -> int:
        return sum(row[0] for row in self.counts)

    @property
    def inputs(self) -> int:
        return len(self.counts[0])

    @property
    def outputs(self) -> int:
        return len(self.counts)

    def probabilities(self) -> np.ndarray:
        """P(y | x) as (inputs, outputs), like :meth:`~ldp.mechanisms.base.Mechanism.report_probabilities`."""
        return np.array(self.counts, dtype=float).T / self.slots

    def epsilon(self) -> float:
        """max_y ln(max_x N[y][x] / min_x N[y][x]): the protocol's privacy, from the integer counts."""
        worst = 0.0
        for row in self.counts:
            if max(row) and not min(row):
                return math.inf
            if max(row):
                worst = max(worst, math.log(max(row) / min(row)))
        return worst

    def spec(self) -> dict[str, Any]:
        return {"counts": [list(row) for row in self.counts]}

    @classmethod
    def quantize(cls, probabilities: np.ndarray, epsilon: float, max_slots: int = MAX_SLOTS) -> Channel:
        """The closest channel of at most ``max_slots`` slots whose privacy does not exceed ``epsilon``.

        For each n, each input's row of P(y | x) is rounded to n slots by largest remainders (every
        possible output keeps at least one slot); among the n whose :meth:`epsilon` is at most
        ``epsilon``, the one with the smallest largest error |N / n - P| (ties: fewer slots).

        >>> Channel.quantize(KRandomizedResponse(k=5, epsilon=1.0).report_probabilities(), 1.0, 24).counts[0]
        (8, 3, 3, 3, 3)
        """
        best: tuple[float, Channel] | None = None
        for n in range(2, max_slots + 1):
            columns = [_round_row(row, n) for row in np.asarray(probabilities, dtype=float)]
            if any(c is None for c in columns):
                continue
            channel = cls(tuple(zip(*columns, strict=True)))
            if channel.epsilon() > epsilon + 1e-12:
                continue
            error = float(np.abs(channel.probabilities() - probabilities).max())
            if best is None or error < best[0] - 1e-12:
                best = (error, channel)
        if best is None:
            raise ValueError(f"no channel of at most {max_slots} slots keeps epsilon {epsilon}")
        return best[1]

    @classmethod
    def of(cls, mechanism: Mechanism, max_slots: int = MAX_SLOTS) -> Channel:
        """The verifiable channel of a one-value mechanism (k-RR, the randomized-response designs)."""
        return cls.quantize(mechanism.report_probabilities(), mechanism.epsilon, max_slots)

    def mechanism(self) -> Mechanism:
        """For k-RR-shaped channels (N = l on the diagonal, m elsewhere): the k-RR at epsilon' that has
        exactly this output law, for the server's estimate. Other channels: ValueError."""
        k, diagonal = self.inputs, self.counts[0][0]
        other = self.counts[1][0] if self.outputs > 1 else 0
        expected = tuple(tuple(diagonal if y == x else other for x in range(k)) for y in range(k))
        if self.counts != expected or not other:
            raise ValueError("not a k-RR channel")
        return KRandomizedResponse(k=k, epsilon=math.log(diagonal / other))


def _round_row(row: np.ndarray, n: int) -> tuple[int, ...] | None:
    floors = np.floor(row * n).astype(int)
    order = np.argsort(-(row * n - floors), kind="stable")
    floors[order[: n - int(floors.sum())]] += 1
    if np.any((row > 0) & (floors == 0)):
        return None
    return tuple(int(v) for v in floors)


Below = Callable[[int], int]
"""A source of uniform integers in [0, bound): secrets.randbelow, or a test's deterministic stand-in."""


def shuffled_slots(channel: Channel, value: int, below: Below = secrets.randbelow) -> list[int]:
    """The slots of input ``value`` (N[y][value] copies of y, by y) in a uniformly random order (Fisher-Yates)."""
    slots = [y for y, row in enumerate(channel.counts) for _ in range(row[value])]
    for i in range(len(slots) - 1, 0, -1):
        j = below(i + 1)
        slots[i], slots[j] = slots[j], slots[i]
    return slots


def _commit(bit: int, below: Below) -> tuple[int, int]:
    r = below(Q)
    return (G if bit else 1) * H_POWER(r) % P, r


def _product(values: list[int]) -> int:
    out = 1
    for v in values:
        out = out * v % P
    return out


def _keys(key: int, n: int) -> list[int]:
    inverse = pow(key, Q - 1, P)
    return [key] + [transfer_base(i) * inverse % P for i in range(1, n)]


def _statement(session: bytes, key: int, channel: Channel, message: dict[str, Any]) -> list[bytes]:
    parts = [DOMAIN, session, element_bytes(key), json.dumps(channel.spec()["counts"], separators=(",", ":")).encode()]
    parts += [element_bytes(int(x, 16)) for x in message["inputs"]]
    parts += [element_bytes(int(x, 16)) for row in message["slots"] for x in row]
    parts += [element_bytes(int(x, 16)) for pair in message["ciphertexts"] for x in pair]
    parts += [element_bytes(int(x, 16)) for proof in message["bit_proofs"] for x in proof[:2]]
    parts += [element_bytes(int(proof[0], 16)) for proof in message["sum_proofs"]]
    parts += [element_bytes(int(proof[0], 16)) for proof in message["count_proofs"]]
    parts += [element_bytes(int(x, 16)) for proof in message["encryption_proofs"] for x in proof[:3]]
    return parts


def respond(channel: Channel, value: int, offer: dict[str, str], below: Below = secrets.randbelow) -> dict[str, Any]:
    """The client's answer (step 2 of the module docstring) for input ``value`` to the server's ``offer``."""
    if not 0 <= value < channel.inputs:
        raise ValueError(f"value must be in [0, {channel.inputs})")
    session, key = bytes.fromhex(offer["session"]), int(offer["key"], 16)
    if not in_group(key):
        raise VerificationError("the server's key is not in the group")
    n, k_out = channel.slots, channel.outputs
    slots = shuffled_slots(channel, value, below)
    inputs = [_commit(int(u == value), below) for u in range(channel.inputs)]
    cells = [[_commit(int(y == slot), below) for y in range(k_out)] for slot in slots]
    keys = _keys(key, n)
    pads = [below(Q) for _ in range(n)]
    ciphertexts = [(G_POWER(t), pow(keys[i], t, P) * G_POWER(slots[i]) % P) for i, t in enumerate(pads)]

    # First messages. Bit proofs: (commitment, bit, randomness) -> real branch nonce, simulated (c, z).
    bits = [(c, int(u == value), r) for u, (c, r) in enumerate(inputs)]
    bits += [(c, int(y == slot), r) for slot, row in zip(slots, cells, strict=True) for y, (c, r) in enumerate(row)]
    bit_state, bit_first = [], []
    for commitment, bit, _ in bits:
        targets = (commitment, commitment * G_INVERSE % P)
        w, c_fake, z_fake = below(Q), below(Q), below(Q)
        first = [0, 0]
        first[bit] = H_POWER(w)
        first[1 - bit] = H_POWER(z_fake) * pow(targets[1 - bit], Q - c_fake, P) % P
        bit_state.append((w, c_fake, z_fake))
        bit_first.append(first)
    sum_witnesses = [sum(r for _, r in inputs) % Q] + [sum(r for _, r in row) % Q for row in cells]
    count_witnesses = [
        (
            sum(cells[i][y][1] for i in range(n))
            - sum(channel.counts[y][u] * inputs[u][1] for u in range(channel.inputs))
        )
        % Q
        for y in range(k_out)
    ]
    schnorr_nonces = [below(Q) for _ in sum_witnesses + count_witnesses]
    encryption_witnesses = [(pads[i], slots[i], sum(y * cells[i][y][1] for y in range(k_out)) % Q) for i in range(n)]
    encryption_nonces = [(below(Q), below(Q), below(Q)) for _ in range(n)]
    message: dict[str, Any] = {
        "session": session.hex(),
        "inputs": [hex(c) for c, _ in inputs],
        "slots": [[hex(c) for c, _ in row] for row in cells],
        "ciphertexts": [[hex(u), hex(v)] for u, v in ciphertexts],
        "bit_proofs": [[hex(a0), hex(a1)] for a0, a1 in bit_first],
        "sum_proofs": [[hex(H_POWER(w))] for w in schnorr_nonces[: len(sum_witnesses)]],
        "count_proofs": [[hex(H_POWER(w))] for w in schnorr_nonces[len(sum_witnesses) :]],
        "encryption_proofs": [
            [hex(G_POWER(wt)), hex(pow(keys[i], wt, P) * G_POWER(wy) % P), hex(G_POWER(wy) * H_POWER(wr) % P)]
            for i, (wt, wy, wr) in enumerate(encryption_nonces)
        ],
    }
    c = challenge(_statement(session, key, channel, message))
    for proof, (_, bit, r), (w, c_fake, z_fake) in zip(message["bit_proofs"], bits, bit_state, strict=True):
        c_real = (c - c_fake) % Q
        z_real = (w + c_real * r) % Q
        c0 = c_real if bit == 0 else c_fake
        z0, z1 = (z_real, z_fake) if bit == 0 else (z_fake, z_real)
        proof += [hex(c0), hex(z0), hex(z1)]
    schnorr = [*message["sum_proofs"], *message["count_proofs"]]
    for proof, w, witness in zip(schnorr, schnorr_nonces, sum_witnesses + count_witnesses, strict=True):
        proof.append(hex((w + c * witness) % Q))
    for proof, nonces, witnesses in zip(
        message["encryption_proofs"], encryption_nonces, encryption_witnesses, strict=True
    ):
        proof += [hex((w + c * x) % Q) for w, x in zip(nonces, witnesses, strict=True)]
    return message


@dataclass
class ServerSession:
    """One respondent's verifiable report: the server's secret index j and transfer secret s."""

    channel: Channel
    session: bytes
    index: int
    secret: int
    used: bool = False

    @classmethod
    def start(cls, channel: Channel, below: Below = secrets.randbelow) -> ServerSession:
        return cls(channel, secrets.token_bytes(32), below(channel.slots), below(Q - 1) + 1)

    @property
    def key(self) -> int:
        own = G_POWER(self.secret)
        return own if self.index == 0 else transfer_base(self.index) * pow(own, Q - 1, P) % P

    def offer(self) -> dict[str, str]:
        """Step 1: what the server sends the browser."""
        return {"session": self.session.hex(), "key": hex(self.key)}

    def receive(self, message: dict[str, Any]) -> int:
        """Step 3: verify the answer and return the output of slot j; VerificationError otherwise."""
        if self.used:
            raise VerificationError("this session has already been answered")
        self.used = True
        try:
            return self._verify(message)
        except (KeyError, TypeError, ValueError, IndexError) as error:
            if isinstance(error, VerificationError):
                raise
            raise VerificationError(f"malformed answer: {error}") from error

    def _verify(self, message: dict[str, Any]) -> int:
        channel, n, k_out, k_in = self.channel, self.channel.slots, self.channel.outputs, self.channel.inputs
        if bytes.fromhex(message["session"]) != self.session:
            raise VerificationError("answer to another session")
        X = [int(x, 16) for x in message["inputs"]]
        D = [[int(x, 16) for x in row] for row in message["slots"]]
        E = [(int(u, 16), int(v, 16)) for u, v in message["ciphertexts"]]
        bit_proofs = [[int(x, 16) for x in proof] for proof in message["bit_proofs"]]
        sums = [[int(x, 16) for x in proof] for proof in message["sum_proofs"]]
        counts = [[int(x, 16) for x in proof] for proof in message["count_proofs"]]
        encryption = [[int(x, 16) for x in proof] for proof in message["encryption_proofs"]]
        shapes = (
            len(X),
            len(D),
            {len(row) for row in D},
            len(E),
            len(bit_proofs),
            len(sums),
            len(counts),
            len(encryption),
        )
        if shapes != (k_in, n, {k_out}, n, k_in + n * k_out, 1 + n, k_out, n):
            raise VerificationError("answer of the wrong shape")
        elements = [*X, *(x for row in D for x in row), *(x for pair in E for x in pair)]
        elements += [x for proof in bit_proofs for x in proof[:2]] + [p[0] for p in sums + counts]
        elements += [x for proof in encryption for x in proof[:3]]
        if not all(in_group(x) for x in elements):
            raise VerificationError("an element outside the group")
        scalars = [x for proof in bit_proofs for x in proof[2:]] + [p[1] for p in sums + counts]
        scalars += [x for proof in encryption for x in proof[3:]]
        if not all(0 <= x < Q for x in scalars):
            raise VerificationError("a response outside Z_Q")
        c = challenge(_statement(self.session, self.key, channel, message))

        def schnorr(target: int, first: int, z: int, c_: int = c) -> bool:
            return H_POWER(z) == first * pow(target, c_, P) % P

        commitments = [*X, *(x for row in D for x in row)]
        for commitment, (a0, a1, c0, z0, z1) in zip(commitments, bit_proofs, strict=True):
            c1 = (c - c0) % Q
            if not (schnorr(commitment, a0, z0, c0) and schnorr(commitment * G_INVERSE % P, a1, z1, c1)):
                raise VerificationError("a commitment that is not a bit")
        sum_targets = [_product(X) * G_INVERSE % P] + [_product(row) * G_INVERSE % P for row in D]
        count_targets = [
            _product([D[i][y] for i in range(n)])
            * _product([pow(X[u], (-channel.counts[y][u]) % Q, P) for u in range(k_in)])
            % P
            for y in range(k_out)
        ]
        for target, (first, z) in zip(sum_targets + count_targets, sums + counts, strict=True):
            if not schnorr(target, first, z):
                raise VerificationError("the slots do not hold the channel's multiset for a one-hot input")
        keys = _keys(self.key, n)
        for i, ((u, v), (a1, a2, a3, zt, zy, zr)) in enumerate(zip(E, encryption, strict=True)):
            committed = _product([pow(D[i][y], y, P) for y in range(1, k_out)])
            if (
                G_POWER(zt) != a1 * pow(u, c, P) % P
                or pow(keys[i], zt, P) * G_POWER(zy) % P != a2 * pow(v, c, P) % P
                or G_POWER(zy) * H_POWER(zr) % P != a3 * pow(committed, c, P) % P
            ):
                raise VerificationError("a ciphertext that is not its committed slot")
        u, v = E[self.index]
        plain = v * pow(pow(u, self.secret, P), Q - 1, P) % P
        for y in range(k_out):
            if G_POWER(y) == plain:
                return y
        raise VerificationError("slot j holds no output")  # unreachable: the proofs bind it to y < k_out


def is_probable_prime(n: int, rounds: int = 32) -> bool:
    """Miller-Rabin with ``rounds`` bases drawn from a generator seeded by n (error below 4^-rounds)."""
    if n < 2 or any(n % p == 0 for p in (2, 3, 5, 7, 11, 13)):
        return n in (2, 3, 5, 7, 11, 13)
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    draws = np.random.default_rng(n % 2**63)
    for _ in range(rounds):
        x = pow(int(draws.integers(2, 2**62)) % (n - 3) + 2, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def derive_parameters() -> tuple[int, int]:
    """(P, Q) re-derived from their strings (module docstring), the counter of P given (P_COUNTER)."""
    q = expand(b"murmur-vrm-q", 256) | (1 << 255) | 1
    while not is_probable_prime(q):
        q += 2
    x = expand(b"murmur-vrm-p" + P_COUNTER.to_bytes(4, "big"), 2048) | (1 << 2047)
    return x - (x % (2 * q)) + 1, q
