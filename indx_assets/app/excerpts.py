"""What a search hit shows of its chunk: the sentences that match the query best, and where the
query's terms stand in them.

A chunk holds up to ~250 tokens; the answer to a question may sit anywhere in it. A hit's
excerpt is its best-matching sentences (cut by the project's one sentence rule,
`pipeline.chunking.sentences`): the sentence holding most of the query's terms, then, if the
query has terms that sentence lacks, the sentence holding most of those (at most
`MAX_SENTENCES`), shown in reading order. A sentence the search itself matched (a `sentence`
piece) comes first. A term is a word of the query that is not a stop word; it matches a word
of the text with the same stem (`stem`: case and a plural or verb ending aside). When no
sentence holds a term (a match by meaning alone), the excerpt is the chunk's first sentence.
"""

import re
from collections.abc import Sequence

from indx_assets.pipeline.chunking.sentences import Span, sentence_spans

#: How many sentences an excerpt shows at most.
MAX_SENTENCES = 2
#: The longest part of one sentence an excerpt shows (a table's rows can make one long "sentence").
MAX_SENTENCE_CHARS = 300
#: Shown between sentences that are not next to each other, and where a sentence is cut short.
GAP = " … "

_WORD = re.compile(r"\w+")
#: Words too common to say what a query is about.
STOP_WORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below between both
but by can could did do does doing down during each few for from further had has have having he her here hers
him his how i if in into is it its itself just may me might more most must my no nor not of off on once only or
other our ours out over own same shall she should so some such than that the their theirs them then there these
they this those through to too under until up very was we were what when where which while who whom why will with
would you your yours
""".split())
_ENDINGS = ("ing", "ed", "es", "s")


def stem(word: str) -> str:
    """`word` in lower case without one plural or verb ending ("ships" and "ship", "crosses" and
    "cross", "moored" and "moor" are one stem; "cross" keeps its "ss")."""
    word = word.lower()
    if word.endswith("ss"):
        return word
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


def query_terms(query: str) -> frozenset[str]:
    """The stems of the query's words, stop words left out (all of them when every word is one)."""
    words = [w.lower() for w in _WORD.findall(query)]
    kept = [w for w in words if w not in STOP_WORDS] or words
    return frozenset(map(stem, kept))


def term_spans(text: str, terms: frozenset[str]) -> list[Span]:
    """Where words of `text` whose stem is one of `terms` stand, in order."""
    return [m.span() for m in _WORD.finditer(text) if stem(m.group()) in terms]


def _terms_in(text: str, span: Span, terms: frozenset[str]) -> frozenset[str]:
    return frozenset(stem(m.group()) for m in _WORD.finditer(text, *span)) & terms


def best_sentences(content: str, query: str, matched: str | None = None) -> list[Span]:
    """The spans of `content` an excerpt shows, in reading order (see the module docstring);
    `matched` is the text of a sentence piece the search matched, if any."""
    spans = sentence_spans(content)
    if not spans:
        return []
    terms = query_terms(query)
    found = {span: _terms_in(content, span, terms) for span in spans}
    chosen: list[Span] = []
    if matched:
        at = content.find(matched.strip())
        if at >= 0:
            chosen.append((at, at + len(matched.strip())))
    covered = frozenset().union(*(_terms_in(content, s, terms) for s in chosen))
    while len(chosen) < MAX_SENTENCES:
        # the sentence adding most terms not yet shown; the first of equals
        best = max(spans, key=lambda s: len(found[s] - covered))
        if not found[best] - covered:
            break
        chosen.append(best)
        covered |= found[best]
    return sorted(chosen or spans[:1])


def _clip(content: str, span: Span, terms: frozenset[str]) -> tuple[str, str, str]:
    """The part of one sentence an excerpt shows: all of it, or `MAX_SENTENCE_CHARS` around its
    first term; with the marks of what was cut at either end."""
    start, end = span
    if end - start <= MAX_SENTENCE_CHARS:
        return "", content[start:end], ""
    hits = term_spans(content[start:end], terms)
    first = start + hits[0][0] if hits else start
    s = max(start, min(first - MAX_SENTENCE_CHARS // 3, end - MAX_SENTENCE_CHARS))
    e = min(end, s + MAX_SENTENCE_CHARS)
    return ("…" if s > start else ""), content[s:e], ("…" if e < end else "")


def excerpt(content: str, query: str, matched: str | None = None) -> str:
    """The hit's best-matching sentences as one line (whitespace collapsed): `…` where the chunk
    goes on before or after them, `GAP` between sentences that are not next to each other."""
    terms = query_terms(query)
    parts: list[str] = []
    previous_end = 0
    for span in best_sentences(content, query, matched):
        before, text, after = _clip(content, span, terms)
        skipped = bool(content[previous_end:span[0]].strip()) or bool(before)
        parts.append((GAP if parts else "… ") if skipped else " ")
        parts.append(text + after)
        previous_end = span[1]
    if content[previous_end:].strip() and not parts[-1].endswith("…"):
        parts.append(" …")
    return " ".join("".join(parts).split())


def highlight(text: str, query: str, mark: Sequence[str]) -> str:
    """`text` with each of the query's terms wrapped in `mark` (an opening and a closing string)."""
    opening, closing = mark
    out, pos = [], 0
    for s, e in term_spans(text, query_terms(query)):
        out += [text[pos:s], opening, text[s:e], closing]
        pos = e
    return "".join(out) + text[pos:]
