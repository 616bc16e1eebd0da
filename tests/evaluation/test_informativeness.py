"""Informativeness of a question set against hand-computed saturation and power."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import chi2, nct, norm, t

from situate.errors import SituateError
from situate.evaluation.informativeness import (
    detectable_effect_size,
    informativeness,
    pair_power,
    paired_t_power,
    questions_needed,
    saturation,
)
from situate.evaluation.informativeness_result import Thresholds, markdown_lines


def power_by_definition(effect_size: float, n: int, alpha: float = 0.05) -> float:
    """The paired t-test's power from its definition, without the noncentral t: T' = (Z + nc) /
    S with S = sqrt(V / df), V ~ chi2(df); P(|T'| > c) = E_V[P(Z > cS - nc) + P(Z < -cS - nc)]."""
    df, c, nc = n - 1, t.ppf(1 - alpha / 2, n - 1), effect_size * math.sqrt(n)

    def given(v: float) -> float:
        s = math.sqrt(v / df)
        return (norm.sf(c * s - nc) + norm.cdf(-c * s - nc)) * chi2.pdf(v, df)

    return integrate.quad(given, 0, np.inf, limit=200)[0]


def brute_force_n(effect: float, sd: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """The first n = 2, 3, ... whose paired t-test (noncentral t) power reaches ``power``."""
    n = 2
    while True:
        df, c, nc = n - 1, t.ppf(1 - alpha / 2, n - 1), effect / sd * math.sqrt(n)
        if nct.sf(c, df, nc) + np.nan_to_num(nct.cdf(-c, df, nc)) >= power:
            return n
        n += 1


def test_power_matches_its_definition():
    for es, n in [(0.5, 34), (0.9960, 10), (0.2, 131), (1.5, 4)]:
        assert paired_t_power(es, n) == pytest.approx(power_by_definition(es, n), abs=1e-6)
    # G*Power's classic paired case: dz = 0.5 needs 34 pairs for 80% (its actual power 0.808)
    assert paired_t_power(0.5, 34) == pytest.approx(0.808, abs=5e-4)
    assert paired_t_power(0.0, 20) == pytest.approx(0.05)  # no effect: the test's level


def test_mde_of_ten_questions_by_hand():
    # 10 questions; the arm gains questions 0 and 3: d = [1, 0, 0, 1, 0, 0, 0, 0, 0, 0]
    # mean 0.2; sum (d - 0.2)^2 = 2 * 0.64 + 8 * 0.04 = 1.6; sd = sqrt(1.6 / 9) = 0.42164
    # normal approximation: (1.95996 + 0.84162) * 0.42164 / sqrt(10) = 2.80158 * 0.13333 = 0.37355
    base = [0] * 10
    arm = [1, 0, 0, 1, 0, 0, 0, 0, 0, 0]
    p = pair_power("pass_at_5", "arm", "base", arm, base)
    assert (p.questions, p.difference) == (10, pytest.approx(0.2))
    assert p.sd == pytest.approx(math.sqrt(1.6 / 9))
    normal = (norm.ppf(0.975) + norm.ppf(0.8)) * p.sd / math.sqrt(10)
    assert normal == pytest.approx(0.37355, abs=1e-5)
    # the t version: the effect whose power is 80% by the definition, times sd; with 9 degrees of
    # freedom it is 12% above the normal one (es = 0.99600 against 2.80158 / sqrt(10) = 0.88594)
    es = p.mde / p.sd
    assert power_by_definition(es, 10) == pytest.approx(0.8, abs=1e-6)
    assert es == pytest.approx(0.99600, abs=1e-4)
    assert p.mde == pytest.approx(0.41995, abs=1e-4)
    assert not p.separated  # 0.2 < 0.42: ten questions cannot detect a gain of two
    assert p.ratio == pytest.approx(0.2 / p.mde)


def test_detectable_effect_shrinks_as_one_over_root_n():
    # for large n the t version tends to the normal one, 2.80158 / sqrt(n)
    assert detectable_effect_size(10_000) * 100 == pytest.approx(2.80158, rel=1e-3)
    assert detectable_effect_size(131) > 2.80158 / math.sqrt(131)
    assert math.isinf(detectable_effect_size(1))


def test_topic_set_size_matches_a_brute_force_loop():
    for effect, sd in [(0.05, 0.3), (0.02, 0.3), (0.05, 0.14), (0.3, 0.4), (0.5, 1.0)]:
        assert questions_needed(effect, sd) == brute_force_n(effect, sd)
    assert questions_needed(0.5, 1.0) == 34  # dz = 0.5, as above
    # Sakai's starting point, ((1.95996 + 0.84162) / (0.02 / 0.3))^2 + 1.95996^2 / 2 =
    # 42.0237^2 + 1.9207 = 1765.99 + 1.92 = 1767.9, is within a question of the exact n
    assert abs(questions_needed(0.02, 0.3) - 1767.9) <= 1.5
    # an effect of 50 sd: 2 pairs (the test's minimum: 1 degree of freedom) suffice; n0 is 2.0
    assert questions_needed(5.0, 0.1) == brute_force_n(5.0, 0.1) == 2
    with pytest.raises(ValueError):
        questions_needed(0.02, 0.0)


def test_saturation_shares_by_hand():
    # 8 questions, 3 arms
    a = [1, 1, 1, 1, 0, 0, 0, 1]
    b = [1, 1, 1, 0, 0, 0, 1, 1]
    c = [1, 1, 1, 1, 0, 0, 0, 0]
    s = saturation("pass_at_5", {"a": np.array(a), "b": np.array(b), "c": np.array(c)})
    # every arm solves questions 0, 1, 2 (3/8); none solves 4, 5 (2/8); they differ on 3, 6, 7
    assert (s.all_solved, s.none_solved, s.discriminating) == (3 / 8, 2 / 8, 3 / 8)
    assert s.means == {"a": 5 / 8, "b": 5 / 8, "c": 4 / 8}
    assert not (s.graded or s.saturated or s.floored)


def test_graded_metric_counts_the_maximum_and_zero():
    # MRR: a question is solved at 1.0 (first rank), unsolved at 0
    a = np.array([1.0, 0.5, 0.0, 1.0])
    b = np.array([1.0, 1.0, 0.0, 0.25])
    s = saturation("mrr", {"a": a, "b": b})
    assert (s.all_solved, s.none_solved, s.discriminating) == (1 / 4, 1 / 4, 2 / 4)
    assert s.graded
    assert s.means == {"a": 0.625, "b": 0.5625}


def saturated_set() -> dict[str, np.ndarray]:
    """100 questions: every arm solves 0-89; then base 90-93, heading 90-92 + 94-95, rrf 90-95."""
    base, heading, rrf = np.zeros(100), np.zeros(100), np.zeros(100)
    base[:90] = heading[:90] = rrf[:90] = 1
    base[[90, 91, 92, 93]] = 1
    heading[[90, 91, 92, 94, 95]] = 1
    rrf[90:96] = 1
    return {"base": base, "heading": heading, "rrf": rrf}


def test_a_saturated_set_warns_in_words():
    r = informativeness({"pass_at_20": saturated_set()}, baseline="base")
    m = r.best
    # every arm solves 0-92 (93/100); nobody solves 96-99 (4/100); means 0.94, 0.95, 0.96
    assert (m.saturation.all_solved, m.saturation.none_solved) == (0.93, 0.04)
    assert m.saturation.means == {"base": 0.94, "heading": 0.95, "rrf": 0.96}
    assert m.saturation.saturated and m.problem == "saturated"
    heading, rrf = m.pairs
    # heading - base: d = -1 (q93), +1 (q94, q95), 0 elsewhere: mean 0.01,
    # sd = sqrt((3 - 100 * 0.01^2) / 99) = sqrt(2.99 / 99) = 0.17379
    assert (heading.arm, heading.versus) == ("heading", "base")
    assert heading.difference == pytest.approx(0.01)
    assert heading.sd == pytest.approx(math.sqrt(2.99 / 99))
    # rrf - base: d = +1 (q94, q95): mean 0.02, sd = sqrt((2 - 100 * 0.02^2) / 99) = 0.14071
    assert rrf.sd == pytest.approx(math.sqrt(1.96 / 99))
    es = detectable_effect_size(100)  # 0.28290 (normal: 0.28016)
    assert heading.mde == pytest.approx(heading.sd * es)  # 0.04917
    assert rrf.mde == pytest.approx(rrf.sd * es)  # 0.03981
    assert not heading.separated and not rrf.separated
    assert m.median_mde == pytest.approx((heading.mde + rrf.mde) / 2)  # 0.04449: 4.4 points
    assert heading.needed == {0.02: brute_force_n(0.02, heading.sd), 0.05: 97}
    assert not r.separates
    assert r.warning == (
        "question set cannot separate the arms: saturated at Pass@20: 93% of its 100 questions "
        "are answered by every arm; differences under 4.4 points cannot be detected with 100 "
        f"questions (detecting 2 points would take ~{round(m.median_needed(0.02), -1)} questions, "
        f"5 points {m.median_needed(0.05)}): do not pick a configuration from it"
    )
    assert r.verdict == r.warning
    assert r.paragraph.startswith(
        "This question set is saturated at Pass@20: 93% of its 100 questions are answered by "
        "every arm. Differences under 4.4 points cannot be detected with 100 questions (median "
        "over the compared pairs; 80% power, alpha 0.05; detecting 2 points would take ~"
    )
    assert r.paragraph.endswith("Do not pick a configuration from it.")


def test_an_informative_set_does_not_warn():
    # 200 questions: the baseline solves 0-99, the arm 0-139: d = 1 on 40 questions, 0 elsewhere
    # mean 0.2; sd = sqrt(200 * 0.2 * 0.8 / 199) = 0.40100; MDE = 0.40100 * es(200) ~ 0.0798
    base, arm = np.zeros(200), np.zeros(200)
    base[:100], arm[:140] = 1, 1
    r = informativeness({"pass_at_5": {"base": base, "arm": arm}}, baseline="base")
    p = r.best.pairs[0]
    assert p.sd == pytest.approx(math.sqrt(32 / 199))
    assert p.mde == pytest.approx(p.sd * detectable_effect_size(200))
    assert p.mde == pytest.approx(0.0798, abs=5e-4)
    assert p.separated  # 0.2 >= 0.08
    # every arm solves 0-99 (50%), none solves 140-199 (30%): neither saturated nor floored
    assert r.best.problem is None and r.separates and r.warning is None
    assert r.verdict == (
        "question set separates 1 of 1 compared pairs at Pass@5 (smallest detectable difference "
        "8.0 points with 200 questions); recommended report.headline=pass_at_5"
    )
    assert "Do not pick" not in r.paragraph
    assert "recommended report.headline: pass_at_5" in r.paragraph


def test_a_small_set_is_underpowered():
    # 20 questions; d = +1 on q0, q1, -1 on q2: mean 0.05; sd = sqrt((3 - 20 * 0.0025) / 19)
    # = 0.39403; MDE ~ 0.394 * es(20) (= 0.6604) = 0.2602 > 0.05 = the difference
    base = np.array([0, 0, 1] + [1] * 8 + [0] * 9, dtype=float)
    arm = np.array([1, 1, 0] + [1] * 8 + [0] * 9, dtype=float)
    r = informativeness({"pass_at_5": {"base": base, "arm": arm}}, baseline="base")
    m = r.best
    assert m.pairs[0].sd == pytest.approx(math.sqrt(2.95 / 19))
    assert m.pairs[0].mde == pytest.approx(0.2602, abs=5e-4)
    assert m.underpowered and m.problem == "underpowered" and not r.separates
    assert r.warning.startswith(
        "question set cannot separate the arms: too small to separate the arms at Pass@5; "
        "differences under 26.0 points cannot be detected with 20 questions"
    )
    assert "No compared pair differs by that much (largest difference: 5.0 points)." in (
        r.paragraph
    )
    # the same set with a looser threshold (a 30-point MDE accepted) is not underpowered, but
    # unstable: the arm gains one question net (q0, q1 against q2), so no split of the 20 in two
    # halves gives it the lead in both (the halves' net gains a and 1 - a cannot both be >= 1):
    # every split's tau-a is 0 or -1
    loose = informativeness(
        {"pass_at_5": {"base": base, "arm": arm}}, "base", Thresholds(max_mde=0.3)
    )
    assert loose.best.problem == "unstable" and loose.best.stability <= 0
    assert loose.warning.startswith(
        "question set cannot separate the arms: unstable at Pass@5: two random halves of its 20 "
        f"questions order the arms alike at only tau-a {loose.best.stability:+.2f} (the median "
        "of the splits; at 1 they order every pair alike); differences under 26.0 points"
    )
    looser = Thresholds(max_mde=0.3, min_stability=-1.0)
    assert informativeness({"pass_at_5": {"base": base, "arm": arm}}, "base", looser).separates


def test_arms_that_never_differ_cannot_be_separated():
    same = np.array([1, 0, 1, 1, 0], dtype=float)
    p = pair_power("pass_at_5", "b", "a", same, same.copy())
    # d = 0 everywhere: sd 0, no difference detectable, no number of questions would help
    assert (p.sd, p.difference) == (0.0, 0.0)
    assert math.isinf(p.mde) and p.identical and not p.separated
    assert p.needed == {0.02: None, 0.05: None} and p.ratio == 0.0
    r = informativeness({"pass_at_5": {"a": same, "b": same.copy()}})
    assert not r.separates
    assert r.warning == (
        "question set cannot separate the arms: unable to separate the arms at Pass@5; no "
        "compared pair of arms scores differently on any of its 5 questions: do not pick a "
        "configuration from it"
    )
    assert r.paragraph == (
        "This question set is unable to separate the arms at Pass@5. No compared pair of arms "
        "scores differently on any of its 5 questions. Do not pick a configuration from it."
    )
    # the same nonzero difference on every question: sd 0 again, but separated with certainty
    q = pair_power("pass_at_5", "b", "a", np.ones(5), np.zeros(5))
    assert (q.mde, q.difference, q.separated, q.ratio) == (0.0, 1.0, True, math.inf)


def test_every_pair_is_compared_without_a_baseline():
    s = saturated_set()
    r = informativeness({"pass_at_20": s})
    pairs = [(p.arm, p.versus) for p in r.best.pairs]
    assert pairs == [("heading", "base"), ("rrf", "base"), ("rrf", "heading")]
    # rrf - heading: d = +1 on q93 only: mean 0.01, sd = sqrt((1 - 0.01) / 99) = 0.1
    assert r.best.pairs[2].sd == pytest.approx(0.1)


def test_the_most_stable_fit_metric_is_recommended():
    n = 200
    base, arm, other = np.zeros(n), np.zeros(n), np.zeros(n)
    base[:100], arm[:140], other[:110] = 1, 1, 1
    # pass_at_5: arm +0.2 (sd 0.40, MDE 0.08, separated), other +0.05 (sd 0.218, MDE 0.043,
    # separated): 2 pairs separated
    # pass_at_20: every arm solves 190 of 200 questions: saturated, even though its arms differ
    # on the other 10 questions (arm and other solve them, base does not: d = 1 on 5%)
    high_base, high = np.ones(n), np.ones(n)
    high_base[190:] = 0
    # mrr: arm +0.1 on 40 questions (sd ~0.2, MDE ~0.04, separated), other never differs from base
    # stability (tau-a of two halves): pass_at_5 orders arm > other > base in every half (arm's 40
    # and other's 10 gains cannot all fall in one half of 100): 1; mrr and pass_at_20 tie other
    # with base in every half and order the two other pairs alike: 2/3
    mrr_base = base * 0.5
    mrr_arm = mrr_base.copy()
    mrr_arm[100:140] = 0.5
    scores = {
        "pass_at_20": {"base": high_base, "arm": high, "other": high.copy()},
        "mrr": {"base": mrr_base, "arm": mrr_arm, "other": mrr_base.copy()},
        "pass_at_5": {"base": base, "arm": arm, "other": other},
    }
    r = informativeness(scores, baseline="base")
    assert r.metrics["pass_at_20"].problem == "saturated"
    assert r.metrics["pass_at_20"].separated == 2  # separated, but on a saturated metric
    assert r.metrics["mrr"].separated == 1
    assert r.metrics["pass_at_5"].separated == 2
    assert [r.metrics[m].stability for m in scores] == pytest.approx([2 / 3, 2 / 3, 1.0])
    assert r.headline == "pass_at_5"
    assert "It is saturated at Pass@20: 95% of its 200 questions are answered by every arm" in (
        r.paragraph
    )
    # with pass_at_5 gone, mrr's one separated pair beats the saturated pass_at_20
    del scores["pass_at_5"]
    assert informativeness(scores, baseline="base").headline == "mrr"
    # a tie in stability (2/3 each: both tie other with base) and in separated pairs goes to the
    # larger mean |difference| / MDE
    scaled = {
        "pass_at_5": scores["mrr"],
        "pass_at_10": {k: v * 2 for k, v in scores["mrr"].items()},
    }
    # doubling every score doubles d and sd alike: the same ratio, so the first metric wins
    assert informativeness(scaled, baseline="base").headline == "pass_at_5"
    sharper = dict(scaled["pass_at_10"])
    sharper["arm"] = sharper["arm"].copy()
    sharper["arm"][140:150] = 1.0  # 10 more gains: a larger |d| / MDE
    r2 = informativeness({"pass_at_5": scaled["pass_at_5"], "pass_at_10": sharper}, "base")
    assert r2.metrics["pass_at_10"].mean_ratio > r2.metrics["pass_at_5"].mean_ratio
    assert r2.headline == "pass_at_10"


def test_the_more_stable_metric_beats_more_separated_pairs():
    # 200 questions, baseline a (solves 0-99). pass_at_5: b, c and d all solve 0-139 (+0.2 each,
    # MDE 0.080: 3 of 3 separated), but every half ties them with each other: tau-a of the
    # halves (3 pairs with a alike, 3 tied) / 6 = 0.5
    n = 200
    a = np.zeros(n)
    a[:100] = 1
    tied = a.copy()
    tied[100:140] = 1
    # pass_at_20: b gains 100-113 and loses 0-5 (+0.04, sd 0.3145, MDE 0.063: not separated), c
    # solves 0-139 (+0.2), d 0-179 (+0.4): 2 of 3 separated. Every pair but b-a has gains only,
    # too many to fall in one half; b-a keeps its sign in both halves when the first half holds
    # p of the 14 gains and m of the 6 losses with 0 < p - m < 8: probability 0.887 (the
    # multivariate hypergeometric), so most splits order all 6 pairs alike: median tau-a 1
    b = a.copy()
    b[100:114], b[:6] = 1, 0
    d = a.copy()
    d[100:180] = 1
    scores = {
        "pass_at_5": {"a": a, "b": tied, "c": tied.copy(), "d": tied.copy()},
        "pass_at_20": {"a": a, "b": b, "c": tied.copy(), "d": d},
    }
    r = informativeness(scores, baseline="a")
    tie, steady = r.metrics["pass_at_5"], r.metrics["pass_at_20"]
    assert (tie.separated, steady.separated) == (3, 2)
    assert steady.pairs[0].mde == pytest.approx(math.sqrt(19.68 / 199) * detectable_effect_size(n))
    assert (tie.stability, steady.stability) == (0.5, 1.0)
    assert r.headline == "pass_at_20"
    assert "Two random halves of its questions order the arms alike at tau-a +1.00 there" in (
        r.paragraph
    )


def test_a_set_too_small_to_halve_has_no_stability():
    r = informativeness({"pass_at_5": {"a": [1.0, 0.0, 1.0], "b": [1.0, 1.0, 1.0]}})
    assert math.isnan(r.best.stability)
    assert "halves" not in r.paragraph
    table = [line for line in markdown_lines(r) if line.startswith("| **Pass@5**")]
    assert table[0].startswith("| **Pass@5** | 3 | 66.7-100.0% | 67% | 0% | 33% | - |")


def test_unscored_questions_are_left_out_of_that_metric():
    a = np.array([1, 0, np.nan, 1, 0, 1], dtype=float)
    b = np.array([1, 1, 1, 1, np.nan, 1], dtype=float)
    r = informativeness({"pass_at_5": {"a": a, "b": b}})
    s = r.best.saturation
    # questions 2 and 4 are blank in one arm: 4 left; solved by both: 0, 3, 5 -> 3/4
    assert s.questions == 4 and s.all_solved == 0.75
    assert r.best.pairs[0].difference == pytest.approx(0.25)
    # a metric may list the arms in another order: they are read in the first metric's order
    swapped = informativeness({"pass_at_5": {"a": a, "b": b}, "mrr": {"b": b, "a": a}})
    assert [(p.arm, p.versus) for p in swapped.metrics["mrr"].pairs] == [("b", "a")]


def test_bad_input_is_one_line():
    with pytest.raises(SituateError, match="baseline 'c' is not one of the arms"):
        informativeness({"mrr": {"a": [1, 0], "b": [0, 1]}}, baseline="c")
    with pytest.raises(SituateError, match="two or more arms"):
        informativeness({"mrr": {"a": [1, 0]}})
    with pytest.raises(SituateError, match="same questions"):
        informativeness({"mrr": {"a": [1, 0], "b": [0, 1, 1]}})
    with pytest.raises(SituateError, match="same arms"):
        informativeness({"mrr": {"a": [1, 0], "b": [0, 1]}, "pass_at_5": {"a": [1], "c": [1]}})
    with pytest.raises(SituateError, match="mrr scores none of the questions"):
        informativeness({"mrr": {"a": [np.nan, 1], "b": [0, np.nan]}})
    with pytest.raises(SituateError, match="no metric"):
        informativeness({})


def test_markdown_lines_hold_the_paragraph_a_row_per_metric_and_per_pair():
    s = saturated_set()
    mrr = {a: v * 0.5 for a, v in s.items()}  # every arm at 0.5 on 0-89: nothing at the maximum
    # the halves of these questions agree at +1/3 (below): unstable by default (below 0.5), and
    # the "arms score alike" reading with min_stability 0.3
    unstable = informativeness({"pass_at_20": s, "mrr": mrr}, baseline="base")
    assert unstable.best.problem == "unstable" and unstable.headline == "mrr"
    assert unstable.warning.startswith(
        "question set cannot separate the arms: unstable at MRR: two random halves of its 100 "
        "questions order the arms alike at only tau-a +0.33"
    )
    r = informativeness(
        {"pass_at_20": s, "mrr": mrr}, baseline="base", thresholds=Thresholds(min_stability=0.3)
    )
    lines = markdown_lines(r)
    assert lines[:4] == ["## How informative is this question set", "", r.paragraph, ""]
    table = [line for line in lines if line.startswith("| ")]
    assert table[0].startswith("| metric | questions | arms' means | every arm solves |")
    by_metric = {row.split(" | ")[0]: row for row in table[1:3]}
    # Pass@20: means 94.0-96.0%, 93% solved by every arm, 4% by none, 3% differ (q93, q94, q95);
    # halves: only where q93, q94 and q95 fall decides the order (base has q93, heading q94 and
    # q95, rrf all three). q94 and q95 both in q93's half (p = 49/99 * 48/98 = 0.242) leave the
    # other half flat: tau-a 0; both in the other half (0.253): base-heading reversed, the rest
    # tied in one half: -1/3; split (0.505): base-rrf alike, the rest tied: +1/3. Over half the
    # splits give +1/3: the median is +0.33
    assert by_metric["| Pass@20"].startswith(
        "| Pass@20 | 100 | 94.0-96.0% | 93% | 4% | 3% | +0.33 | 0 of 2 | 4.4 points |"
    )
    assert by_metric["| Pass@20"].endswith("| saturated |")
    # MRR halves every score: d and sd halve, so the ratios are Pass@20's; it is neither
    # saturated (nothing at 1.0; means 0.47-0.48) nor floored, so it is recommended, in bold
    assert r.headline == "mrr"
    assert by_metric["| **MRR**"].startswith(
        "| **MRR** | 100 | 0.470-0.480 | 0% | 4% | 3% | +0.33 |"
    )
    # its arms differ by less than its MDE (0.022 with sd 0.087 and 0.070), but 0.022 is below
    # max_mde (0.05): the set can detect small differences, the arms score alike on it
    assert by_metric["| **MRR**"].endswith("| 0 of 2 | 0.022 | ~130 / 22 | recommended headline |")
    assert r.separates and r.warning is None
    assert r.verdict == (
        "question set: no compared pair differs at MRR by the smallest detectable difference "
        "0.022 with 100 questions: the arms score alike on it; recommended report.headline=mrr"
    )
    assert r.paragraph.startswith(
        "This question set orders the arms it compares most reproducibly at MRR (recommended "
        "report.headline: mrr), but none of the 2 compared pairs differs by the smallest "
        "difference it can detect: on these questions the arms score alike (largest difference: "
        "0.010). With its 100 questions that is 0.022 (median over the pairs;"
    )
    assert r.paragraph.endswith(
        "It is saturated at Pass@20: 93% of its 100 questions are answered by every arm: do not "
        "compare arms at that metric."
    )
    pairs = table[3:]
    assert pairs[0].startswith("| pair | difference | sd of the differences |")
    # heading - base at MRR: mean d 0.005, sd 0.17379 / 2 = 0.08689
    assert pairs[1].startswith("| heading - base | +0.005 | 0.087 | ")
    assert len(pairs) == 3
