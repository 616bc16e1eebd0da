"""``question_generator=extractive``: a question by rule from a sentence of the passage, no model.

The honest offline baseline the model generators are compared with. Deterministic: the same
passage gives the same question on every machine, at no cost. Labelled as such
(``provenance.generator`` is ``extractive``).

The rule, for one request:

1. **Sentences.** The passage is split at ``.``, ``!`` or ``?`` followed by white space and a
   capital letter, digit or opening mark (a sentence never spans a blank line). A candidate
   starts with a capital letter or digit, ends with ``.``, ``!`` or ``?`` and has
   ``min_words`` to ``max_words`` words.
2. **The informative sentence.** Each candidate scores the sum, over its distinct content words
   (three letters or more, not a stop word of the language), of 1 / (occurrences of the word in
   the whole document): words rare in the document count most. Only candidates holding an
   answer phrase (step 3) qualify; the best score wins, the earlier sentence on a tie, and
   request ``index`` n takes the n-th best (so two questions of one passage differ).
3. **The answer phrase.** The sentence's first number phrase (a percentage, a year after a
   preposition, a count followed by a plural noun, another number but a bare year), else its
   name of the rarest (fewest occurrences in the document, the first on a tie): a run of
   capitalised words not opening the sentence, or a token mixing capitals and digits (``ACE2``,
   ``COVID-19``), never a piece of a hyphenated or slashed token (``PD-10``, ``LC/MS``). Asides
   are not searched: bracketed citations (``[12]``) and parentheses after
   a space (``(DPIs)``, ``(n = 40)``).
4. **The question: a short wh-question a person would type, not the sentence with a gap.** The
   sentence (asides and an opening connective left out) is cut into tokens; a number answer
   grows into its unit (``$5.2 billion``, ``12 percent``) and a year into its date
   (``December 31, 2021``), which sets its kind: ``money``, ``percent``, ``date``, ``count``
   (a number before a plural noun), ``duration`` (``5.2 days``: "How long"), ``number``,
   ``name`` or ``definition`` ("ACE2 is a membrane protein ..." -> "What is ACE2?"). Its question word follows the
   kind (``How much``, ``What percentage`` / ``By how much`` after a verb of change,
   ``When``, ``How many <noun>``, ``What``; ``Who`` for ``... et al.``; a name before a noun,
   ``the ACE2 receptor``, asks ``Which receptor``). Then the clause is turned around its first
   verb (found by its part-of-speech tag, :mod:`situate.questions.pos`: "separated" in "the
   proteins separated by SDS-PAGE were ..." is a participle, "were" the verb; a participle with
   an object is the verb: "The trial enrolled 120 patients"; a run-in heading, "Text: ...", and
   a clause before ", while" are left out): with the answer as the subject, the question word
   takes its place ("120 patients were enrolled ..." -> "How many patients were enrolled
   ...?"); with the answer after the verb,
   the subject (at most ``subject_words`` words: its head noun phrase, relative clauses and
   a fronted "In 2019," left out) is asked about with ``be`` inverted ("Total revenue was $5.2
   billion in 2021" -> "How much was total revenue in 2021?"), or with ``did`` / ``does`` and
   the verb's base form ("The trial enrolled 120 patients ..." -> "How many patients did the
   trial enroll ...?"); a preposition before the answer goes in front ("Through which
   receptor does the virus enter airway cells?"). Of the rest only a short qualifier stays:
   the words right after the answer up to a comma or a conjunction (at most
   ``qualifier_words``), else a date phrase ("at December 31, 2021"). A question copying
   more than ``max_copied`` consecutive words of the passage is shortened (qualifier first)
   or not written, and so is one that does not read as a person's (a subject opening a
   clause, punctuation inside, a bare number not asked as the complement of "be", after
   "which <noun>" or as a change; an abbreviation as the answer, "TB", "HCV ELISA"; an opening
   "By what" / "With what"; a name with a noun of its own phrase between it and the verb, "found
   an association with maternal DNA"; a counted noun or a "which <noun>" that the phrase goes
   on after, "6 times increased odds"; a question ending on "than"; a "which" before a word
   not tagged as a noun, "Since which similar ..."; a measurement's symbols, "± 0.13 ° C"):
   the next sentence is tried. With ``subjects`` (English), a sentence whose answer phrase is
   not worded, or that has none, is asked for its **subject** instead, as people ask for
   what does something ("What plays a fundamental role in the regulation?" of "Hepcidin plays
   a fundamental role in the regulation of Fe metabolism"; answer "Hepcidin"): the words before
   the clause's first verb, at most eight, all words, ending on a noun that names a thing (not
   "The results", "The majority", "These proteins", "Many ..."), and a predicate that holds a
   noun, no other clause's verb, no verb of the paper's layout or bench work ("are presented in
   Table 1", "were washed"), no active verb of reporting ("Brain MRI showed ...") and no "be" +
   a bare noun ("... is HIV infection"); worded with its whole qualifier, then its first
   prepositional phrase, then none, copying at most ``max_copied`` + 2 consecutive words
   (:func:`situate.questions.wording.subjects.subject_answer`). Spanish inverts the verb after
   the question word ("¿A los cuántos días caducan las
   claves?"). ``context_dependent`` names the document where the passage does not: "In
   <document title>, ...?" ("En ...,"), the title (the title rule of
   :mod:`situate.parsing.titles`, else the passage's section) being a name the passage
   itself does not contain (else no question). There is no ``paraphrase`` rule: such a
   request is answered with a failure, counted by the command.
5. **The passage wording** (``wording="passage"``, ``question_generator=extractive_passage``;
   the default ``sentence`` skips this step). A question worded from one sentence holds that
   sentence's words only; a person's question about the passage names what the passage is
   about, often with words of the sentences around the answer (on COVID-QA, 22% of the human
   questions' content words come from within 75 tokens of the answer but not its sentence,
   10% of the sentence rule's: ``benchmarks/question_wording.py``). So the question also names
   the **topic of the answer's neighbourhood** (:mod:`situate.questions.topics`): the name
   (capitalised words, ``ACE2``, ``HIV-1``) repeated most often, at least ``topic_count``
   times, within ``topic_window`` tokens either side of the answer's sentence (about what a
   chunk holding it holds), that the question and the answer do not hold, added at the end:
   "How long was the median incubation period for MERS-CoV?" ("¿... para Stripe?"). No name
   repeats there, or the question would then copy more than ``max_copied`` consecutive words:
   the question of step 4, unchanged. Answer and quote are step 4's.
6. **Vaguer wordings** (``variants`` > 1). A sentence is worded again, less specifically, as a
   person who does not know the passage's terms asks
   (:func:`situate.questions.wording.wh_questions.wh_questions`): without the qualifier, with the
   subject up to a preposition, with the subject's adjectives left out ("How long was the
   incubation period?" of "The median incubation period ... was 5.2 days"), and, with the
   passage wording, without the topic; at most ``variants`` wordings a sentence, each a whole
   question the rule's checks pass. Request ``index`` n takes the n-th of every worded
   sentence's first wording, then every one's second, and so on: with ``index`` 0 (a passage
   asked once) nothing changes, and only over-generation for a difficulty target reaches the
   vaguer ones, for the match to pick the hard questions a human sample has.

The answer is the answer phrase, the quote the sentence verbatim (found exactly in the
document). English and Spanish have their own stop words and question phrases; the language is
the request's, else the document's (:func:`situate.questions.prompts.document_language`, as the
record says): a passage in another language than its document's (a German reference in an
English paper) is not asked, nor a document in a language without templates.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from situate.datasets.generated import Provenance
from situate.errors import SituateError
from situate.progress import progress_bar
from situate.questions.base import GenerationRequest, Proposal
from situate.questions.pos import tagger
from situate.questions.prompts import document_language, language_scores
from situate.questions.topics import neighbourhood_topic
from situate.questions.wording.spans import Answer, widen
from situate.questions.wording.subjects import subject_answer
from situate.questions.wording.tokens import copied_run
from situate.questions.wording.wh_questions import wh_questions
from situate.words.stopwords import ENGLISH, SPANISH

NAME = "extractive"
STRATEGIES = ("factual", "context_dependent")
WORDINGS = ("sentence", "passage")

_STOP = {"en": ENGLISH, "es": SPANISH}  # what the rule counts as no content word
# how a question is opened, and how it names its document
_OPEN = {"en": "", "es": "¿"}
_IN_DOCUMENT = {"en": "In {title}, ", "es": "En {title}, "}
_FOR_TOPIC = {"en": " for {topic}", "es": " para {topic}"}  # the passage's topic, at the end
LANGUAGES = {"english": "en", "en": "en", "spanish": "es", "español": "es", "es": "es"}
_CODES = {"English": "en", "Spanish": "es"}  # the detected languages with templates

_SENTENCE = re.compile(r".+?(?:[.!?](?=\s+[\"'(\[¿¡]?[A-ZÁÉÍÓÚÑ0-9])|[.!?]?$)", re.S)
_WORD = re.compile(r"[^\W\d_]+", re.U)
# an aside: a bracketed citation ("[12]") or a parenthesis after a space ("(DPIs)", "(n = 40)")
_ASIDE = re.compile(r"\s*\[[^\]]*\]|\s+\([^()]*\)")
# a sentence's opening connective ("However, ..."), left out of the question
_CONNECTIVE = re.compile(
    r"(?:However|Therefore|Thus|Hence|Moreover|Furthermore|Nevertheless|Nonetheless|Indeed|"
    r"Finally|Additionally|In addition|In contrast|Overall|Sin embargo|Además|Por lo tanto|"
    r"Por tanto|Así|Finalmente|En cambio),\s+"
)
# a run-in heading before a colon ("Text: ...", "Amino-acid sequence similarity: The ..."),
# left out of the question: it is not the clause's subject
_LEAD_IN = re.compile(r"^\s*[A-Z][^.:;!?]{0,60}:\s+(?=[A-Z])")
_PERCENT = re.compile(r"\b\d+(?:[.,]\d+)?\s?(?:%|percent\b|per cent\b|por ciento\b)")
# a year after a preposition ("in 2018"); "the 2018 season" asks nothing by this rule
_YEAR = re.compile(r"\b(?:[Ii]n|[Ss]ince|by|[Ee]n|[Dd]esde) ((?:1[89]|20)\d\d)\b(?![.,]?\d)")
_COUNT = re.compile(r"\b\d[\d,]*(?=\s+[^\W\d_]{3,}s\b)")  # 120 (patients)
_NUMBER = re.compile(r"\b(?!(?:1[89]|20)\d\d\b)\d+(?:[.,]\d+)*\b")  # a bare year is no answer
_MIXED = re.compile(r"\b(?=[\w-]*\d)(?=[\w-]*[A-Z])[A-Za-z][\w-]*\w\b")  # ACE2, COVID-19, H3N2
_DATE = re.compile(
    r"\b(?:[Ii]n|[Oo]n|[Ss]ince|[Bb]y|[Aa]t|[Ee]n|[Dd]esde|[Dd]uring) ((?:January|February|March|"
    r"April|May|June|July|August|September|October|November|December)(?: \d{1,2},)? "
    r"(?:1[89]|20)\d\d)\b"
)
_MONTH_NAME = re.compile(
    r"(?:January|February|March|April|May|June|July|August|September|October|November|"
    r"December|Enero|Febrero|Marzo|Abril|Mayo|Junio|Julio|Agosto|Septiembre|Octubre|"
    r"Noviembre|Diciembre)$"
)
# "<Term> is a ...": a definition, asked as "What is <term>?" (the term: at most six words)
_DEFINITION = re.compile(
    r"\s*(?P<term>[A-Z][\w-]*(?:\s+[\w-]+){0,5}?)\s+(?P<verb>is|are)\s+"
    r"(?P<answer>(?:a|an|the)\s+[^.!?]+)"
)
_CAPITALISED = re.compile(r"\b[A-ZÁÉÍÓÚÑ][\wáéíóúñ-]+(?:\s+[A-ZÁÉÍÓÚÑ][\wáéíóúñ-]+)*")


@dataclass(frozen=True)
class _Sentence:
    start: int  # characters of the passage text
    end: int
    text: str


class ExtractiveGenerator:
    """Writes one question per request by the rule of this module (no model, no cost).

    Over 250 lines: its 15 settings each steer one step of ``_propose``, which reads them all;
    the wording rules themselves live in :mod:`situate.questions.wording`.

    Parameters
    ----------
    min_words, max_words : int
        Words a candidate sentence has, inclusive (shorter ones say too little, longer ones are
        lists and tables).
    subject_words, qualifier_words : int
        Most words of the subject asked about, and of the qualifier after the answer.
    max_copied : int
        Most consecutive words of the passage a question may copy.
    wording : str
        ``sentence`` (the question holds the words of its sentence only) or ``passage`` (step
        5: it also names the topic of the answer's neighbourhood).
    topic_window : int
        With ``passage``: whitespace tokens either side of the sentence searched for the topic.
    topic_count : int
        With ``passage``: the fewest times the topic occurs there.
    variants : int
        Most wordings of one sentence (step 6; 1: its first only).
    subjects : bool
        Also ask for a sentence's subject where its number or name is not worded (step 4,
        English).
    """

    name = NAME

    def __init__(
        self,
        min_words: int = 8,
        max_words: int = 45,
        subject_words: int = 5,
        qualifier_words: int = 4,
        max_copied: int = 5,
        wording: str = "sentence",
        topic_window: int = 75,
        topic_count: int = 2,
        variants: int = 1,
        subjects: bool = False,
    ) -> None:
        if not 1 <= min_words <= max_words:
            raise SituateError(
                f"question_generator: min_words={min_words}, max_words={max_words}: need "
                "1 <= min_words <= max_words"
            )
        for key, value in (
            ("subject_words", subject_words),
            ("qualifier_words", qualifier_words),
            ("max_copied", max_copied),
            ("topic_window", topic_window),
            ("topic_count", topic_count),
            ("variants", variants),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise SituateError(f"question_generator.{key}={value!r} must be an integer >= 1")
        self.min_words = min_words
        self.max_words = max_words
        self.subject_words = subject_words
        self.qualifier_words = qualifier_words
        if wording not in WORDINGS:
            raise SituateError(
                f"question_generator.wording={wording!r}: use one of {', '.join(WORDINGS)}"
            )
        self.max_copied = max_copied
        self.wording = wording
        self.topic_window = topic_window
        self.topic_count = topic_count
        self.variants = variants
        if not isinstance(subjects, bool):
            raise SituateError(f"question_generator.subjects={subjects!r} must be true or false")
        self.subjects = subjects

    def identity(self) -> dict:
        identity = {
            "generator": NAME,
            "rule": 4,  # 3: verbs by part-of-speech tags, no abbreviation answers; 4: "which"
            # asks for a noun (by its tag), no measurement symbols
            "tagger": tagger(),
            "min_words": self.min_words,
            "max_words": self.max_words,
            "subject_words": self.subject_words,
            "qualifier_words": self.qualifier_words,
            "max_copied": self.max_copied,
        }
        if self.wording == "passage":  # the sentence wording's identity is the earlier one
            identity.update(
                wording=self.wording, topic_window=self.topic_window, topic_count=self.topic_count
            )
        if self.variants > 1:  # one wording a sentence is the earlier identity
            identity["variants"] = self.variants
        if self.subjects:  # without, the earlier identity
            identity["subjects"] = 1  # the rule of subject answers (step 4)
        return identity

    def propose(self, requests: Sequence[GenerationRequest]) -> list[Proposal]:
        counts: dict[str, Counter] = {}  # document word counts, once per document
        languages: dict[str, str] = {}  # and its language
        out = []
        label = f"writing {len(requests):,} questions by the extractive rule"
        rate_key = "questions written by the extractive rule"
        with progress_bar(label, final_bar=False, rate_key=rate_key) as advance:
            advance(0, len(requests))
            for request in requests:
                doc = request.document
                if doc.doc_id not in counts:
                    counts[doc.doc_id] = Counter(w.casefold() for w in _WORD.findall(doc.text))
                    languages[doc.doc_id] = self._written(doc.text)
                out.append(self._propose(request, counts[doc.doc_id], languages[doc.doc_id]))
                advance(1)
        return out

    # -- the rule ---------------------------------------------------------------------------

    def _propose(
        self, request: GenerationRequest, counts: Counter, written: str | None
    ) -> Proposal:
        """The proposal for ``request``; ``counts`` are its document's word counts, ``written``
        its document's language (a name; None: too few function words to tell)."""
        rule = json.dumps([self.identity(), request.strategy, request.language, request.index])
        provenance = Provenance(NAME, prompt_sha256=hashlib.sha256(rule.encode()).hexdigest())

        def failure(why: str) -> Proposal:
            return Proposal(request, "", "", "", provenance, failure=f"extractive: {why}")

        if request.strategy not in STRATEGIES:
            return failure(
                f"no rule for strategy {request.strategy!r} (it writes {', '.join(STRATEGIES)})"
            )
        text = request.passage_text
        doc = request.document
        if request.language:
            language = self._language(request.language)
        elif written is None:  # too few function words to tell: the passage's stop words
            spanish = self._stop_words(text, "es") > self._stop_words(text, "en")
            language = "es" if spanish else "en"
        elif written not in _CODES:
            return failure(
                f"the document is in {written}: the rule words English and Spanish "
                "(question_generator=llm writes any language)"
            )
        elif (here := self._foreign(text, written)) is not None:
            return failure(f"the passage is in {here}, its document in {written}")
        else:
            language = _CODES[written]
        subjects = self.subjects and language == "en"
        scored = []
        for sentence in self._sentences(text):
            found = self._answer(sentence.text, counts, language)
            if found is not None or subjects:
                scored.append((-self._score(sentence.text, counts, language), sentence, found))
        scored.sort(key=lambda s: (s[0], s[1].start))
        worded = []  # (sentence, answer, its wordings) of the candidates a rule could word
        for _, sentence, found in scored:
            if self.variants == 1 and len(worded) > request.index:
                break
            blanked = _ASIDE.sub(lambda m: " " * len(m.group()), sentence.text)
            blanked = _CONNECTIVE.sub(lambda m: " " * len(m.group()), blanked, count=1)
            blanked = _LEAD_IN.sub(lambda m: " " * len(m.group()), blanked, count=1)
            answer = widen(blanked, *found) if found is not None else None
            wordings = self._worded(blanked, answer, doc.text, text, language) if answer else []
            if not wordings and subjects and (span := subject_answer(blanked)) is not None:
                answer = Answer(*span, "subject")  # the phrase is not worded: the subject
                wordings = self._worded(blanked, answer, doc.text, text, language)
            if not wordings or answer is None:
                continue
            answer_text = sentence.text[answer.start : answer.end]
            if self.wording == "passage":
                named = [
                    self._for_topic(w, answer_text, sentence, request, language)
                    for w in wordings[: self.variants]
                ]  # the first also unnamed, next: a vaguer question
                wordings = list(dict.fromkeys([named[0], wordings[0], *named[1:]]))
            worded.append((sentence, answer_text, wordings[: self.variants]))
        # every sentence's first wording, then every sentence's second, ...
        written = [
            (sentence, answer_text, wordings[k])
            for k in range(self.variants)
            for sentence, answer_text, wordings in worded
            if k < len(wordings)
        ]
        if len(written) <= request.index:
            return failure(
                f"no sentence of {self.min_words}-{self.max_words} words with a number or a name "
                f"{'(or a subject) ' if subjects else ''}that a rule words as a question "
                f"({len(scored)} candidates, {len(written)} "
                f"worded, for index {request.index})"
            )
        sentence, answer_text, question = written[request.index]
        if request.strategy == "context_dependent":
            title = request.document.title.strip() or request.passage.section.split(" > ")[0]
            if not title or title.casefold() in text.casefold():
                return failure("the passage names its document itself (no title elsewhere)")
            question = self._in_document(question, title, language)
        return Proposal(request, question, answer_text, sentence.text, provenance)

    def _worded(
        self, sentence: str, answer: Answer, document: str, passage: str, language: str
    ) -> list[str]:
        return wh_questions(
            sentence, answer, document, passage, language, subject_words=self.subject_words,
            qualifier_words=self.qualifier_words, max_copied=self.max_copied,
        )  # fmt: skip

    def _sentences(self, text: str) -> list[_Sentence]:
        out = []
        for block in re.finditer(
            r"[^\n]+(?:\n(?!\s*\n)[^\n]+)*", text
        ):  # never across a blank line
            for m in _SENTENCE.finditer(block.group()):
                raw = m.group()
                lead = len(raw) - len(raw.lstrip())
                body = raw.strip()
                words = len(body.split())
                if (
                    self.min_words <= words <= self.max_words
                    and (body[:1].isupper() or body[:1].isdigit())
                    and body[-1:] in ".!?"
                ):
                    start = block.start() + m.start() + lead
                    out.append(_Sentence(start, start + len(body), body))
        return out

    @staticmethod
    def _written(text: str) -> str | None:
        """The document's language (:func:`document_language`), None when fewer than five of
        its words are function words (a one-sentence document's "per" is not Italian)."""
        if max(language_scores(text[:20_000]).values()) < 5:
            return None
        return document_language(text)

    @staticmethod
    def _stop_words(text: str, language: str) -> int:
        return sum(w.casefold() in _STOP[language] for w in _WORD.findall(text))

    @staticmethod
    def _foreign(passage: str, written: str) -> str | None:
        """The language of ``passage`` where it is clearly not ``written`` (its document's): at
        least five of its words another language's function words, and over twice as many as
        ``written``'s; else None."""
        scores = language_scores(passage)
        best = max(scores, key=lambda lang: scores[lang])
        if best != written and scores[best] >= 5 and scores[best] > 2 * scores.get(written, 0):
            return best
        return None

    @staticmethod
    def _language(asked: str) -> str:
        code = LANGUAGES.get(asked.strip().casefold())
        if code is None:
            raise SituateError(
                f"question_generator=extractive: language {asked!r} has no templates; use "
                "English or Spanish (or the document's own language: '')"
            )
        return code

    @staticmethod
    def _content(text: str, language: str) -> set[str]:
        words = (w.casefold() for w in _WORD.findall(text))
        return {w for w in words if len(w) >= 3 and w not in _STOP[language]}

    def _score(self, sentence: str, counts: Counter, language: str) -> float:
        return sum(1 / max(counts[w], 1) for w in self._content(sentence, language))

    @staticmethod
    def _answer(sentence: str, counts: Counter, language: str) -> tuple[int, int, str] | None:
        """(start, end, kind) of the answer phrase in ``sentence``, or None (citations aside)."""
        sentence = _ASIDE.sub(lambda m: " " * len(m.group()), sentence)  # offsets kept
        if language == "en" and (d := _DEFINITION.match(sentence)) is not None:
            term = d.group("term")
            if not any(w.casefold() in _STOP["en"] for w in term.split()[1:]):
                return d.start("answer"), len(d.group(0).rstrip(" .!?")) + d.start(), "definition"
        numbers = [
            (*m.span(pattern.groups), kind)  # the year of "in 2018"; the whole match otherwise
            for kind, pattern in (
                ("date", _DATE),
                ("percent", _PERCENT),
                ("year", _YEAR),
                ("count", _COUNT),
                ("other", _NUMBER),
            )
            for m in pattern.finditer(sentence)
        ]
        numbers = [n for n in numbers if _whole_token(sentence, n[0], n[1])]
        if numbers:  # the first one; at one place, the most specific kind (listed first)
            return min(numbers, key=lambda n: (n[0], -n[1]))
        names = [(m.start(), m.end()) for m in _MIXED.finditer(sentence)]
        for m in _CAPITALISED.finditer(sentence):
            words = m.group().split()
            start = m.start()
            if start == 0:  # the sentence's first word is capitalised anyway
                if len(words) == 1:
                    continue
                start += len(words[0]) + 1
            if sentence[start : m.end()].casefold() not in _STOP[language] and not (
                _MONTH_NAME.match(sentence[start : m.end()])
            ):
                names.append((start, m.end()))
        names = [n for n in names if _whole_token(sentence, *n)]
        if not names:
            return None

        def rarity(span: tuple[int, int]) -> tuple[int, int]:
            words = [w.casefold() for w in _WORD.findall(sentence[span[0] : span[1]])]
            return (min((counts[w] for w in words), default=0), span[0])

        start, end = min(names, key=rarity)
        return start, end, "other"

    def _for_topic(
        self, question: str, answer: str, sentence: _Sentence, request: GenerationRequest,
        language: str,
    ) -> str:  # fmt: skip
        """``question`` naming the topic of the answer's neighbourhood (step 5), if it has one
        and the question then copies at most ``max_copied`` consecutive words of the passage."""
        start = request.passage.start + sentence.start
        topic = neighbourhood_topic(
            request.document.text, start, start + len(sentence.text),
            window=self.topic_window, taken=(question, answer), stop=_STOP[language],
            min_count=self.topic_count,
        )  # fmt: skip
        if topic is None:
            return question
        named = question[:-1] + _FOR_TOPIC[language].format(topic=topic.name) + question[-1]
        if copied_run(named, request.passage_text) > self.max_copied:
            return question
        return named

    @staticmethod
    def _in_document(question: str, title: str, language: str) -> str:
        opening = _OPEN[language]
        body = question[len(opening) :]
        if not _MIXED.match(body) and not re.match(r"[A-ZÁÉÍÓÚÑ]{2}", body):
            body = body[:1].lower() + body[1:]  # "The season ..." -> "In X, the season ..."
        return opening + _IN_DOCUMENT[language].format(title=title) + body


def _whole_token(sentence: str, start: int, end: int) -> bool:
    """Not a piece of a hyphenated or slashed token ("PD-10", "17-ODYA", "LC/MS")."""
    return (start == 0 or sentence[start - 1] not in "-/") and (
        end == len(sentence) or sentence[end] not in "-/"
    )
