"""One dynamic partition per source; the key is the source id."""

import dagster as dg

SOURCES = dg.DynamicPartitionsDefinition(name="sources")
