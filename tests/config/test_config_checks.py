"""The type check of overrides never refuses a value the shipped options set themselves: typed on
the command line, each must pass (a false alarm would block a valid run). The writable check
refuses what even root cannot write and leaves nothing behind where it can."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from situate.config.checks import accepts, check_writable, parameter_hint
from situate.errors import SituateError

CONF = Path(__file__).resolve().parents[2] / "conf"


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


def test_a_folder_that_can_be_made_passes_and_nothing_is_left_behind(tmp_path):
    check_writable("output_dir", tmp_path / "out" / "deeper")
    assert list(tmp_path.iterdir()) == []  # the scratch folder is removed, none is made


def test_a_folder_under_a_file_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("")
    with pytest.raises(SituateError) as e:
        check_writable("output_dir", tmp_path / "notes.txt" / "out")
    assert str(e.value) == (
        f"output_dir={tmp_path}/notes.txt/out: cannot write there ({tmp_path}/notes.txt is a "
        "file, not a folder); set output_dir=<a writable folder>"
    )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")
def test_a_folder_root_cannot_make_is_refused():
    """/proc's permission bits let root write (os.access says yes); making a folder there fails."""
    with pytest.raises(SituateError) as e:
        check_writable("cache_dir", "/proc/situate-out/cache")
    assert str(e.value) == (
        "cache_dir=/proc/situate-out/cache: cannot write there (cannot create a folder in /proc: "
        "No such file or directory); set cache_dir=<a writable folder>"
    )


def test_every_verb_composes_with_the_type_check():
    """`situate index`, `search`, `chunks`, `estimate`, `report` compose through `compose`: a
    value of the wrong type is named there, not as the stage's TypeError when it is built."""
    from situate.config.compose import compose

    with pytest.raises(SituateError) as e:
        compose(["fusion.k=abc"])
    assert (
        str(e.value)
        == "fusion.k=abc: fusion.k takes a number, not the string 'abc'; e.g. fusion.k=60"
    )
    assert compose(["fusion.k=20"]).fusion.k == 20
