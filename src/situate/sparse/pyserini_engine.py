"""``sparse: pyserini``: Lucene BM25 through Anserini, driven in-process with pyjnius.

The pyserini wheel is used only as the carrier of Anserini's fat jar (see :mod:`situate.sparse.jvm`);
its Python modules are never imported. Documents go from Python straight into a Lucene index with
an ``IndexWriter`` (no JSON collection files), analysed by Anserini's ``DefaultEnglishAnalyzer``
(English) or Lucene's analyzer for the language; queries are Anserini's bag of words (one SHOULD
``TermQuery`` per distinct analysed term, boosted by its count) scored by ``BM25Similarity(k1, b)``.

Importing this module neither imports pyjnius nor starts the JVM: that happens on the first
``build``, ``load`` or ``search``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import weakref
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from situate.errors import SituateError
from situate.rankings import Rankings, sort_desc
from situate.sparse import jvm
from situate.sparse.base import paired_contexts

CONTENTS, CONTEXT, ID = "contents", "context", "id"  # Anserini's field names (+ ours for context)
ENGLISH_STEMMERS = ("porter", "krovetz", "none")
# Lucene's analyzer per language (Anserini's AnalyzerMap); "en" is Anserini's DefaultEnglishAnalyzer.
LANGUAGES = {
    "ar": "org.apache.lucene.analysis.ar.ArabicAnalyzer",
    "bn": "org.apache.lucene.analysis.bn.BengaliAnalyzer",
    "da": "org.apache.lucene.analysis.da.DanishAnalyzer",
    "de": "org.apache.lucene.analysis.de.GermanAnalyzer",
    "en": "io.anserini.analysis.DefaultEnglishAnalyzer",
    "es": "org.apache.lucene.analysis.es.SpanishAnalyzer",
    "fa": "org.apache.lucene.analysis.fa.PersianAnalyzer",
    "fi": "org.apache.lucene.analysis.fi.FinnishAnalyzer",
    "fr": "org.apache.lucene.analysis.fr.FrenchAnalyzer",
    "hi": "org.apache.lucene.analysis.hi.HindiAnalyzer",
    "hu": "org.apache.lucene.analysis.hu.HungarianAnalyzer",
    "id": "org.apache.lucene.analysis.id.IndonesianAnalyzer",
    "it": "org.apache.lucene.analysis.it.ItalianAnalyzer",
    "ja": "org.apache.lucene.analysis.ja.JapaneseAnalyzer",
    "ko": "org.apache.lucene.analysis.cjk.CJKAnalyzer",
    "nl": "org.apache.lucene.analysis.nl.DutchAnalyzer",
    "no": "org.apache.lucene.analysis.no.NorwegianAnalyzer",
    "pt": "org.apache.lucene.analysis.pt.PortugueseAnalyzer",
    "ru": "org.apache.lucene.analysis.ru.RussianAnalyzer",
    "sv": "org.apache.lucene.analysis.sv.SwedishAnalyzer",
    "te": "org.apache.lucene.analysis.te.TeluguAnalyzer",
    "th": "org.apache.lucene.analysis.th.ThaiAnalyzer",
    "tr": "org.apache.lucene.analysis.tr.TurkishAnalyzer",
    "zh": "org.apache.lucene.analysis.cjk.CJKAnalyzer",
}
# What must match between the engine and an index it loads (queries are analysed like documents).
ANALYSIS_KEYS = ("engine", "language", "stemmer", "stopwords", "context_field")
USER_DATA_KEY = "situate.identity"  # the engine identity, kept in the Lucene commit's user data


def _j(name: str):
    return jvm.autoclass(name)


class PyseriniEngine:
    """BM25 with Lucene (Anserini 1.x, Lucene 9), in-process through pyjnius.

    Over 250 lines: the analyzer, the writer, the reader and the searcher are Java objects that
    share one JVM-side life (open, check, close) this class owns.

    Parameters
    ----------
    k1 : float
        Term-frequency saturation (Anserini's default 0.9).
    b : float
        Length normalisation, 0 = none, 1 = full (Anserini's default 0.4).
    language : str
        ``en`` for Anserini's English analyzer (StandardTokenizer, possessive filter, lowercase,
        stop words, stemmer); another ISO code (``es``, ``fr``, ``de``...) for Lucene's analyzer
        of that language.
    stemmer : str
        English: ``porter``, ``krovetz`` or ``none``. Other languages: ``default`` (the Lucene
        analyzer's own stemmer) or ``none`` (StandardTokenizer, lowercase and the language's stop
        words, no stemming). ``default`` in English means ``porter``.
    stopwords : bool
        Drop the language's stop words (Lucene's list; for English the classic 33 words).
    context_field : bool
        Index each chunk's context in a field of its own (``context``) rather than prepended to
        the chunk text (``contents``); queries search both fields.
    context_weight : float
        With ``context_field``, the boost of the context field's BM25 score (contents has 1).
    threads : int
        Python threads that send a batch of queries to Lucene (the JVM runs them in parallel;
        the pipeline's one-query-at-a-time searches use one).
    """

    name = "pyserini"

    def __init__(
        self,
        k1: float = 0.9,
        b: float = 0.4,
        language: str = "en",
        stemmer: str | None = "porter",
        stopwords: bool = True,
        context_field: bool = False,
        context_weight: float = 1.0,
        threads: int = 1,
    ):
        language = str(language).lower()
        if language not in LANGUAGES:
            raise SituateError(
                f"sparse.language={language!r} is not supported; valid: {', '.join(LANGUAGES)}"
            )
        stemmer = "none" if stemmer in (None, False) else str(stemmer).lower()
        if language == "en" and stemmer == "default":
            stemmer = "porter"
        valid = ENGLISH_STEMMERS if language == "en" else ("default", "none")
        if stemmer not in valid:
            raise SituateError(
                f"sparse.stemmer={stemmer!r} is not valid for language {language}; "
                f"valid: {', '.join(valid)}"
            )
        if not (k1 >= 0 and 0 <= b <= 1):
            raise SituateError(f"sparse: k1={k1} must be >= 0 and b={b} within [0, 1]")
        if context_weight < 0:
            raise SituateError(f"sparse.context_weight={context_weight} must be >= 0")
        self.k1, self.b = float(k1), float(b)
        self.language, self.stemmer, self.stopwords = language, stemmer, bool(stopwords)
        self.context_field, self.context_weight = bool(context_field), float(context_weight)
        self.separate_context = self.context_field
        self.threads = max(1, int(threads))
        self._open: _OpenIndex | None = None
        self._analyzer = None
        self._queries = None  # Anserini's BagOfWordsQueryGenerator
        self._fields = None  # java.util.Map field -> boost, with context_field

    # --- identity -------------------------------------------------------------------------------

    def identity(self) -> dict:
        return {
            "engine": "pyserini",
            "k1": self.k1,
            "b": self.b,
            "language": self.language,
            "stemmer": self.stemmer,
            "stopwords": self.stopwords,
            "context_field": self.context_field,
            "context_weight": self.context_weight,
            "anserini": jvm.anserini_jar().name,
        }

    # --- Java pieces ----------------------------------------------------------------------------

    def analyzer(self):
        """The Lucene ``Analyzer`` for documents and queries (starts the JVM)."""
        if self._analyzer is None:
            self._analyzer = self._make_analyzer()
        return self._analyzer

    def analyze(self, text: str) -> list[str]:
        """The terms Lucene indexes for ``text`` (for inspection and tests)."""
        terms = _j("io.anserini.analysis.AnalyzerUtils").analyze(self.analyzer(), text)
        return [str(t) for t in terms.toArray()]

    def _make_analyzer(self):
        char_array_set = _j("org.apache.lucene.analysis.CharArraySet")
        if self.language == "en":
            english = _j("io.anserini.analysis.DefaultEnglishAnalyzer")
            stop = (
                _j("org.apache.lucene.analysis.en.EnglishAnalyzer").ENGLISH_STOP_WORDS_SET
                if self.stopwords
                else char_array_set.EMPTY_SET
            )
            if self.stemmer == "none":
                return english.newNonStemmingInstance(stop)
            return english.newStemmingInstance(self.stemmer, stop)
        cls_name = LANGUAGES[self.language]
        try:
            cls = _j(cls_name)
            if self.stemmer == "none":
                # Anserini's English chain minus stemming, with this language's stop words; its
                # possessive filter only strips an English "'s".
                stop = cls.getDefaultStopSet() if self.stopwords else char_array_set.EMPTY_SET
                return _j("io.anserini.analysis.DefaultEnglishAnalyzer").newNonStemmingInstance(
                    stop
                )
            if self.stopwords:
                return cls()
            return cls(char_array_set.EMPTY_SET)
        except SituateError:
            raise
        except Exception as e:
            why = _first_line(e)
            if "constructor matching" in why:
                why = "it takes no stop-word set"
            raise SituateError(
                f"sparse: cannot build the Lucene analyzer {cls_name.rsplit('.', 1)[-1]} with "
                f"stemmer={self.stemmer}, stopwords={self.stopwords} ({why}); "
                "try stopwords: true and stemmer: default"
            ) from e

    def _similarity(self):
        return _j("org.apache.lucene.search.similarities.BM25Similarity")(self.k1, self.b)

    # --- build / save / load --------------------------------------------------------------------

    def build(self, texts: list[str], contexts: list[str] | None = None) -> None:
        """Index ``texts`` (and, with ``context_field``, ``contexts``) into a temporary folder."""
        contexts = paired_contexts("pyserini", texts, contexts, self.context_field)
        jvm.start_jvm()
        folder = Path(tempfile.mkdtemp(prefix="situate-lucene-"))
        try:
            self._write(folder, texts, contexts)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        self._attach(folder, owned=True)

    def _write(self, folder: Path, texts: list[str], contexts: list[str] | None) -> None:
        config = _j("org.apache.lucene.index.IndexWriterConfig")(self.analyzer())
        config.setOpenMode(_j("org.apache.lucene.index.IndexWriterConfig$OpenMode").CREATE)
        config.setSimilarity(self._similarity())
        # LogDocMergePolicy merges only adjacent segments and one thread adds the documents in
        # order, so after forceMerge(1) Lucene's doc id is the row number (ties break the same way).
        config.setMergePolicy(_j("org.apache.lucene.index.LogDocMergePolicy")())
        config.setRAMBufferSizeMB(256.0)
        document_cls = _j("org.apache.lucene.document.Document")
        string_field = _j("org.apache.lucene.document.StringField")
        text_field = _j("org.apache.lucene.document.TextField")
        binary_dv = _j("org.apache.lucene.document.BinaryDocValuesField")
        bytes_ref = _j("org.apache.lucene.util.BytesRef")
        store = _j("org.apache.lucene.document.Field$Store")
        writer = _j("org.apache.lucene.index.IndexWriter")(_directory(folder), config)
        try:
            for row, text in enumerate(texts):
                doc = document_cls()
                docid = str(row)
                # Anserini's id field: stored, and binary doc values that its searcher sorts ties by, so
                # the folder also opens with pyserini's LuceneSearcher.
                doc.add(string_field(ID, docid, store.YES))
                doc.add(binary_dv(ID, bytes_ref(docid.encode())))
                doc.add(text_field(CONTENTS, text or "", store.NO))
                if contexts is not None:
                    doc.add(text_field(CONTEXT, contexts[row] or "", store.NO))
                writer.addDocument(doc)
            writer.forceMerge(1)
            data = _j("java.util.HashMap")()
            data.put(USER_DATA_KEY, json.dumps({**self.identity(), "n_docs": len(texts)}))
            writer.setLiveCommitData(data.entrySet())
            writer.commit()
        finally:
            writer.close()

    def save(self, folder: Path) -> None:
        """Put the Lucene index files into ``folder`` (hard links where possible, else copies)."""
        if self._open is None:
            raise SituateError("sparse=pyserini: nothing to save; build or load an index first")
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        for src in sorted(self._open.folder.iterdir()):
            if src.name == "write.lock" or not src.is_file():
                continue
            dst = folder / src.name
            try:
                os.link(src, dst)  # Lucene never rewrites a file, so sharing the inode is safe
            except OSError:
                shutil.copy2(src, dst)

    def load(self, folder: Path) -> None:
        """Open a searcher on the Lucene index in ``folder``."""
        folder = Path(folder)
        if not folder.is_dir() or not any(folder.glob("segments_*")):
            raise SituateError(
                f"sparse=pyserini: no Lucene index in {folder}; delete the folder "
                "(or run `make clean-cache`) so it is built again"
            )
        jvm.start_jvm()
        self._attach(folder, owned=False)

    def _attach(self, folder: Path, owned: bool) -> None:
        try:
            reader = _j("org.apache.lucene.index.DirectoryReader").open(_directory(folder))
        except Exception as e:
            if owned:
                shutil.rmtree(folder, ignore_errors=True)
            raise SituateError(
                f"sparse=pyserini: cannot open the Lucene index in {folder} ({_first_line(e)}); "
                "delete the folder so it is built again"
            ) from e
        opened = _OpenIndex(folder, reader, owned)
        try:
            self._check(opened, reader)
        except BaseException:
            opened.close()
            raise
        searcher = _j("org.apache.lucene.search.IndexSearcher")(
            reader, signature="(Lorg/apache/lucene/index/IndexReader;)V"
        )
        searcher.setSimilarity(self._similarity())
        opened.searcher = searcher
        if self._open is not None:
            self._open.close()
        self._open = opened
        self.analyzer()  # made here, not by the first of several search threads
        self._queries = _j("io.anserini.search.query.BagOfWordsQueryGenerator")()
        if self.context_field:
            boost = _j("java.lang.Float")
            fields = _j("java.util.HashMap")()
            fields.put(CONTENTS, boost.valueOf("1.0"))
            fields.put(CONTEXT, boost.valueOf(repr(self.context_weight)))
            self._fields = fields

    def _check(self, opened: _OpenIndex, reader) -> None:
        """The index must have been analysed like this engine's queries; find its doc -> row map."""
        user_data = reader.getIndexCommit().getUserData()
        raw = user_data.get(USER_DATA_KEY) if user_data.containsKey(USER_DATA_KEY) else None
        if raw is not None:
            stored = json.loads(str(raw))
            mine = self.identity()
            differ = [k for k in ANALYSIS_KEYS if stored.get(k) != mine.get(k)]
            if differ:
                pairs = ", ".join(f"{k}={stored.get(k)!r} (engine: {mine[k]!r})" for k in differ)
                raise SituateError(
                    f"sparse=pyserini: the index in {opened.folder} was built with {pairs}; "
                    "load it with the same settings or build it again"
                )
        n = int(reader.maxDoc())
        opened.n_docs = n
        opened.rows = None  # identity: Lucene doc id == row number
        if n and not (
            reader.numDocs() == n
            and reader.leaves().size() == 1
            and _stored_id(reader, 0) == "0"
            and _stored_id(reader, n - 1) == str(n - 1)
        ):
            opened.rows = np.array(
                [int(_stored_id(reader, d)) for d in range(n)], dtype=np.int64
            )  # an index written by other code: map each doc id to its stored row number

    # --- search ---------------------------------------------------------------------------------

    def search(self, queries: list[str], depth: int) -> Rankings:
        """Top ``depth`` chunks per query; chunks that share no term with the query are left out."""
        if self._open is None:
            raise SituateError("sparse=pyserini: search before build or load; build an index first")
        k = max(0, min(int(depth), self._open.n_docs))
        if not queries:
            return Rankings.from_rows([], k)
        if k == 0:
            return Rankings.from_rows([_empty() for _ in queries], k)
        n_threads = min(self.threads, len(queries))
        if n_threads <= 1:
            return Rankings.from_rows([self._search_one(q, k) for q in queries], k)
        parts = np.array_split(np.arange(len(queries)), n_threads)
        with ThreadPoolExecutor(n_threads, thread_name_prefix="situate-lucene") as pool:
            done = pool.map(lambda idx: self._search_part([queries[i] for i in idx], k), parts)
            rows = [row for part in done for row in part]
        return Rankings.from_rows(rows, k)

    def _search_part(self, queries: list[str], k: int) -> list[tuple[np.ndarray, np.ndarray]]:
        try:
            return [self._search_one(q, k) for q in queries]
        finally:
            jvm.detach()  # a Python thread attached to the JVM must detach before it ends

    def _search_one(self, text: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        analyzer = self.analyzer()
        if self._fields is not None:
            query = self._queries.buildQuery(self._fields, analyzer, text)
        else:
            query = self._queries.buildQuery(CONTENTS, analyzer, text)
        hits = self._open.searcher.search(query, k).scoreDocs
        if not hits:
            return _empty()
        ids = np.fromiter((h.doc for h in hits), dtype=np.int64, count=len(hits))
        scores = np.fromiter((h.score for h in hits), dtype=np.float64, count=len(hits))
        if self._open.rows is not None:
            ids = self._open.rows[ids]
        return sort_desc(ids, scores)

    def close(self) -> None:
        """Close the Lucene reader now (and delete the temporary index of ``build``)."""
        if self._open is not None:
            self._open.close()
            self._open = None


class _OpenIndex:
    """A Lucene folder with its reader and searcher. Closing (explicitly, when garbage collected,
    or at exit) closes the reader and deletes the folder if ``build`` made it."""

    def __init__(self, folder: Path, reader, owned: bool):
        self.folder, self.reader, self.searcher = folder, reader, None
        self.n_docs, self.rows = 0, None
        self._finalizer = weakref.finalize(self, _release, reader, folder if owned else None)

    def close(self) -> None:
        self.reader = self.searcher = None
        self._finalizer()


def _release(reader, folder: Path | None) -> None:
    with contextlib.suppress(Exception):  # the JVM may be going away at exit
        reader.close()
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def _directory(folder: Path):
    # NIOFSDirectory, not FSDirectory.open's MMapDirectory: Lucene 9.9 does not know Java 22+
    # and falls back to sun.misc.Unsafe, which newer JVMs warn about on stderr.
    path = _j("java.nio.file.Paths").get(str(folder))
    return _j("org.apache.lucene.store.NIOFSDirectory")(path)


def _stored_id(reader, doc: int) -> str:
    return str(reader.storedFields().document(doc).get(ID))


def _empty() -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(0, np.int64), np.zeros(0)


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0]
