"""`duplicast init FOLDER`: start an event folder from the bundled sample tournament file.

The README's event-day block must run as written in an empty folder on a machine where only the
package is installed: the sample it starts from therefore ships inside the package
(``hub/templates/event.toml``), not in the source checkout's ``samples/``. The file is written
only where none exists (an event's edited tournament file is never overwritten) and is checked
by the same loader the later commands use before it is written.
"""

from __future__ import annotations

import re
import sys
from importlib import resources
from pathlib import Path

from hub.domain.config import ConfigError

EVENT_FILE = "event.toml"
_ID_LINE = re.compile(r'^id = "my-event"$', re.M)


def template() -> str:
    """The bundled sample tournament file (the same text as the checkout's samples/event.toml)."""
    return resources.files("hub").joinpath("templates", EVENT_FILE).read_text("utf-8")


def event_text(tournament_id: str | None) -> str:
    """The sample, with the tournament id given (TOML-quoted as the file expects)."""
    text = template()
    if tournament_id is not None:
        quoted = tournament_id.replace("\\", "\\\\").replace('"', '\\"')
        text = _ID_LINE.sub(lambda _: f'id = "{quoted}"', text, count=1)
    return text


def init_event(folder: Path, tournament_id: str | None) -> int:
    """Write ``folder/event.toml``; 1 with a one-line reason when it exists or is invalid."""
    from hub.cli.offline import load_for_preparation

    target = folder / EVENT_FILE
    if target.exists():
        print(f"duplicast init: {target} exists: not overwritten", file=sys.stderr)
        return 1
    folder.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{EVENT_FILE}.partial")
    partial.write_text(event_text(tournament_id), encoding="utf-8")
    try:
        config = load_for_preparation(partial)
    except ConfigError as exc:
        partial.unlink()
        print(f"duplicast init: {exc.key}: {exc.problem}", file=sys.stderr)
        return 1
    partial.replace(target)
    print(
        f"wrote {target}: tournament {config.id!r}, {len(config.teams)} teams, "
        f"{len(config.tables)} tables, {config.deals} deals (the sample: edit its name, teams "
        "and players; no [draw] or [schedule] yet, `duplicast draw` and `duplicast decks` add "
        "them)",
        file=sys.stderr,
    )
    return 0
