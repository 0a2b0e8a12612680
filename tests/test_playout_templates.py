"""Issue #33 item 3: every overlay as a CasparCG HTML template, an SPX-GC template and an EBU
OGraf v1 graphic, through the one adapter (overlays/js/playout.js, js/playout-ograf.js).

Debian's Chromium drives each protocol (load, update, play, next, stop) against a real hub and
compares the graphic drawn with the same page as a browser source (the hub's URL parameters):
the same text, the same panels. Nothing is drawn before play(); a template never shows the
public an unreleased deal, whatever its data says; the OGraf manifests validate against the
published schema (vendored under tests/data/ograf), the SPX definitions have SPX's shape.

The SPX and OGraf runs load the templates the way those tools do: from another server (a
stand-in for SPX's or an OGraf server's, serving a copy of overlays/), the hub named in the
template's fields, the stand-in's origin allowed on the hub (``DUPLICAST_ALLOWED_ORIGINS``).
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from playwright.sync_api import Frame, Page, expect
from referencing import Registry, Resource

from hub.roles.embedded import OVERLAYS
from tests.test_overlays_hub import HubThread

TEMPLATES = OVERLAYS / "templates"
SCHEMAS = Path(__file__).resolve().parent / "data" / "ograf"
PAGES = ("leaderboard", "seat", "table", "compare", "ticker", "clock", "stats")
GRAPHIC = "https://ograf.ebu.io/v1/specification/json-schemas/graphics/schema.json"
PRELOAD = 1300  # events of the sample session: deals released, others still in play
WAIT = 5000  # ms


# -- the manifests and definitions (no browser) --


def ograf_validator() -> jsonschema.Draft202012Validator:
    resources = []
    for path in SCHEMAS.rglob("*.json"):
        doc = json.loads(path.read_text())
        resources.append((doc["$id"], Resource.from_contents(doc)))
    registry: Registry[Any] = Registry().with_resources(resources)
    schema = registry.contents(GRAPHIC)
    return jsonschema.Draft202012Validator(schema, registry=registry)


def manifest(page: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((TEMPLATES / f"{page}.ograf.json").read_text())
    return data


@pytest.mark.parametrize("page", PAGES)
def test_ograf_manifest_is_valid(page: str) -> None:
    validator = ograf_validator()
    doc = manifest(page)
    validator.validate(doc)
    assert (TEMPLATES / doc["main"]).is_file()
    assert doc["id"] == f"io.duplicast.{page}"
    # the schema checks something: a manifest missing a required key, or with a key of its
    # own, is refused
    with pytest.raises(jsonschema.ValidationError):
        validator.validate({k: v for k, v in doc.items() if k != "supportsRealTime"})
    with pytest.raises(jsonschema.ValidationError):
        validator.validate({**doc, "token": "x"})


def test_ograf_split_screen_has_its_select_action() -> None:
    actions = {a["id"]: a for a in manifest("compare")["customActions"]}
    assert set(actions["select"]["schema"]["properties"]) == {"deal", "seat", "tables", "mode"}
    assert actions["next"]["schema"] is None
    assert manifest("compare")["stepCount"] == -1
    # no field of any graphic is a token; its one key is the playout key (it can only report
    # what plays, issue #33 item 4)
    for page in PAGES:
        fields = manifest(page)["schema"]["properties"]
        assert "token" not in fields
        assert "DUPLICAST_PLAYOUT_KEY" in fields["key"]["title"]


def spx_definition(page: str) -> dict[str, Any]:
    html = (TEMPLATES / f"{page}.html").read_text()
    found = re.search(
        r"<script>\s*window\.SPXGCTemplateDefinition = (\{.*?\});\s*</script>", html, re.S
    )
    assert found, f"{page}.html declares no SPXGCTemplateDefinition"
    data: dict[str, Any] = json.loads(found.group(1))
    return data


@pytest.mark.parametrize("page", PAGES)
def test_spx_definition_has_spx_shape(page: str) -> None:
    d = spx_definition(page)
    for key in (
        "description",
        "playserver",
        "playchannel",
        "playlayer",
        "webplayout",
        "out",
        "dataformat",
    ):
        assert isinstance(d[key], str), key
    assert d["out"] == "manual" and d["dataformat"] == "json"
    fields = {f["field"]: f for f in d["DataFields"] if "field" in f}
    assert {"hub", "feed", "output", "slot"} <= set(fields)
    assert fields["feed"]["value"] == "program"  # a programme source by default
    assert "token" not in fields  # the one key: the playout key, which can only report
    assert "DUPLICAST_PLAYOUT_KEY" in fields["key"]["title"] and fields["key"]["value"] == ""
    for f in d["DataFields"]:
        assert f["ftype"] in ("instruction", "textfield", "dropdown", "hidden")
    wanted = {"seat": {"seat"}, "table": {"table"}, "compare": {"deal", "seat", "tables", "mode"}}
    assert wanted.get(page, set()) <= set(fields)


# -- the hub, and a stand-in for SPX's or an OGraf server's own web server --


class Standin(http.server.SimpleHTTPRequestHandler):
    """Serves overlays/templates/ as SPX serves its ASSETS/templates (the crew copies the folder
    there) and as an OGraf server serves its graphics, and a blank renderer page."""

    def do_GET(self) -> None:
        if self.path == "/renderer.html":
            body = (
                b'<!doctype html><html><head><link rel="icon" href="data:,"></head>'
                b"<body style='margin:0;background:transparent'></body></html>"
            )
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def standin() -> Iterator[str]:
    handler = functools.partial(Standin, directory=str(TEMPLATES))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def hub(standin: str) -> Iterator[HubThread]:
    before = os.environ.get("DUPLICAST_ALLOWED_ORIGINS")
    h = HubThread("playout")
    with socket.socket() as s:  # the hub's port, known before it starts: its own origin too
        s.bind(("127.0.0.1", 0))
        h.port = s.getsockname()[1]
    os.environ["DUPLICAST_ALLOWED_ORIGINS"] = f"{standin},{h.url}"
    try:
        h.start()
        h.preload(PRELOAD)
        yield h
        h.stop()
    finally:
        if before is None:
            os.environ.pop("DUPLICAST_ALLOWED_ORIGINS", None)
        else:
            os.environ["DUPLICAST_ALLOWED_ORIGINS"] = before


def ws(hub: HubThread) -> str:
    return hub.url.replace("http://", "ws://") + "/ws"


def released_deal(hub: HubThread) -> int:
    deal: int = hub.rest("/api/standings")["deals"]["complete"]["A"][0]
    return deal


def unreleased_deal(hub: HubThread) -> int:
    rows = [r for r in hub.ops()["release"] if not r["released"] and r.get("done", 1)]
    assert rows, "the preload must leave a deal in play"
    return int(rows[0]["deal"])


SELECTION: dict[str, dict[str, Any]] = {
    "leaderboard": {},
    "seat": {"seat": 3},
    "table": {"table": 2},
    "compare": {"seat": 5, "tables": [1, 4, 2]},
    "ticker": {},
    "clock": {},
    "stats": {"top": 3},  # (and the first team: `selection`)
}


def selection(page: str, hub: HubThread) -> dict[str, Any]:
    sel = dict(SELECTION[page])
    if page == "compare":
        sel["deal"] = released_deal(hub)
    if page == "stats":
        sel["team"] = next(iter(hub.config.teams.values())).code
    return sel


def query(sel: dict[str, Any]) -> str:
    return "&".join(
        f"{k}={','.join(map(str, v)) if isinstance(v, list) else v}" for k, v in sel.items()
    )


def xml(sel: dict[str, Any]) -> str:
    """CasparCG's templateData: one componentData per parameter."""
    text = {k: ",".join(map(str, v)) if isinstance(v, list) else v for k, v in sel.items()}
    parts = "".join(
        f'<componentData id="{k}"><data id="text" value="{v}"/></componentData>'
        for k, v in text.items()
    )
    return f"<templateData>{parts}</templateData>"


