"""The Dagster assets of the pipeline."""
