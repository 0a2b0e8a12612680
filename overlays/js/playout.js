// The playout protocols (docs/overlays.md "CasparCG", "SPX", "OGraf"): one adapter that maps
// each tool's template calls onto the overlay's own URL parameters (deal, seat, tables, table,
// feed, output, ...), for every page that `mountOverlay` runs. No page has a copy of it.
//
// - CasparCG HTML templates: global play(), stop(), next(), update(data), `data` being CasparCG's
//   templateData XML (<templateData><componentData id="deal"><data id="text" value="3"/>…),
//   JSON text or an object.
// - SPX-GC: the same globals (SPX's renderer calls update(JSON text), play(), stop(), next());
//   each page declares `window.SPXGCTemplateDefinition` in an inline script, as SPX reads it.
//   runTemplateUpdate() is there too, for SPX tooling that calls it.
// - EBU OGraf: the web component (js/playout-ograf.js) frames the page and drives it by
//   postMessage ({duplicast: 'playout', action, data}); only the parent frame is obeyed, and the
//   page answers each message with its state ({duplicast: 'playout-state', id, playing, visible}).
//
// A template's data never carries a token (the keys `token` and `key` are dropped from what the
// page uses): what a playout controls is a programme source. The one exception is the playout
// key (`key`, DUPLICAST_PLAYOUT_KEY): it can only report, and the page sends it in a header of
// its reports (POST /api/playout, never in a URL): each play() and stop() tells the hub what
// the playout has on air, so the operator panel shows it (docs/overlays.md).

/** The protocols a page may be told it runs under (`playout=` in the URL or the data). */
export const PROTOCOLS = ['casparcg', 'spx', 'ograf'];

const DROPPED = new Set(['token', 'key']);

/** CasparCG's templateData XML as {id: value}: each componentData's id names a URL parameter
 * (`deal`, `seat`, `tables`…), its first data element's `value` is the value. */
function fromXml(text) {
  const doc = new DOMParser().parseFromString(text, 'application/xml');
  const out = {};
  for (const comp of doc.querySelectorAll('componentData')) {
    const d = comp.querySelector('data');
    if (d && comp.getAttribute('id')) out[comp.getAttribute('id')] = d.getAttribute('value');
  }
  return out;
}

/** Template data of any of the protocols' shapes as a plain object of URL parameters: a JSON
 * string, an object, templateData XML, or `a=1&b=2` text. Never a token. */
export function parseTemplateData(data) {
  const out = {};
  for (const [k, v] of Object.entries(rawData(data))) {
    if (DROPPED.has(k)) continue;
    // SPX sends an empty field as '' (or the text "undefined"/"null"): the URL's value stays.
    if (v === undefined || v === null || v === 'undefined' || v === 'null' || v === '') continue;
    out[k] = v;
  }
  return out;
}

/** The playout key of template data (its `key`), or null. */
export function playoutKey(data) {
  const key = rawData(data).key;
  return typeof key === 'string' && key.trim() && key !== 'undefined' ? key.trim() : null;
}

function rawData(data) {
  let raw = {};
  if (data === undefined || data === null || data === '') raw = {};
  else if (typeof data === 'object') raw = { ...data };
  else {
    const text = String(data).trim();
    if (text.startsWith('<')) raw = fromXml(text);
    else {
      try {
        const parsed = JSON.parse(text);
        raw = parsed && typeof parsed === 'object' ? parsed : {};
      } catch {
        raw = Object.fromEntries(new URLSearchParams(text));
      }
    }
  }
  return raw;
}

/** The selection a report names (the hub keeps these and no other). */
const REPORTED = ['deal', 'seat', 'table', 'tables', 'group', 'scope', 'stage', 'session', 'view'];

/**
 * Tell the hub what the playout has on air: `POST /api/playout` with the key in the
 * X-Duplicast-Playout-Key header and `{tool, page, state, params}`. `about()` gives the tool,
 * the page, its selection and the hub's websocket URL (the report goes to the same hub).
 * A report that fails is logged: the graphic plays all the same.
 */
export function reportPlayout(key, state, about) {
  const { tool, page, sel, ws } = about();
  if (!key || !tool || !page) return null;
  const params = {};
  for (const k of REPORTED) {
    const v = sel ? sel[k] : null;
    if (v !== null && v !== undefined && v !== '') params[k] = v;
  }
  const url = new URL('/api/playout', String(ws || location.href).replace(/^ws/, 'http'));
  return fetch(url, {
    method: 'POST',
    mode: 'cors',
    credentials: 'omit',
    keepalive: true,
    headers: { 'content-type': 'application/json', 'x-duplicast-playout-key': key },
    body: JSON.stringify({ tool, page, state, params }),
  })
    .then(async (r) => {
      if (!r.ok) console.warn('playout report:', r.status, await r.text());
      return r.status;
    })
    .catch((err) => {
      console.warn('playout report failed:', err);
      return 0;
    });
}

// A playout calls the hooks as soon as the page has loaded; the page's modules may still be
// settling then (a top-level await), so until `installPlayout` the hooks queue the calls, and
// the page answers them in order once it runs.
const HOOKS = ['play', 'stop', 'next', 'update'];
const early = [];
if (typeof window !== 'undefined') {
  for (const name of HOOKS) window[name] = (data) => { early.push([name, data]); };
}

/**
 * Install the template hooks of every protocol on this window.
 *   play(), stop(), next(): the graphic's state; update(raw): new selection (parsed data);
 *   state(): {playing, visible} for the OGraf bridge's answers;
 *   about(): {tool, page, sel, ws} for the reports of play() and stop() to the hub (made only
 *   when the template's data gave the playout key).
 */
export function installPlayout({ play, stop, update, next, state, about }) {
  let key = null;
  const report = (what) => {
    if (key && about) reportPlayout(key, what, about);
  };
  const hooks = {
    play: () => { play(); report('play'); },
    stop: () => { stop(); report('stop'); },
    next: () => next(),
    update: (data) => {
      key = playoutKey(data) || key;
      update(parseTemplateData(data));
    },
  };
  window.play = hooks.play;
  window.stop = hooks.stop;
  window.next = hooks.next;
  window.update = hooks.update;
  window.runTemplateUpdate = () => update({});
  for (const [name, data] of early.splice(0)) hooks[name](data);

  const framed = window.parent && window.parent !== window;
  if (!framed) return;
  window.addEventListener('message', (ev) => {
    if (ev.source !== window.parent) return;
    const m = ev.data;
    if (!m || typeof m !== 'object' || m.duplicast !== 'playout' || !(m.action in hooks)) return;
    hooks[m.action](m.data);
    // The answer waits for the draw the action scheduled (a microtask).
    setTimeout(() => {
      window.parent.postMessage({ duplicast: 'playout-state', id: m.id, ...state() }, '*');
    }, 0);
  });
  window.parent.postMessage({ duplicast: 'playout-ready' }, '*');
}