def drawn(target: Page | Frame) -> dict[str, Any]:
    """What the graphic shows: its text, and the keyed elements a director would see."""
    result: dict[str, Any] = target.evaluate(
        """() => {
        const g = document.querySelector('[data-testid="gfx"]');
        const ids = (id, attr) => [...g.querySelectorAll(`[data-testid="${id}"]`)]
          .map((e) => e.getAttribute(attr));
        return {
          text: g.innerText.replace(/\\s+/g, ' ').trim(),
          panels: ids('compare-panel', 'data-table'), teams: ids('team-row', 'data-team'),
          ticker: ids('ticker-item', 'data-id').slice(-1),
        };
    }"""
    )
    if result["ticker"]:
        result["text"] = ""  # the ticker's text is its newest item's (compared by id)
    return result


def expect_visible(target: Page | Frame, visible: bool) -> None:
    expect(target.locator('[data-testid="gfx"]')).to_have_attribute(
        "data-visible", "true" if visible else "false", timeout=WAIT
    )


def reference(page: Page, hub: HubThread, name: str, sel: dict[str, Any]) -> dict[str, Any]:
    """The same page as a browser source, driven by the hub from its URL."""
    page.goto(f"{hub.url}/overlays/{name}.html?slot=0&{query(sel)}")
    expect_visible(page, True)
    page.wait_for_timeout(700)  # the entry animations
    return drawn(page)


