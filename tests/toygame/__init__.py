"""High card: a game from outside the hub, declared by an entry point (tests/test_toygame.py)."""
