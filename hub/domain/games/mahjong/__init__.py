"""MCR mahjong (game "mcr", docs/mahjong.md): walls, results, payments and their views."""
