"""The processes of a running hub: ingest, projector, publisher, edge, embedded, workers."""
