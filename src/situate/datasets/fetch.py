"""Download the public datasets, checked against pinned sha256 sums.

``fetch("covid-qa", dest)`` puts ``200423_covidQA.json`` in ``dest/covid-qa/``; ``fetch("cookbook",
dest)`` puts ``codebase_chunks.json`` and ``evaluation_set.jsonl`` in ``dest/cookbook-codebase/``.
Files already there with the right sha256 are not downloaded again; a download goes to a temporary
file beside the target and replaces it only once its sha256 checks out.

The cookbook's recorded contexts (``recorded_contexts.json``) are not downloaded: they are derived
from denser-retriever's ``experiments/data/contextual-embeddings/data_context/passages.jsonl``, whose
``page_content`` is each chunk's text, two newlines and Claude's context, so the file cannot be
fetched as is and its bytes cannot be pinned here. Place ``recorded_contexts.json`` (a JSON list of
737 records ``doc_id``, ``original_uuid``, ``chunk_id``, ``original_index``, ``context``) in
``dest/cookbook-codebase/`` by hand.
"""

from __future__ import annotations

from pathlib import Path

from situate.datasets.download import Remote, download_all, is_present, make_folder
from situate.errors import SituateError

_COOKBOOK = (
    "https://raw.githubusercontent.com/anthropics/claude-cookbooks/main/"
    "skills/contextual-embeddings/data/"
)
_COVID_QA = "https://raw.githubusercontent.com/deepset-ai/COVID-QA/master/data/question-answering/"

DATASETS: dict[str, list[Remote]] = {
    "cookbook": [
        Remote(
            _COOKBOOK + "codebase_chunks.json",
            "codebase_chunks.json",
            "70dbed1cb8a90a107b23742b1537051346860f841ec8b03734c1298fa4a34d46",
            1126046,
        ),
        Remote(
            _COOKBOOK + "evaluation_set.jsonl",
            "evaluation_set.jsonl",
            "7186e2bed15547a2ed178134876b29e4abb206bf0394facbe61d58bf835ee073",
            3571229,
        ),
    ],
    "covid-qa": [
        Remote(
            _COVID_QA + "200423_covidQA.json",
            "200423_covidQA.json",
            "ab310b4e39f726e087c8fa3d1787c73771dacddc584977204ebe3cc889ee1264",
            2697757,
        ),
    ],
}

# The folder under ``dest`` that each dataset goes to (the layout conf/dataset/*.yaml expects).
FOLDERS: dict[str, str] = {"cookbook": "cookbook-codebase", "covid-qa": "covid-qa"}


def fetch(name: str, dest: Path, progress: bool = True) -> list[Path]:
    """Download dataset ``name`` into ``dest/<folder>/`` and return the paths of its files.

    Parameters
    ----------
    name
        A key of :data:`DATASETS`.
    dest
        The data folder (``SITUATE_DATA_DIR``); the files go to ``dest / FOLDERS[name]``.
    progress
        Show a rich progress bar while downloading.

    Returns
    -------
    list of Path
        One path per file of the dataset, in :data:`DATASETS` order, each with the pinned sha256.

    Raises
    ------
    SituateError
        Unknown name; a sha256 mismatch (the download is deleted); no network (the message names
        the URLs still missing and the folder to put them in by hand).
    """
    if name == "financebench":  # a pinned commit's files, checked by their git blob hashes
        from situate.datasets.financebench import fetch_financebench

        return fetch_financebench(Path(dest).expanduser() / "financebench", progress)
    if name not in DATASETS:
        names = sorted([*DATASETS, "financebench"])
        raise SituateError(f"unknown dataset {name!r}; choose one of: {', '.join(names)}")
    folder = Path(dest).expanduser() / FOLDERS.get(name, name)
    remotes = DATASETS[name]
    missing = [r for r in remotes if not is_present(folder / r.filename, r.sha256)]
    if missing:
        make_folder(folder)
        download_all(name, missing, folder, progress)
    return [folder / r.filename for r in remotes]
