"""`indx serve`: the document-split service of seed 001 and the index's search and chunking,
over HTTP (FastAPI on uvicorn). The app layer: it calls the pipeline and the index, never
the other way round."""
