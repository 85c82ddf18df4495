"""The blind review's parser is fail-closed: a review inside prose or a fenced block is read, the
seed's nested overall.files is normalized losslessly, anything else is rejected naming what is wrong."""

from __future__ import annotations

import json

import pytest

from metrics.review import DIMENSIONS, REVIEW_METRICS, ReviewParseError, parse_review

REVIEW = {**{d: 7 for d in DIMENSIONS}, "overall": 71, "can_proceed": True}


def test_a_bare_object_is_a_review():
    review = parse_review(json.dumps(REVIEW))
    assert review.overall == 71 and review.can_proceed is True and set(review.dimensions) == set(DIMENSIONS)
    assert review.scores()["completeness"] == 7 and review.scores()["review_rejected"] == 0
    assert set(review.scores()) == set(REVIEW_METRICS)  # every metric the registry defines, no other


@pytest.mark.parametrize("wrap", ["Here is my review:\n{}\nThanks.", "```json\n{}\n```", "Sure.\n```\n{}\n```\nDone",
                                  "{{\"draft\": true}} then the real one: {}"])
def test_prose_and_fences_around_the_object_are_read(wrap):
    assert parse_review(wrap.format(json.dumps(REVIEW))).overall == 71


def test_nested_overall_files_move_to_the_top_level_losslessly():
    files = [{"path": "a.py", "verdict": "needed"}]
    nested = {**REVIEW, "overall": {"score": 64, "files": files}}
    review = parse_review(json.dumps(nested))
    assert review.files == files and review.overall == 64


def test_human_spellings_of_the_dimensions_are_the_seed_dimensions():
    spelled = {"Completeness": 6.5, "Relevance precision": 7.5, "Evidence grounding": 7, "Redundancy/efficiency": 6.5,
               "Downstream actionability": 7, "Organization/prioritization": 5, "Risk/uncertainty coverage": 10,
               "overall": 71, "can_proceed": True}
    assert parse_review(json.dumps(spelled)).dimensions["organization_prioritization"] == 5


@pytest.mark.parametrize(("text", "why"), [
    ("I think it is fine.", "no JSON object"),
    (json.dumps({k: v for k, v in REVIEW.items() if k != "completeness"}), "missing dimensions \\['completeness'\\]"),
    (json.dumps({**REVIEW, "can_proceed": "yes"}), "can_proceed: expected true or false"),
    (json.dumps({k: v for k, v in REVIEW.items() if k != "can_proceed"}), "can_proceed: expected true or false, got None"),
    (json.dumps({**REVIEW, "overall": 171}), "overall: expected a number in \\[0, 100\\]"),
    (json.dumps({**REVIEW, "completeness": 11}), "completeness: expected a number in \\[0, 10\\]"),
    ("{'completeness': 7}", "not JSON"),
])
def test_anything_else_is_rejected_naming_what_is_wrong(text, why):
    with pytest.raises(ReviewParseError, match=why):
        parse_review(text)
