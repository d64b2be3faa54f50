"""Size-bounded, structure-aware chunking (DESIGN §4)."""
