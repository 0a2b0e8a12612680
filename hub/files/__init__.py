"""Formats at rest: the tournament file, deck files, PHH files."""
