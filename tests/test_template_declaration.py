"""The playout templates' fields are one declaration (issue #33): overlays/templates/
templates.json, rendered by deploy/make_templates.py into each page's SPX-GC definition, OGraf
manifest and module. The committed files are what it writes, and a field declared once reaches
both tools."""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "deploy" / "make_templates.py"


def maker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_templates", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def spx(html: str) -> dict[str, Any]:
    found = re.search(r"window\.SPXGCTemplateDefinition = (\{.*?\});\n", html, re.S)
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def test_the_committed_templates_are_what_the_declaration_makes() -> None:
    made = maker().rendered()
    templates = ROOT / "overlays" / "templates"
    assert {p.name for p in templates.glob("*.ograf.json")} == {
        n for n in made if n.endswith(".ograf.json")
    }, "every manifest comes from the declaration"
    for name, text in made.items():
        assert (templates / name).read_text("utf-8") == text, (
            f"overlays/templates/{name} is not what templates.json makes: "
            "run python3 deploy/make_templates.py"
        )
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_field_declared_once_reaches_both_tools_on_every_page() -> None:
    module = maker()
    declaration = json.loads(module.DECLARATION.read_text("utf-8"))
    changed = copy.deepcopy(declaration)
    changed["fields"]["hub"]["title"] = "Where the hub is"
    changed["fields"]["feed"]["choices"].append({"value": "x", "text": "X"})
    made = module.rendered(changed)
    for page in declaration["pages"]:
        fields = {f.get("field"): f for f in spx(made[f"{page}.html"])["DataFields"]}
        manifest = json.loads(made[f"{page}.ograf.json"])
        properties = manifest["schema"]["properties"]
        assert fields["hub"]["title"] == properties["hub"]["title"] == "Where the hub is"
        assert [i["value"] for i in fields["feed"]["items"]] == properties["feed"]["enum"]
        assert properties["feed"]["enum"][-1] == "x"
        # a page's own fields are its OGraf select action's, in the same order as SPX lists them
        own = list(declaration["pages"][page]["fields"])
        assert [f for f in fields if f in own] == own
        select = {a["id"]: a for a in manifest["customActions"]}.get("select")
        assert (select is None and not own) or list(select["schema"]["properties"]) == own