def never_drawn(target: Page | Frame, ms: int = 1200) -> None:
    """Nothing on screen for `ms`: the graphic's `on` class never set (polled each frame)."""
    shown = target.evaluate(
        """(ms) => new Promise((resolve) => {
        const g = document.querySelector('[data-testid="gfx"]');
        const end = performance.now() + ms;
        const poll = () => {
          if (g.classList.contains('on') || g.dataset.visible === 'true') resolve(true);
          else if (performance.now() > end) resolve(false);
          else requestAnimationFrame(poll);
        };
        poll();
    })""",
        ms,
    )
    assert shown is False, "the template drew before play()"


# -- CasparCG --


@pytest.mark.browser
@pytest.mark.parametrize("name", PAGES)
def test_casparcg_template_draws_what_the_browser_source_draws(
    page: Page, hub: HubThread, name: str
) -> None:
    sel = selection(name, hub)
    want = reference(page, hub, name, sel)
    # CG ADD: the page loads (playout=casparcg: hidden until play()), update(templateData XML)
    page.goto(f"{hub.url}/overlays/{name}.html?playout=casparcg")
    never_drawn(page)
    page.evaluate("(x) => window.update(x)", xml({**sel, "slot": 0}))
    never_drawn(page, 600)
    page.evaluate("window.play()")
    expect_visible(page, True)
    page.wait_for_timeout(700)
    assert drawn(page) == want
    if name in ("compare", "ticker"):
        before = page.evaluate("() => document.querySelector('[data-testid=\"gfx\"]').innerHTML")
        page.evaluate("window.next()")
        page.wait_for_timeout(300)
        after = page.evaluate("() => document.querySelector('[data-testid=\"gfx\"]').innerHTML")
        assert after != before, "next() stepped nothing"
    page.evaluate("window.stop()")
    expect_visible(page, False)
    # JSON data, as CasparCG's clients also send it: the same selection again
    page.evaluate("(j) => window.update(j)", json.dumps({**sel, "slot": 0}))
    page.evaluate("window.play()")
    expect_visible(page, True)


@pytest.mark.browser
def test_casparcg_update_naming_another_hub_moves_the_connection(
    page: Page, hub: HubThread
) -> None:
    """Data naming another hub (`ws`) reconnects the page there, nothing of the old kept."""
    sel = selection("seat", hub)
    want = reference(page, hub, "seat", sel)
    page.goto(f"{hub.url}/overlays/seat.html?playout=casparcg&ws=ws://127.0.0.1:9/ws")
    page.evaluate("(j) => window.update(j)", json.dumps({**sel, "slot": 0}))
    page.evaluate("window.play()")
    never_drawn(page, 1000)  # no hub there: nothing to draw
    page.evaluate("(w) => window.update({ws: w})", ws(hub))
    expect_visible(page, True)
    page.wait_for_timeout(700)
    assert drawn(page) == want


@pytest.mark.browser
def test_a_template_never_shows_the_public_an_unreleased_deal(page: Page, hub: HubThread) -> None:
    deal = unreleased_deal(hub)
    page.goto(f"{hub.url}/overlays/compare.html?playout=casparcg")
    # a token in the data is dropped: the page stays on the public feed
    from tests.hubharness import COMMENTATOR

    page.evaluate(
        "(j) => window.update(j)",
        json.dumps({"deal": deal, "seat": 1, "slot": 0, "token": COMMENTATOR}),
    )
    page.evaluate("window.play()")
    page.wait_for_timeout(1500)
    expect_visible(page, False)
    expect(page.locator('[data-testid="compare-panel"]')).to_have_count(0)
    assert "token" not in page.evaluate(
        "() => window.location.href + document.documentElement.outerHTML"
    )
    # the same on the program feed (no delay set here: the hub answers what it holds)
    out = page.evaluate(
        """async () => (await import('./js/playout.js')).parseTemplateData(
            '{"deal": 3, "token": "t", "key": "k", "feed": "program", "seat": ""}')"""
    )
    assert out == {"deal": 3, "feed": "program"}


# -- SPX --


def spx_fields(page_name: str, hub: HubThread, sel: dict[str, Any]) -> str:
    """What SPX's renderer sends to update(): every DataField's value, as JSON text."""
    values = {
        f["field"]: f.get("value", "")
        for f in spx_definition(page_name)["DataFields"]
        if "field" in f
    }
    values.update({"hub": hub.url, "feed": "", "slot": "0"})
    values.update(
        {k: ",".join(map(str, v)) if isinstance(v, list) else str(v) for k, v in sel.items()}
    )
    return json.dumps(values)


