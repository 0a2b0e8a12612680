"""Duplicast: real-time scoring and broadcast graphics hub for duplicate poker."""

__version__ = "0.1.0"
