"""RPS Poker (game "rps-poker", docs/rps-poker.md): throws instead of cards, bots and odds."""
