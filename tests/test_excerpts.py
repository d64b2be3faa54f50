"""What a search hit shows of its chunk (`app.excerpts`): the sentences that match the query,
cut where the project's sentence rule cuts, with the query's terms marked."""

from indx_assets.app.excerpts import MAX_SENTENCE_CHARS, excerpt, highlight, query_terms

CHUNK = ("Harbour pilotage is compulsory for vessels over 80 m. Pilots board at the fairway buoy. "
         "The channel is dredged to 9.5 m. Deep-draught ships cross the bar only within two hours of high water. "
         "Tugs are stationed at the east pier.")


def test_the_sentence_holding_the_querys_words_is_shown_wherever_it_stands() -> None:
    shown = excerpt(CHUNK, "when may deep-draught ships cross the bar")
    assert shown == "… Deep-draught ships cross the bar only within two hours of high water. …"
    assert excerpt(CHUNK * 2, "deep-draught ships cross the bar").startswith("… Deep-draught")  # the first of equals


def test_a_second_sentence_is_shown_for_the_words_the_first_lacks() -> None:
    shown = excerpt(CHUNK, "pilots board; tugs stationed")
    assert shown == "… Pilots board at the fairway buoy. … Tugs are stationed at the east pier."
    # next to each other, two sentences read as one passage
    assert excerpt(CHUNK, "dredged channel, deep-draught bar") == (
        "… The channel is dredged to 9.5 m. Deep-draught ships cross the bar only within two hours of high water. …")


def test_a_match_by_meaning_alone_shows_the_first_sentence_and_a_matched_sentence_comes_first() -> None:
    assert excerpt(CHUNK, "nautical regulations") == "Harbour pilotage is compulsory for vessels over 80 m. …"
    matched = "Tugs are stationed at the east pier."
    assert excerpt(CHUNK, "ships cross", matched=matched).endswith(matched)


def test_a_long_sentence_is_cut_around_its_first_term() -> None:
    row = " | ".join(f"cell {n}" for n in range(200)) + " | bollard pull 60 t | " + " | ".join(["x"] * 100)
    shown = excerpt(row, "bollard pull")
    assert "bollard pull 60 t" in shown and len(shown) <= MAX_SENTENCE_CHARS + 6 and shown.startswith("…")


def test_terms_match_by_stem_and_are_marked() -> None:
    assert query_terms("When may the ships cross?") == {"ship", "cross"}
    assert highlight("A ship crosses; crossing ships, crossbars.", "ships cross", ("**", "**")) == (
        "A **ship** **crosses**; **crossing** **ships**, crossbars.")
