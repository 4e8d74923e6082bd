"""Files rewritten through ruamel (agent sidecars, .meta.yml, manifests, edited entries) are read
back by YAML 1.1 readers: a string loa-mem writes reads back as that string, and a value a
person wrote plain keeps the type it had for those readers."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from loa_mem.core import yamledit, yamlio

# plain words and forms that YAML 1.1 reads as booleans, numbers or null, and YAML 1.2 does not
AMBIGUOUS = ["no", "No", "NO", "yes", "Yes", "on", "Off", "y", "n", "12:30", "1:20:03",
             "0b101", "010", "1_000", "+.inf", ".NaN", "~", "Null"]
names = st.one_of(st.sampled_from(AMBIGUOUS), st.text(
    st.characters(min_codepoint=32, max_codepoint=126), min_size=1, max_size=10))


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(names, names, min_size=1, max_size=6))
def test_strings_written_read_back_as_the_same_strings(values: dict[str, str]) -> None:
    document = yamledit.round_trip_load("agent: a\n", "x.yaml")
    document["counts"] = dict(values)
    document["list"] = list(values.values())
    back = yamlio.load(yamledit.round_trip_dump(document), "x.yaml")
    assert back["counts"] == values
    assert back["list"] == list(values.values())


def test_a_value_written_plain_by_hand_keeps_its_type_for_the_readers() -> None:
    text = "flag: no  # by hand\nat: 12:30\nname: plain\n"
    document = yamledit.round_trip_load(text, "x.yaml")
    document["added"] = "no"
    dumped = yamledit.round_trip_dump(document)
    assert dumped == text + "added: 'no'\n"
    assert yamlio.load(dumped, "x.yaml") == {"flag": False, "at": 750, "name": "plain",
                                             "added": "no"}


def test_an_edited_entry_keeps_hand_written_values_and_quotes_new_ones() -> None:
    item = "- id: MEM-20260101-001\n  content: Ok.\n  extra: {a: 1}\n  switch: off\n"

    def change(entry: object) -> None:
        assert isinstance(entry, dict)
        entry["superseded_by"] = "yes"
    edited = yamledit.edit_item(item, 0, change)
    data = yamlio.load(edited, "x.yaml")[0]
    assert data["switch"] is False and data["superseded_by"] == "yes"
    assert "  switch: off\n" in edited
