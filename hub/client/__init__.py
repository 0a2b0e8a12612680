"""A table's console: publish events, keep them until acknowledged."""
