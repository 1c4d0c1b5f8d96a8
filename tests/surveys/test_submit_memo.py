"""The submit path's shortcuts give exactly what the long way gives: remembered cells and receipt
words, and array literals that PostgreSQL reads back byte for byte."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection

from surveys.randomizations import build_mechanism
from surveys.responding import memo, tallies
from surveys.responding.writes import bytea_array, int_array
from tests.surveys.test_storage import MECHANISMS

OPTIONS = ["a", "b", "c", "d", "e"]
#: Small report spaces (remembered whole) and large ones (CMS's sketch rows, OLH's hashed reports).
MIX = [*MECHANISMS, ("olh", {})]


@pytest.mark.parametrize(("name", "params"), MIX)
def test_remembered_cells_equal_the_tally_of_each_report(name: str, params: dict[str, int]) -> None:
    mechanism = build_mechanism(name, len(OPTIONS), 1.0, params)
    rng = np.random.default_rng(5)
    packed = [row.tobytes() for row in mechanism.randomize(rng.integers(0, len(OPTIONS), size=40), rng=rng)]
    for report in packed + packed:  # the second pass reads what the first remembered
        cells = memo.remembered("cells-test", mechanism, report, lambda r=report: tallies.report_cells(mechanism, [r]))
        assert list(cells) == tallies.report_cells(mechanism, [report])
    batch = tallies.report_cells(mechanism, packed)
    summed: dict[int, int] = {}
    for report in packed:
        for cell, increment in tallies.report_cells(mechanism, [report]):
            summed[cell] = summed.get(cell, 0) + increment
    assert sorted(summed.items()) == sorted(batch)


def test_memo_stays_bounded_and_keys_by_mechanism(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memo, "ENTRIES", 3)
    first, second = object(), object()
    calls = []
    for key in range(5):
        memo.remembered("bound-test", first, key, lambda k=key: calls.append(k) or k)
    assert len(memo._MEMOS[("bound-test", id(first))][1]) == 3
    assert memo.remembered("bound-test", first, 4, lambda: -1) == -1  # not kept: computed again
    assert memo.remembered("bound-test", second, 0, lambda: "other") == "other"


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL array literals")
def test_array_literals_read_back_exactly() -> None:
    values = [b"", b"\x00", b"\\", b'"', b"\xff{},", bytes(range(256))]
    numbers = [0, -1, 2**62, -(2**63), 7]
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::bytea[], %s::bigint[]", [bytea_array(values), int_array(numbers)])
        stored, read = cursor.fetchone()
    assert [bytes(v) for v in stored] == values
    assert read == numbers
