"""A sentence and its answer phrase turned into a short wh-question, by rule (no model).

What :mod:`situate.questions.extractive` step 4 describes: the answer's kind sets the question
word, the clause is turned around its first verb, the subject is cut to its head noun phrase,
the rest to a short qualifier, and no run of more than ``max_copied`` words of the passage is
copied; a subject answer (:func:`~situate.questions.wording.subjects.subject_answer`) is asked
"What <predicate>?". :func:`~situate.questions.wording.wh_questions.wh_questions` returns no
wording where no rule applies (the generator then tries its next sentence): a question it cannot
word is better not written than written as a cloze; where one applies, the vaguer wordings of
step 6 follow the first. The modules, from the bottom up: ``tokens`` (word tokens, joining,
copied runs), ``words`` (closed word classes), ``verbs``, ``spans`` (the answer phrase and its
kind), ``clauses`` (subject, verb, qualifier), ``shape`` (a question as parts, whether it reads
as a person's, its shortened wordings), ``subjects`` (a clause's subject as the answer),
``english`` and ``spanish`` (each language's rule), ``wh_questions`` (the entry point).
"""
