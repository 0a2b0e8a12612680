"""Deck orders at rest: an AES-256-GCM encrypted file, and a plain export for a dealing machine.

File layout: the 8 bytes ``DUPDECK1``, a 12-byte random nonce, then the AES-GCM ciphertext (with
its 16-byte tag) of a UTF-8 JSON document ``{"v": 1, "deals": {"1": {"cards": "AhKd...",
"rehearsal": false}, ...}}``. The magic is authenticated as associated data, so a wrong key, a
truncated file or a single flipped bit is refused as a whole. The key is the urlsafe base64 of
32 random bytes. It is made once into a key file of its own (``write_key_file``: owner-only, never
overwritten, kept apart from the event folder so that what is shared with edges or helpers never
holds it), and every command that needs it reads it from that file (``--key-file``, or
``DUPLICAST_DECK_KEY_FILE``); the key itself in ``DUPLICAST_DECK_KEY`` is still accepted.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import os
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from hub.domain.config import TournamentConfig
from hub.domain.deck import DeckOrder
from hub.domain.games import registry
from hub.domain.games.registry import game_of

log = logging.getLogger(__name__)

KEY_ENV = "DUPLICAST_DECK_KEY"
KEY_FILE_ENV = "DUPLICAST_DECK_KEY_FILE"
MAGIC = b"DUPDECK1"
NONCE_SIZE = 12
NEW_KEY_HINT = (
    "create a key file with `duplicast decks --new-key --key-out deck.key` and give it with "
    f"--key-file deck.key (or {KEY_FILE_ENV}=deck.key)"
)


class DeckFileError(Exception):
    """The deck file or its key cannot be used; the message says which and why."""


def generate_key() -> str:
    """A fresh key: urlsafe base64 of 32 bytes from the operating system's CSPRNG."""
    return base64.urlsafe_b64encode(secrets.token_bytes(32)).decode("ascii")


def write_key_file(path: str | Path, key: str) -> None:
    """Write ``key`` to a new file readable by its owner only; an existing file is never
    replaced (deck files encrypted with the key in it would become unreadable)."""
    parse_key(key)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise DeckFileError(
            f"{path}: already exists; it may hold the key of a deck file (not replaced)"
        ) from None
    except OSError as exc:
        raise DeckFileError(f"{path}: cannot write the key file ({exc.strerror})") from None
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(key + "\n")


def read_key_file(path: str | Path) -> str:
    """The key in a key file (checked); a file others may read is used, with a warning."""
    try:
        mode = os.stat(path).st_mode
        text = Path(path).read_text(encoding="ascii", errors="replace")
    except OSError as exc:
        raise DeckFileError(f"{path}: cannot read the deck key file ({exc.strerror})") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        log.warning("%s: the deck key file is readable by others: chmod 600 %s", path, path)
    key = text.strip()
    try:
        parse_key(key)
    except DeckFileError:
        raise DeckFileError(
            f"{path}: not a deck key file (one line: urlsafe base64 of 32 bytes); {NEW_KEY_HINT}"
        ) from None
    return key


def deck_key(env: Mapping[str, str]) -> str | None:
    """The deck key: from the file ``DUPLICAST_DECK_KEY_FILE`` names (``--key-file`` sets it),
    else ``DUPLICAST_DECK_KEY`` itself; None when neither is set."""
    path = env.get(KEY_FILE_ENV)
    if path:
        return read_key_file(path)
    return env.get(KEY_ENV) or None


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
            f"{source}: cannot decrypt: wrong deck key ({KEY_FILE_ENV} or {KEY_ENV}), or the "
            "file was altered"
        ) from None
    try:
        document: Any = json.loads(plain)
        deals = document["deals"]
        return {
            int(deal): order_from_text(entry["cards"], bool(entry["rehearsal"]))
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


def order_from_text(text: str, rehearsal: bool = False) -> DeckOrder:
    """A deck order from its codes run together (each game reads its own kind: the registry)."""
    return registry.order_from_text(text, rehearsal)


def export_plain(orders: Mapping[int, DeckOrder]) -> str:
    """Plain text for a dealing machine: per deal a line ``<deal><TAB><52 cards, spaces>``
    (48 tile codes for piecepack hold'em)."""
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
            orders[deal] = order_from_text("".join(cards.split()))
        except ValueError as exc:
            raise DeckFileError(
                f"{source}:{number}: not '<deal> <{registry.order_words()}>' ({exc})"
            ) from None
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
        return game_of(config.game).seeded_orders(source.rehearsal_seed, config.deals)
    assert source.file is not None
    path = Path(config_dir) / source.file
    key = deck_key(env)
    if not key:
        raise DeckFileError(f"{path}: the deck file needs its key; {NEW_KEY_HINT}")
    orders = read_deck_file(path, key)
    missing = [deal for deal in range(1, config.deals + 1) if deal not in orders]
    if missing:
        raise DeckFileError(
            f"{path}: holds no deck order for deal {missing[0]} "
            f"(the tournament has {config.deals} deals)"
        )
    problem = game_of(config.game).orders_problem(orders, config.deals)
    if problem is not None:
        raise DeckFileError(f"{path}: {problem}")
    return {deal: orders[deal] for deal in range(1, config.deals + 1)}
