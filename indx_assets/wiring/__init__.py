"""The Dagster wiring layer: assets, resources, automation and the definitions.

Partitions, data and code versions, the IO managers and the corpus sensor around the
pipeline below. Modules here import the pipeline, never `indx_assets.app`.
"""
