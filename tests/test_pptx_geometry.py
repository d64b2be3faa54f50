"""Group transforms the generated decks do not reach: rotated and flipped groups, degenerate frames."""

import pytest

from indx_assets.pipeline.readers.pptx_geometry import Frame, GroupTransform, normalise


def test_a_rotated_group_carries_its_children_round_its_centre() -> None:
    # group 200x100 at the origin, child space = own frame, turned 90 degrees clockwise
    group = GroupTransform(Frame(0, 0, 200, 100, rotation=90), 0, 0, 200, 100)
    child = group.apply(Frame(150, 25, 50, 50))
    # the child's centre (175, 50) is 75 right of the group's centre (100, 50): after a
    # clockwise quarter turn (y grows downwards) it is 75 below it, at (100, 125)
    assert child.center == pytest.approx((100, 125))
    assert (child.w, child.h, child.rotation) == (50, 50, 90)


def test_a_flipped_group_mirrors_child_positions() -> None:
    group = GroupTransform(Frame(0, 0, 200, 100, flip_h=True), 0, 0, 200, 100)
    child = group.apply(Frame(0, 0, 50, 100, rotation=10))
    assert (child.x, child.y, child.w, child.h) == pytest.approx((150, 0, 50, 100))
    assert child.rotation == pytest.approx(350)


def test_an_empty_child_space_does_not_divide_by_zero() -> None:
    group = GroupTransform(Frame(10, 20, 100, 100), 0, 0, 0, 0)
    assert group.apply(Frame(5, 5, 10, 10)) == Frame(15, 25, 10, 10)


@pytest.mark.parametrize(
    ("frame", "problem"),
    [(Frame(10, 10, 0, 50), "zero_size"), (Frame(-500, 10, 100, 50), "off_slide"), (Frame(10, 10, 50, float("inf")), "invalid_frame")],
)
def test_frames_without_a_box_say_why(frame: Frame, problem: str) -> None:
    placement = normalise(frame, 1000, 1000)
    assert placement.bbox is None and placement.problem == problem
