"""Irregular word forms, so that a query's word also matches its forms the stemmer cannot
join: "When did she go to the support group?" finds "I went to a support group". The full-text
index stems with Porter's algorithm, which joins "paints", "painted" and "painting" but leaves
"go" and "went", "buy" and "bought", "child" and "children" apart. Questions ask in the base
form ("did she go", "did he buy") about memories told in the past tense, so recall ranked the
very entry the question was about below others that merely shared its nouns.

`alternatives(word)` gives a base form's irregular forms (none for most words), which the
full-text match adds to the word. Left out on purpose: families whose forms are also
common words of another meaning (rise/rose, wind/wound, lie/lay, light/lit, bite/bit,
tear/tore, bear/bore, spring/sprang, leaf/leaves, life/lives), where the extra matches would
bring noise rather than the entry asked about; and be, have and do, whose forms are stop words.
"""

from __future__ import annotations

from functools import lru_cache

# one family a line: the base form first, then its irregular forms
_VERBS = """
arise arose arisen
awake awoke awoken
beat beaten
become became
begin began begun
bend bent
bleed bled
blow blew blown
break broke broken
breed bred
bring brought
build built
burn burnt
buy bought
catch caught
choose chose chosen
cling clung
come came
creep crept
deal dealt
dig dug
draw drew drawn
dream dreamt
drink drank drunk
drive drove driven
eat ate eaten
fall fell fallen
feed fed
feel felt
fight fought
find found
flee fled
fly flew flown
forbid forbade forbidden
forget forgot forgotten
forgive forgave forgiven
freeze froze frozen
get got gotten
give gave given
go went gone
grow grew grown
hang hung
hear heard
hide hid hidden
hold held
keep kept
kneel knelt
know knew known
lead led
lean leant
leap leapt
learn learnt
leave left
lend lent
lose lost
make made
mean meant
meet met
overcome overcame
pay paid
prove proven
ride rode ridden
ring rang rung
run ran
say said
see saw seen
seek sought
sell sold
send sent
shake shook shaken
shine shone
shoot shot
show shown
shrink shrank shrunk
sing sang sung
sink sank sunk
sit sat
sleep slept
slide slid
speak spoke spoken
spend spent
spin spun
stand stood
steal stole stolen
stick stuck
sting stung
strike struck
sweep swept
swim swam swum
swing swung
take took taken
teach taught
tell told
think thought
throw threw thrown
undergo underwent undergone
understand understood
wake woke woken
wear wore worn
weep wept
win won
withdraw withdrew withdrawn
write wrote written
"""

# one family a line: the singular, then its irregular plural
_NOUNS = """
child children
person people
man men
woman women
foot feet
tooth teeth
mouse mice
goose geese
wife wives
knife knives
shelf shelves
wolf wolves
half halves
thief thieves
"""

_VOWELS = frozenset("aeiou")


def _regular(base: str) -> list[str]:
    """The base's regular -s and -ing forms: only keys to find its family by, never matched
    (the stemmer joins them to the base already)."""
    if base.endswith(("s", "sh", "ch", "x", "z", "o")):
        third = base + "es"
    elif base.endswith("y") and base[-2:-1] not in _VOWELS:
        third = base[:-1] + "ies"
    else:
        third = base + "s"
    if base.endswith("e") and not base.endswith(("ee", "ye", "oe")):
        ing = base[:-1] + "ing"
    elif (len(base) >= 3 and base[-1] not in _VOWELS and base[-1] not in "wxy"
          and base[-2] in _VOWELS and base[-3] not in _VOWELS):
        ing = base + base[-1] + "ing"
    else:
        ing = base + "ing"
    return [third, ing]


def _parsed(table: str) -> list[tuple[str, ...]]:
    return [tuple(line.split()) for line in table.split("\n") if line.strip()]


def families() -> list[tuple[str, ...]]:
    """Every family, verbs then nouns: (base, irregular forms...)."""
    return _parsed(_VERBS) + _parsed(_NOUNS)


@lru_cache(maxsize=1)
def _lookup() -> dict[str, tuple[str, ...]]:
    """Each form of each family, and each verb's regular -s and -ing forms (a noun's are not
    words: "manning" is a name), to its family."""
    found: dict[str, tuple[str, ...]] = {}
    for table, regular in ((_VERBS, True), (_NOUNS, False)):
        for forms in _parsed(table):
            for key in (*forms, *(_regular(forms[0]) if regular else ())):
                found.setdefault(key, forms)
    return found


def alternatives(word: str) -> tuple[str, ...]:
    """The irregular forms of `word` when it is a base form ("go", "goes" or "going" ->
    "went", "gone"), else (). A word already in an irregular form ("went", "won", "children")
    is matched as written: its base brings every other sense and use of a common verb ("won"
    would find each "win-win"), and on LoCoMo's questions joining that way lost more
    evidence than it found."""
    forms = _lookup().get(word, ())
    return () if word in forms[1:] else forms[1:]