@pytest.mark.browser
@pytest.mark.parametrize("name", ("compare", "leaderboard", "table"))
def test_spx_template_draws_what_the_browser_source_draws(
    page: Page, hub: HubThread, standin: str, name: str
) -> None:
    sel = selection(name, hub)
    want = reference(page, hub, name, sel)
    page.goto(f"{standin}/{name}.html")  # as SPX's renderer loads it: no parameters
    assert page.evaluate("window.SPXGCTemplateDefinition.DataFields.length") > 3
    page.evaluate("(j) => window.update(j)", spx_fields(name, hub, sel))
    page.wait_for_function("() => window.frames.length === 1")
    expect(frame(page, "spx").locator('[data-testid="gfx"]')).to_have_attribute(
        "data-visible", "false"
    )
    never_drawn(frame(page, "spx"), 1500)  # the hub's data here: still nothing before play()
    page.evaluate("window.play()")
    expect_visible(frame(page, "spx"), True)
    page.wait_for_timeout(700)
    assert drawn(frame(page, "spx")) == want
    page.evaluate("window.stop()")  # SPX's out: manual
    expect_visible(frame(page, "spx"), False)


# -- OGraf --


def ograf(page: Page, standin: str, name: str, data: dict[str, Any]) -> None:
    """A stand-in OGraf renderer: import the manifest's main module, define the element, load."""
    page.goto(f"{standin}/renderer.html")
    status = page.evaluate(
        """async ([name, data]) => {
        const manifest = await (await fetch(`/${name}.ograf.json`)).json();
        const mod = await import(`/${manifest.main}`);
        customElements.define(`ograf-${name}`, mod.default);
        const el = document.createElement(`ograf-${name}`);
        document.body.append(el);
        window.graphic = el;
        const params = {renderType: 'realtime', data, renderCharacteristics: {}};
        return (await el.load(params)).statusCode;
    }""",
        [name, data],
    )
    assert status == 200


def frame(page: Page, protocol: str = "ograf") -> Frame:
    f = page.frames[1]
    assert f"playout={protocol}" in f.url
    return f


@pytest.mark.browser
@pytest.mark.parametrize("name", ("compare", "seat", "ticker"))
def test_ograf_graphic_draws_what_the_browser_source_draws(
    page: Page, hub: HubThread, standin: str, name: str
) -> None:
    sel = selection(name, hub)
    want = reference(page, hub, name, sel)
    ograf(page, standin, name, {"hub": hub.url, "slot": "0"})
    never_drawn(frame(page))
    r = page.evaluate("(data) => window.graphic.updateAction({data})", sel)
    assert r == {"statusCode": 200}
    never_drawn(frame(page), 600)
    r = page.evaluate("window.graphic.playAction({})")
    assert r == {"statusCode": 200, "currentStep": 0}
    expect_visible(frame(page), True)
    page.wait_for_timeout(700)
    assert drawn(frame(page)) == want
    if name in ("compare", "ticker"):
        r = page.evaluate("window.graphic.playAction({delta: 1})")
        assert r == {"statusCode": 200, "currentStep": 1}
    assert page.evaluate("window.graphic.stopAction({})") == {"statusCode": 200}
    expect_visible(frame(page), False)


@pytest.mark.browser
def test_ograf_custom_action_selects_the_split_screen(
    page: Page, hub: HubThread, standin: str
) -> None:
    deal = released_deal(hub)
    ograf(page, standin, "compare", {"hub": hub.url, "deal": deal, "seat": 1, "tables": [1, 2]})
    page.evaluate("window.graphic.playAction({})")
    f = frame(page)
    expect_visible(f, True)
    expect(f.locator('[data-testid="compare-panel"]')).to_have_count(2)
    r = page.evaluate(
        "(p) => window.graphic.customAction({id: 'select', payload: p})",
        {"deal": deal, "seat": 4, "tables": [3, 1, 5]},
    )
    assert r == {"statusCode": 200}
    expect(f.locator('[data-testid="compare-title"]')).to_have_text(f"Deal {deal} · Seat 4")
    panels = f.locator('[data-testid="compare-panel"]')
    expect(panels).to_have_count(3)
    expect(panels.first).to_have_attribute("data-table", "3")
    r = page.evaluate("window.graphic.customAction({id: 'nope'})")
    assert r["statusCode"] == 404
    assert page.evaluate("window.graphic.dispose({})") == {"statusCode": 200}
    assert len(page.frames) == 1
