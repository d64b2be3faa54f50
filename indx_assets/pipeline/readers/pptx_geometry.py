"""Where a PowerPoint shape sits on its slide, from the frames the file states.

DrawingML places a shape by its `a:xfrm`: an offset and extent in EMU (914400 per inch), an
optional rotation (in 60000ths of a degree) and flips. Inside a group the child's frame is in the
group's *child* coordinate space: the group's `chOff`/`chExt` rectangle maps onto its own
`off`/`ext` rectangle, so a child is translated and scaled (separately in x and y) into the
group's frame, then mirrored and rotated with the group about the group's centre. Groups nest, so
the mapping is applied innermost group first.

What a piece's box is: the shape's own (unrotated) frame, scaled through its groups, centred
where the groups' flips and rotations put it, normalised by the slide size; the net rotation is
reported next to it, not baked into the box.
"""

import math
from dataclasses import dataclass

from indx_assets.pipeline.chunker_port import BBox

ROTATION_UNIT = 60000


@dataclass(frozen=True, slots=True)
class Frame:
    """A rectangle in slide EMU (x, y = top-left), with the rotation (degrees) it is drawn at."""

    x: float
    y: float
    w: float
    h: float
    rotation: float = 0.0
    flip_h: bool = False
    flip_v: bool = False

    @property
    def center(self) -> tuple[float, float]:
        return self.x + self.w / 2, self.y + self.h / 2


@dataclass(frozen=True, slots=True)
class GroupTransform:
    """A group's mapping of child coordinates onto its own frame (already in its parent's space)."""

    frame: Frame
    child_x: float
    child_y: float
    child_w: float
    child_h: float

    def apply(self, child: Frame) -> Frame:
        """`child` (in this group's child space) expressed in the group's parent space."""
        g = self.frame
        sx = g.w / self.child_w if self.child_w > 0 else 1.0
        sy = g.h / self.child_h if self.child_h > 0 else 1.0
        w, h = child.w * sx, child.h * sy
        cx = g.x + (child.x + child.w / 2 - self.child_x) * sx
        cy = g.y + (child.y + child.h / 2 - self.child_y) * sy
        gcx, gcy = g.center
        rotation = child.rotation
        if g.flip_h:
            cx = 2 * gcx - cx
            rotation = -rotation
        if g.flip_v:
            cy = 2 * gcy - cy
            rotation = -rotation
        if g.rotation:
            theta = math.radians(g.rotation)
            dx, dy = cx - gcx, cy - gcy
            cx = gcx + dx * math.cos(theta) - dy * math.sin(theta)
            cy = gcy + dx * math.sin(theta) + dy * math.cos(theta)
            rotation += g.rotation
        return Frame(cx - w / 2, cy - h / 2, w, h, rotation % 360.0, child.flip_h, child.flip_v)


def frame_of(xfrm: object | None) -> Frame | None:
    """The frame an `a:xfrm` / `p:xfrm` element states, or `None` when it states no offset and extent."""
    if xfrm is None:
        return None
    off = xfrm.find("{http://schemas.openxmlformats.org/drawingml/2006/main}off")  # type: ignore[attr-defined]
    ext = xfrm.find("{http://schemas.openxmlformats.org/drawingml/2006/main}ext")  # type: ignore[attr-defined]
    if off is None or ext is None:
        return None
    try:
        return Frame(
            float(off.get("x", 0)),
            float(off.get("y", 0)),
            float(ext.get("cx", 0)),
            float(ext.get("cy", 0)),
            (float(xfrm.get("rot", 0)) / ROTATION_UNIT) % 360.0,  # type: ignore[attr-defined]
            xfrm.get("flipH") in ("1", "true"),  # type: ignore[attr-defined]
            xfrm.get("flipV") in ("1", "true"),  # type: ignore[attr-defined]
        )
    except ValueError:
        return None


def group_transform(xfrm: object | None) -> GroupTransform | None:
    """A group's transform from its `a:xfrm`; without `chOff`/`chExt` the child space is its own frame."""
    frame = frame_of(xfrm)
    if frame is None:
        return None
    ns = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
    ch_off = xfrm.find(f"{ns}chOff")  # type: ignore[attr-defined]
    ch_ext = xfrm.find(f"{ns}chExt")  # type: ignore[attr-defined]
    if ch_off is None or ch_ext is None:
        return GroupTransform(frame, frame.x, frame.y, frame.w, frame.h)
    try:
        return GroupTransform(
            frame,
            float(ch_off.get("x", 0)),
            float(ch_off.get("y", 0)),
            float(ch_ext.get("cx", 0)),
            float(ch_ext.get("cy", 0)),
        )
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class Placement:
    """A frame normalised to the slide: a box, or why there is none, plus what was done to it."""

    bbox: BBox | None
    clamped: bool = False
    problem: str | None = None  # `zero_size`, `invalid_frame` or `off_slide` when there is no box


def normalise(frame: Frame, slide_w: float, slide_h: float) -> Placement:
    """`frame` divided by the slide size, top-left origin.

    A shape partly off the slide is clamped to the slide (and says so); a shape with no area,
    or none of it on the slide, has no box: the caller reports it as `unresolved`.
    """
    if not (frame.w > 0 and frame.h > 0):  # also catches NaN
        return Placement(None, problem="zero_size")
    raw = (frame.x / slide_w, frame.y / slide_h, (frame.x + frame.w) / slide_w, (frame.y + frame.h) / slide_h)
    if not all(math.isfinite(v) for v in raw):
        return Placement(None, problem="invalid_frame")
    box = tuple(min(1.0, max(0.0, v)) for v in raw)
    if not (box[0] < box[2] and box[1] < box[3]):
        return Placement(None, problem="off_slide")
    return Placement(box, clamped=box != raw)  # type: ignore[arg-type]
