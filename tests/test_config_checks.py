"""The type check of overrides never refuses a value the shipped options set themselves: typed on
the command line, each must pass (a false alarm would block a valid run)."""

from __future__ import annotations

from pathlib import Path

from omegaconf import OmegaConf

from situate.config_checks import accepts, parameter_hint

CONF = Path(__file__).resolve().parents[1] / "conf"


def test_every_value_of_every_shipped_option_passes_the_type_check():
    checked, refused = 0, []
    for path in sorted(CONF.glob("*/*.yaml")):
        node = OmegaConf.load(path)
        if "_target_" not in node:
            continue
        for key, value in OmegaConf.to_container(node, resolve=False).items():
            hint, default = parameter_hint(node, key)
            if hint is None or isinstance(value, str) and ("${" in value or value == "???"):
                continue
            checked += 1
            if not (value is None and default is None or accepts(hint, value)):
                refused.append(f"{path.relative_to(CONF)}: {key}={value!r} ({hint})")
    assert refused == []
    assert checked > 200  # the stages' signatures were read (221 values when written)


def test_the_check_refuses_what_the_stage_cannot_take():
    node = OmegaConf.create({"_target_": "situate.fusion.rrf.ReciprocalRankFusion"})
    hint, default = parameter_hint(node, "k")
    assert default == 60
    assert [accepts(hint, v) for v in (60, 0.5, "abc", True, None, [60])] == [
        True, True, False, False, False, False,
    ]  # fmt: skip
    ks, _ = parameter_hint(
        OmegaConf.create({"_target_": "situate.evaluation.evaluate.Evaluator"}), "ks"
    )
    assert [accepts(ks, v) for v in ([5, 10], [], "5", [5, "x"], 5)] == [
        True,
        True,
        False,
        False,
        False,
    ]
