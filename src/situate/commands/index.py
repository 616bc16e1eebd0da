"""``situate index [overrides]``: build and persist a config's indexes under ``outputs/index/<key>``."""

from __future__ import annotations

from situate.config.compose import compose


def main(args: list[str]) -> int:
    from situate.config.checks import check_output_folders
    from situate.config.preflight import stages_of_index
    from situate.running import saved_index
    from situate.running.app import build_pipeline

    cfg = compose(args, uses=stages_of_index)
    check_output_folders(cfg)
    folder, timings = saved_index.build(cfg, build_pipeline(cfg))
    spent = ", ".join(f"{k} {v:.1f}s" for k, v in timings.items())
    print(f"index: {folder} ({spent})")
    return 0
