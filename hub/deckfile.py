"""Deck orders at rest: an AES-256-GCM encrypted file, and a plain export for a dealing machine.

File layout: the 8 bytes ``DUPDECK1``, a 12-byte random nonce, then the AES-GCM ciphertext (with
its 16-byte tag) of a UTF-8 JSON document ``{"v": 1, "deals": {"1": {"cards": "AhKd...",
"rehearsal": false}, ...}}``. The magic is authenticated as associated data, so a wrong key, a
truncated file or a single flipped bit is refused as a whole. The key is the urlsafe base64 of
32 random bytes, kept in the environment variable ``DUPLICAST_DECK_KEY``, never in a file the hub
reads.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from hub.domain.config import TournamentConfig
from hub.domain.deck import DeckOrder, deck_order_from_cards, seeded_deck_orders

KEY_ENV = "DUPLICAST_DECK_KEY"
MAGIC = b"DUPDECK1"
NONCE_SIZE = 12
NEW_KEY_HINT = (
    "create a key with `duplicast decks --new-key` (or "
    'python -c "import base64, os; print(base64.urlsafe_b64encode(os.urandom(32)).decode())") '
    f"and export it as {KEY_ENV}"
)


class DeckFileError(Exception):
    """The deck file or its key cannot be used; the message says which and why."""


def generate_key() -> str:
    """A fresh key: urlsafe base64 of 32 bytes from the operating system's CSPRNG."""
    return base64.urlsafe_b64encode(secrets.token_bytes(32)).decode("ascii")


def parse_key(key: str | bytes) -> bytes:
    """The 32 raw key bytes from their urlsafe base64 text."""
    text = key.decode("ascii", "replace") if isinstance(key, bytes) else key
    try:
        raw = base64.urlsafe_b64decode(text.strip().encode("ascii"))
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raw = b""
    if len(raw) != 32:
        raise DeckFileError(
            f"{KEY_ENV}: not a deck key (urlsafe base64 of 32 bytes); {NEW_KEY_HINT}"
        )
    return raw


def encrypt_orders(orders: Mapping[int, DeckOrder], key: str | bytes) -> bytes:
    """The bytes of a deck file holding ``orders``."""
    document = {
        "v": 1,
        "deals": {
            str(deal): {"cards": "".join(order.cards), "rehearsal": order.rehearsal}
            for deal, order in sorted(orders.items())
        },
    }
    plain = json.dumps(document, separators=(",", ":")).encode("utf-8")
    nonce = secrets.token_bytes(NONCE_SIZE)
    return MAGIC + nonce + AESGCM(parse_key(key)).encrypt(nonce, plain, MAGIC)


def decrypt_orders(
    data: bytes, key: str | bytes, source: str = "<deck file>"
) -> dict[int, DeckOrder]:
    """The deck orders in deck-file bytes; ``DeckFileError`` for a wrong key or altered bytes."""
    raw_key = parse_key(key)
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + NONCE_SIZE + 16:
        raise DeckFileError(f"{source}: not a Duplicast deck file")
    nonce = data[len(MAGIC) : len(MAGIC) + NONCE_SIZE]
    try:
        plain = AESGCM(raw_key).decrypt(nonce, data[len(MAGIC) + NONCE_SIZE :], MAGIC)
    except InvalidTag:
        raise DeckFileError(
            f"{source}: cannot decrypt: wrong key in {KEY_ENV}, or the file was altered"
        ) from None
    try:
        document: Any = json.loads(plain)
        deals = document["deals"]
        return {
            int(deal): deck_order_from_cards(entry["cards"], bool(entry["rehearsal"]))
            for deal, entry in deals.items()
        }
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise DeckFileError(f"{source}: decrypted, but the content is damaged ({exc})") from None


def write_deck_file(path: str | Path, orders: Mapping[int, DeckOrder], key: str | bytes) -> None:
    """Encrypt ``orders`` into ``path`` (owner-only permissions, replaced atomically)."""
    target = Path(path)
    data = encrypt_orders(orders, key)
    temporary = target.with_name(target.name + ".tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.replace(temporary, target)


def read_deck_file(path: str | Path, key: str | bytes) -> dict[int, DeckOrder]:
    """Decrypt the deck orders in ``path``."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise DeckFileError(f"{path}: cannot read the deck file ({exc.strerror})") from None
    return decrypt_orders(data, key, str(path))


def export_plain(orders: Mapping[int, DeckOrder]) -> str:
    """Plain text for a dealing machine: per deal a line ``<deal><TAB><52 cards, spaces>``."""
    return "".join(f"{deal}\t{' '.join(orders[deal].cards)}\n" for deal in sorted(orders))


def parse_plain(text: str, source: str = "<plain export>") -> dict[int, DeckOrder]:
    """The deck orders of a plain export (``export_plain``'s format: per deal a line
    ``<deal><TAB or spaces><52 cards>``; blank lines and ``#`` comments skipped)."""
    orders: dict[int, DeckOrder] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        deal_text, _, cards = line.strip().partition("\t")
        if not cards:
            deal_text, _, cards = line.strip().partition(" ")
        try:
            deal = int(deal_text)
            if deal < 1 or deal in orders:
                raise ValueError(f"deal {deal} is not a new deal number")
            orders[deal] = deck_order_from_cards("".join(cards.split()))
        except ValueError as exc:
            raise DeckFileError(f"{source}:{number}: not '<deal> <52 cards>' ({exc})") from None
    if not orders:
        raise DeckFileError(f"{source}: holds no deck order")
    return orders


def load_decks(
    config: TournamentConfig, config_dir: str | Path, env: Mapping[str, str]
) -> dict[int, DeckOrder] | None:
    """The session's deck orders as the configuration's ``[decks]`` says; None without it."""
    source = config.decks
    if source is None:
        return None
    if source.rehearsal_seed is not None:
        return seeded_deck_orders(source.rehearsal_seed, config.deals)
    assert source.file is not None
    path = Path(config_dir) / source.file
    key = env.get(KEY_ENV)
    if not key:
        raise DeckFileError(f"{path}: the deck file needs its key in {KEY_ENV}, which is not set")
    orders = read_deck_file(path, key)
    missing = [deal for deal in range(1, config.deals + 1) if deal not in orders]
    if missing:
        raise DeckFileError(
            f"{path}: holds no deck order for deal {missing[0]} "
            f"(the tournament has {config.deals} deals)"
        )
    return {deal: orders[deal] for deal in range(1, config.deals + 1)}
