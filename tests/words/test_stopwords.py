"""The one stop-word list of each language: its words checked by hand, and a scan of
``src/situate`` that fails on a second list written anywhere but ``words/stopwords.py``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from situate.words.stopwords import ENGLISH, SPANISH, without_accents

SRC = Path(__file__).resolve().parents[2] / "src" / "situate"
HOME = Path("words") / "stopwords.py"
# A literal naming this many words of one list is a stop-word list. The stop lists found before
# there was one home held 50 to 100 of them; the closed word classes of the question rules
# (auxiliaries, the words a subject never opens with: 22 each) stay under it.
LIST_WORDS = 30
# (file, the name a literal is assigned to): a literal that is not a stop-word list although it
# holds one's words, and why
NOT_STOP_LISTS: dict[tuple[Path, str], str] = {}
_WORD = re.compile(r"[^\W\d_]+")
_SPANISH_TOKENS = without_accents(SPANISH)


def _listed_words(node: ast.AST) -> list[str]:
    """The words a literal lists: a set, list or tuple of strings, or a string of words only
    (white space between them, no punctuation, as ``"the a an ...".split()`` writes a list)."""
    if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
        return [
            e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
        ]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        words = node.value.split()
        return words if all(_WORD.fullmatch(w) for w in words) else []
    return []


def second_lists(root: Path) -> list[str]:
    """Each literal in a ``.py`` file under ``root`` (but the home module) that lists
    :data:`LIST_WORDS` or more words of :data:`ENGLISH` or of :data:`SPANISH` (accents aside),
    as ``file:line: N English, M Spanish words``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        where = path.relative_to(root)
        if where == HOME:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        owner: dict[int, str] = {}  # id of a literal: the name it is assigned to
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                name = next((t.id for t in targets if isinstance(t, ast.Name)), "")
                for inner in ast.walk(node.value):
                    owner[id(inner)] = name
        for node in ast.walk(tree):
            words = {w.casefold() for w in _listed_words(node)}
            english, spanish = len(words & ENGLISH), len(without_accents(words) & _SPANISH_TOKENS)
            if max(english, spanish) < LIST_WORDS:
                continue
            if (where, owner.get(id(node), "")) in NOT_STOP_LISTS:
                continue
            found.append(f"{where}:{node.lineno}: {english} English, {spanish} Spanish words")
    return found


def test_no_module_keeps_a_stop_word_list_of_its_own():
    found = second_lists(SRC)
    assert found == [], (
        "a second stop-word list; import situate.words.stopwords (derive a part or a few more "
        "words from it, saying why):\n" + "\n".join(found)
    )


def test_the_scan_finds_a_list_written_as_words_or_as_a_set(tmp_path):
    (tmp_path / "words").mkdir()
    (tmp_path / "words" / "stopwords.py").write_text('ENGLISH = "the a an"')  # the home: skipped
    english = sorted(ENGLISH)[:LIST_WORDS]
    (tmp_path / "kept.py").write_text(
        f"STOP = frozenset({english!r})\n"  # a set of 30 English stop words
        f"SHORT = frozenset({english[: LIST_WORDS - 1]!r})\n"  # 29: a word class, not a list
        'DOC = "the a an, and of to in it is on as at by or for from with"\n'  # prose
    )
    spanish = " ".join(sorted(without_accents(SPANISH))[:LIST_WORDS])  # accent-free, as written
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "other.py").write_text(f'_ES = """\n    {spanish}\n"""\n')
    assert second_lists(tmp_path) == [
        f"kept.py:1: {LIST_WORDS} English, {len(set(english) & SPANISH)} Spanish words",
        f"sub/other.py:1: {len(set(spanish.split()) & ENGLISH)} English, {LIST_WORDS} Spanish words",
    ]


def test_the_lists_hold_the_function_words_of_their_language():
    assert {"the", "of", "which", "would", "their", "via"} <= ENGLISH
    assert {"el", "de", "que", "también", "después", "ustedes"} <= SPANISH
    assert not {"virus", "patients", "increased", "table"} & ENGLISH
    assert not {"virus", "pacientes", "tabla"} & SPANISH
    assert {"a", "no"} == ENGLISH & SPANISH  # the words both languages write alike
    assert all(w == w.casefold() and w.isalpha() for w in ENGLISH | SPANISH)


def test_without_accents_writes_the_words_as_accent_free_tokens():
    assert without_accents(["más", "También", "el"]) == {"mas", "tambien", "el"}
    assert "despues" in without_accents(SPANISH) and "después" not in without_accents(SPANISH)
