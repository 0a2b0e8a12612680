"""Write the playout templates of overlays/templates/ from their one declaration.

``overlays/templates/templates.json`` declares every field once (its title, type, default,
choices) and each page's own fields; this script renders them in each tool's own convention:

- ``<page>.html``: an SPX-GC template, ``window.SPXGCTemplateDefinition`` with its DataFields
  (a field with choices is a ``dropdown``, any other a ``textfield``; SPX sends every value as
  text, which the page reads as it reads its URL);
- ``<page>.ograf.json``: an EBU OGraf v1 manifest, the fields as its data ``schema`` (JSON
  Schema: a closed choice is an ``enum``), a ``select`` custom action with the page's own
  fields and a ``next`` one for the pages that step;
- ``<page>.mjs``: the OGraf module, the page's name on the shared web component.

    python3 deploy/make_templates.py           # write the files
    python3 deploy/make_templates.py --check   # exit 1 if a committed file differs

``tests/test_template_declaration.py`` runs the check. Standard library only (it runs on a
machine with nothing installed).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

TEMPLATES = Path(__file__).resolve().parent.parent / "overlays" / "templates"
DECLARATION = TEMPLATES / "templates.json"
OGRAF_SCHEMA = "https://ograf.ebu.io/v1/specification/json-schemas/graphics/schema.json"
RENDER = [{"resolution": {"width": {"ideal": 1920}, "height": {"ideal": 1080}}}]


def _text(value: Any) -> str:
    """A default as SPX holds it: text (a list of tables as ``1,4``)."""
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


def spx_field(name: str, field: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"field": name, "title": field["title"], "value": _text(field["default"])}
    if "choices" in field:
        out["ftype"] = "dropdown"
        out["items"] = [{"text": c["text"], "value": c["value"]} for c in field["choices"]]
    else:
        out["ftype"] = "textfield"
    return {k: out[k] for k in ("field", "ftype", "title", "value", "items") if k in out}


def ograf_property(field: dict[str, Any], order: int) -> dict[str, Any]:
    out: dict[str, Any] = {"type": field["type"], "title": field["title"]}
    for key in ("minimum", "items", "maxItems"):
        if key in field:
            out[key] = field[key]
    if "choices" in field and not field.get("open"):
        out["enum"] = [c["value"] for c in field["choices"]]
    out["default"] = field["default"]
    out["order"] = order
    return out


def _fields(declaration: dict[str, Any], page: dict[str, Any]) -> dict[str, Any]:
    """The page's own fields, then those every page has (in the declaration's order)."""
    return {**page["fields"], **declaration["fields"]}


def spx_definition(declaration: dict[str, Any], name: str) -> dict[str, Any]:
    page = declaration["pages"][name]
    fields = [{"ftype": "instruction", "value": declaration["instruction"]}]
    fields += [spx_field(n, f) for n, f in _fields(declaration, page).items()]
    return {
        "description": f"Duplicast · {page['title']}",
        **declaration["spx"],
        "DataFields": fields,
    }


def ograf_manifest(declaration: dict[str, Any], name: str) -> dict[str, Any]:
    page = declaration["pages"][name]
    properties = {
        n: ograf_property(f, i + 1) for i, (n, f) in enumerate(_fields(declaration, page).items())
    }
    actions: list[dict[str, Any]] = []
    if page["fields"]:
        own = {n: properties[n] for n in page["fields"]}
        actions.append(
            {
                "id": "select",
                "name": "Select",
                "description": page.get("select", "Change what the graphic shows"),
                "schema": {"type": "object", "properties": own},
            }
        )
    if "next" in page:
        actions.append({"id": "next", "name": "Next", "description": page["next"], "schema": None})
    return {
        "$schema": OGRAF_SCHEMA,
        "id": f"io.duplicast.{name}",
        "version": "1",
        "name": f"Duplicast · {page['title']}",
        "description": f"The Duplicast {name}.html overlay, drawn by the hub's own page "
        f"({name}.html?playout=ograf) in a transparent frame: the same look as its browser "
        "source. Programme-aware: feed=program shows the delayed programme and never a deal "
        "before it is released.",
        "author": {"name": "Duplicast"},
        "main": f"{name}.mjs",
        "supportsRealTime": True,
        "supportsNonRealTime": False,
        "stepCount": page["stepCount"],
        "schema": {"type": "object", "properties": properties},
        "customActions": actions,
        "renderRequirements": RENDER,
    }


def spx_html(declaration: dict[str, Any], name: str) -> str:
    page = declaration["pages"][name]
    definition = json.dumps(spx_definition(declaration, name), indent=2, ensure_ascii=False)
    definition = definition.replace("\n", "\n    ")
    return (
        "<!doctype html>\n"
        f'<html lang="en" data-page="{name}">\n'
        "<head>\n"
        '  <meta charset="utf-8">\n'
        '  <link rel="icon" href="data:,">\n'
        f"  <title>Duplicast · {page['title']} (SPX-GC template)</title>\n"
        "  <style>html, body { margin: 0; width: 100%; height: 100%; overflow: hidden; "
        "background: transparent; }</style>\n"
        "  <!-- Written by deploy/make_templates.py from templates.json: edit that, not this. -->\n"
        "  <!-- SPX-GC reads this definition from the file; playout-spx.js takes SPX's calls. -->\n"
        "  <script>\n"
        f"    window.SPXGCTemplateDefinition = {definition};\n"
        "  </script>\n"
        '  <script type="module" src="playout-spx.js"></script>\n'
        "</head>\n"
        "<body></body>\n"
        "</html>\n"
    )


def ograf_module(name: str) -> str:
    return (
        f"// The OGraf graphic of {name}.html ({name}.ograf.json): js/playout-ograf.js does the "
        "work.\n"
        "// Written by deploy/make_templates.py from templates.json: edit that, not this.\n"
        "import { DuplicastGraphic } from './playout-ograf.js';\n"
        "\n"
        "export default class extends DuplicastGraphic {\n"
        f"  static page = '{name}';\n"
        "}\n"
    )


def rendered(declaration: dict[str, Any] | None = None) -> dict[str, str]:
    """Every file the declaration makes: its name in overlays/templates/ -> its text."""
    if declaration is None:
        declaration = json.loads(DECLARATION.read_text("utf-8"))
    out: dict[str, str] = {}
    for name in declaration["pages"]:
        out[f"{name}.html"] = spx_html(declaration, name)
        manifest = ograf_manifest(declaration, name)
        out[f"{name}.ograf.json"] = json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"
        out[f"{name}.mjs"] = ograf_module(name)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a file differs")
    args = parser.parse_args(argv)
    stale = []
    for name, text in rendered().items():
        path = TEMPLATES / name
        if path.exists() and path.read_text("utf-8") == text:
            continue
        stale.append(name)
        if not args.check:
            path.write_text(text, "utf-8")
    if args.check and stale:
        print(f"not as templates.json declares: {', '.join(stale)} (run {sys.argv[0]})")
        return 1
    print(("stale: " if args.check else "wrote: ") + (", ".join(stale) or "nothing"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
