"""Ingestion that runs by itself: the corpus sensor, the source index it keeps, and the
automation conditions that decide which partitions to (re)materialize."""
