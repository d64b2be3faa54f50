"""The app layer: what people and programs talk to.

The `indx` command line, the HTTP server (`indx serve`), the in-process runner, search,
analytics, status, table versions and checks, the home lock and the event-log storage. It
may import the wiring and the pipeline; nothing below imports it.
"""
