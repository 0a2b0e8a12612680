"""IMP scales: the WBF scale step by step, scale files, and their refusals."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from hub.domain.imp import WBF, ImpScale, ScaleError, parse_scale

SAMPLES = Path(__file__).resolve().parent.parent / "samples"

# The WBF table as issue 12 lists it: a difference of at least `from` is worth `imps`.
WBF_TABLE = [
    (20, 1), (50, 2), (90, 3), (130, 4), (170, 5), (220, 6), (270, 7), (320, 8), (370, 9),
    (430, 10), (500, 11), (600, 12), (750, 13), (900, 14), (1100, 15), (1300, 16), (1500, 17),
    (1750, 18), (2000, 19), (2250, 20), (2500, 21), (3000, 22), (3500, 23), (4000, 24),
]  # fmt: skip


@pytest.mark.parametrize(("low", "imps"), WBF_TABLE)
def test_wbf_scale_every_step_and_just_below_it(low: int, imps: int) -> None:
    assert WBF.imps(low) == imps
    assert WBF.imps(low - 1) == imps - 1
    assert WBF.imps(Fraction(low * 10 - 1, 10)) == imps - 1  # 19.9 is still below 20
    assert WBF.imps(-low) == -imps  # negative differences are symmetric
    assert WBF.imps(-(low - 1)) == -(imps - 1)


def test_wbf_scale_ends() -> None:
    assert WBF.imps(0) == 0
    assert WBF.imps(19) == 0 and WBF.imps(-19) == 0
    assert WBF.imps(10**9) == 24 and WBF.imps(-(10**9)) == -24
    assert WBF.name == "WBF"


def test_scale_file_format() -> None:
    scale = parse_scale(
        "# difference in big blinds, IMPs\n\n0.5, 1\n2,2   # two big blinds\n 3.25 , 3\n", "bb"
    )
    assert scale == ImpScale(((Fraction(1, 2), 1), (Fraction(2), 2), (Fraction(13, 4), 3)), "bb")
    assert [scale.imps(x) for x in (Fraction(49, 100), Fraction(1, 2), 3, Fraction(-13, 4))] == [
        0,
        1,
        2,
        -3,
    ]


def test_the_sample_scale_file_is_the_wbf_scale() -> None:
    scale = parse_scale((SAMPLES / "imp-scale-wbf.csv").read_text(encoding="utf-8"), "WBF")
    assert scale == WBF


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no steps (expected lines 'difference, IMPs')"),
        ("# only a comment\n", "no steps (expected lines 'difference, IMPs')"),
        ("20 1\n", "line 1: expected 'difference, IMPs', got '20 1'"),
        ("20, 1, 2\n", "line 1: expected 'difference, IMPs', got '20, 1, 2'"),
        ("twenty, 1\n", "line 1: difference 'twenty' is not a number"),
        ("20, one\n", "line 1: IMPs 'one' is not a number"),
        ("20, 1.5\n", "line 1: IMPs '1.5' is not a whole number"),
        ("nan, 1\n", "line 1: difference 'nan' is not a number"),
        ("0, 1\n", "line 1: the first step must start above 0, not 0"),
        ("20, 1\n\n50, 2\n40, 3\n", "line 4: step 40 does not come after step 50"),
        ("20, 1\n50, 1\n", "line 2: step 50 gives 1 IMPs, not more than 1"),
        ("20, 0\n", "line 1: step 20 gives 0 IMPs, not more than 0"),
    ],
)
def test_bad_scale_files_name_the_line(text: str, message: str) -> None:
    with pytest.raises(ScaleError) as info:
        parse_scale(text)
    assert str(info.value) == message
