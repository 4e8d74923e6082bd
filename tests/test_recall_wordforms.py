"""Irregular word forms in lexical recall: a question in the base form ("when did we buy")
finds the memory told in the past tense ("we bought") first; a word already in an irregular
form is matched as written; the families left out on purpose stay apart."""

from __future__ import annotations

from typing import Any

import pytest

from loa_mem.memory import wordforms
from loa_mem.memory.scoring import match_expression
from loa_mem.memory.stopwords import STOP_WORDS
from tests import support
from tests.conftest import Cli


def ids(cli: Cli, *args: str, **kwargs: Any) -> list[str]:
    return [r["id"] for r in cli.ok("recall", *args, "--json", **kwargs).json()["results"]]


def test_a_question_in_the_base_form_finds_the_past_tense_first(cli: Cli) -> None:
    bought = support.remember(cli, "We bought a new espresso machine for the office kitchen.")
    other = support.remember(cli, "The espresso machine is cleaned on Fridays.")

    # without the forms, "buy" matched nothing and the shorter entry won on "espresso machine"
    assert ids(cli, "when did we buy the espresso machine") == [bought, other]
    assert ids(cli, "buying")[:1] == [bought]


def test_a_word_in_an_irregular_form_is_matched_as_written(cli: Cli) -> None:
    went = support.remember(cli, "Maria went to the Lisbon conference in May.")
    support.remember(cli, "Maria will go to the Berlin conference in June.")

    # "went" does not bring every "go": the base's other uses would crowd the match out
    assert ids(cli, "went") == [went]


def test_a_singular_finds_its_irregular_plural(cli: Cli) -> None:
    children = support.remember(cli, "The children get visitor badges at the front desk.")
    people = support.remember(cli, "People from finance review refunds above 500 euros.")

    assert ids(cli, "child") == [children]
    assert ids(cli, "which person") == [people]


def test_a_word_without_irregular_forms_matches_as_before(cli: Cli) -> None:
    painted = support.remember(cli, "Melanie painted a lake sunrise last year.")
    support.remember(cli, "Melanie went camping in the mountains.")

    assert ids(cli, "paint") == [painted]  # the stemmer joins regular forms already


def test_ambiguous_families_are_left_apart(cli: Cli) -> None:
    verb = support.remember(cli, "Caroline rose early for the hike.")
    flower = support.remember(cli, "A rose garden grows behind the office.")

    assert sorted(ids(cli, "rose")) == sorted([verb, flower])
    assert ids(cli, "rise") == []  # "rise" is not joined to "rose": the flower would come too
    assert wordforms.alternatives("rose") == ()


@pytest.mark.parametrize("word, expected", [
    ("go", {"went", "gone"}), ("going", {"went", "gone"}), ("goes", {"went", "gone"}),
    ("running", {"ran"}), ("makes", {"made"}), ("child", {"children"}),
    ("went", set()), ("children", set()), ("left", set()), ("paint", set()), ("", set()),
    ("manning", set()), ("footing", set()),  # a noun has no -ing form to be found by
])
def test_alternatives(word: str, expected: set[str]) -> None:
    assert set(wordforms.alternatives(word)) == expected


def test_the_match_adds_each_words_forms_once() -> None:
    assert match_expression("When did Caroline go, and go home?") == (
        '"caroline"* OR "go"* OR "home"* OR "went" OR "gone"')
    assert match_expression("the") == '"the"*'  # only stop words: kept, as before


def test_each_base_brings_its_own_forms_and_no_other() -> None:
    families = wordforms.families()
    forms = [form for family in families for form in family]
    assert len(forms) == len(set(forms)), "a form in two families would join unrelated words"
    for base, *irregular in families:
        assert not {base, *irregular} & STOP_WORDS  # a stop word never reaches the lookup
        assert wordforms.alternatives(base) == tuple(irregular)
        for form in irregular:
            assert wordforms.alternatives(form) == ()
