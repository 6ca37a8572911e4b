"""A generated English-like corpus from a small grammar (no bundled or copyrighted text).

Sentences have agreement a character model can learn a piece at a time: "a" vs "an",
singular vs plural verbs ("the fox sees", "the foxes see"), questions with "does"/"do"
and the bare verb, capitals, commas and full stops. Deterministic in the seed.
"""

from __future__ import annotations

import functools
import random

# (singular, plural)
NOUNS = [
    ("fox", "foxes"), ("dog", "dogs"), ("owl", "owls"), ("cat", "cats"), ("child", "children"),
    ("mouse", "mice"), ("farmer", "farmers"), ("eagle", "eagles"), ("horse", "horses"), ("sailor", "sailors"),
    ("baker", "bakers"), ("otter", "otters"), ("wolf", "wolves"), ("goose", "geese"), ("robot", "robots"),
]
PLACES = ["river", "old bridge", "hill", "barn", "forest", "market", "harbour", "garden", "tower", "lake"]
ADJECTIVES = ["red", "small", "old", "quiet", "quick", "brave", "sleepy", "grey", "young", "clever", "angry", "happy"]
# (third person singular, base)
TRANSITIVE = [
    ("sees", "see"), ("chases", "chase"), ("finds", "find"), ("watches", "watch"), ("follows", "follow"),
    ("likes", "like"), ("feeds", "feed"), ("helps", "help"), ("carries", "carry"), ("fears", "fear"),
]
INTRANSITIVE = [("sleeps", "sleep"), ("runs", "run"), ("sings", "sing"), ("waits", "wait"), ("hides", "hide")]
PREPOSITIONS = ["near", "under", "behind", "beside", "across", "inside"]
TIMES = ["at dawn", "every morning", "at night", "in winter", "after the rain", "before noon"]


def generate_corpus(n_chars: int, seed: int) -> str:
    """`n_chars` characters of paragraphs of generated sentences (the last one cut short)."""
    rng = random.Random(seed)
    parts: list[str] = []
    length = 0
    while length < n_chars:
        paragraph = " ".join(_sentence(rng) for _ in range(rng.randint(3, 7))) + "\n"
        parts.append(paragraph)
        length += len(paragraph)
    return "".join(parts)[:n_chars]


def _article(word: str, rng: random.Random) -> str:
    if rng.random() < 0.5:
        return "the"
    return "an" if word[0] in "aeiou" else "a"


def _noun_phrase(rng: random.Random, plural: bool) -> str:
    noun = rng.choice(NOUNS)[plural]
    words = [rng.choice(ADJECTIVES)] if rng.random() < 0.5 else []
    words.append(noun)
    det = rng.choice(["the", "some", "two", "three", "many"]) if plural else _article(words[0], rng)
    return " ".join([det, *words])


def _place(rng: random.Random) -> str:
    return f"{rng.choice(PREPOSITIONS)} the {rng.choice(PLACES)}"


def _clause(rng: random.Random) -> str:
    plural = rng.random() < 0.4
    subject = _noun_phrase(rng, plural)
    if rng.random() < 0.7:
        verb = rng.choice(TRANSITIVE)[plural]
        predicate = f"{verb} {_noun_phrase(rng, rng.random() < 0.4)}"
    else:
        predicate = rng.choice(INTRANSITIVE)[plural]
    if rng.random() < 0.4:
        predicate += " " + _place(rng)
    if rng.random() < 0.2:
        predicate += " " + rng.choice(TIMES)
    return f"{subject} {predicate}"


def _sentence(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.15:  # question: do/does + subject + bare verb
        plural = rng.random() < 0.4
        verb = rng.choice(TRANSITIVE)[1]
        text = f"{'do' if plural else 'does'} {_noun_phrase(rng, plural)} {verb} {_noun_phrase(rng, rng.random() < 0.4)}?"
    elif kind < 0.35:
        text = f"{_clause(rng)}, and {_clause(rng)}."
    elif kind < 0.45:
        text = f"when {_clause(rng)}, {_clause(rng)}."
    else:
        text = f"{_clause(rng)}."
    return text[0].upper() + text[1:]


VOCAB_PREFIX = 2**18
"""Characters of a corpus's head that vocab_size reads first: every corpus of the default size
holds the whole ALPHABET in far fewer."""
ALPHABET = frozenset("".join(w for pairs in (NOUNS, TRANSITIVE, INTRANSITIVE) for pair in pairs for w in pair)
                     + "".join(PLACES + ADJECTIVES + PREPOSITIONS + TIMES)
                     + "the some two three many a an do does when and" + " ,.?\n" + "DTSMAW")
"""Every character the grammar writes: its words, the punctuation, and the capitals a sentence
opens with (Do/Does, The/Some/Two/Three/Many/A/An, When)."""


@functools.lru_cache(maxsize=8)  # a sweep plans a bench per cell
def vocab_size(n_chars: int, seed: int) -> int:
    """Distinct characters of generate_corpus(n_chars, seed), without generating all of it where its
    head holds the whole ALPHABET already (a corpus of fewer characters is a head of one of more:
    the same draws, cut shorter)."""
    head = set(generate_corpus(min(n_chars, VOCAB_PREFIX), seed))
    if n_chars <= VOCAB_PREFIX or head == ALPHABET:
        return len(head)
    return len(set(generate_corpus(n_chars, seed)))
