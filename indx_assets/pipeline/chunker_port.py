"""The chunker port, re-exported from `indx_interfaces` (the `indx-interfaces` distribution).

The port lives there so that a chunker distribution depends on it alone; this module keeps
`indx_assets.pipeline.chunker_port` imports working. New code imports `indx_interfaces`.
"""

from indx_interfaces.chunker import *  # noqa: F403 (the port's own __all__ names it)
from indx_interfaces.chunker import __all__  # noqa: F401


class PageDeclined(Exception):
    """Raised by a built-in chunker's `stream_page` (see `chain_runner.stream_page`) to decline
    the page it is cutting, even after giving some of its pieces: those are taken back."""
