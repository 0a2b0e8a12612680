// A playout's template of a Duplicast overlay, for the tools that load templates from their own
// server (SPX-GC, an OGraf renderer): the template frames the hub's own page
// (`<page>.html?playout=…&<selection>`, transparent, filling the template's window) and drives
// it through js/playout.js's postMessage bridge. The graphic on air is the page a browser source
// shows, drawn by the same code, and nothing is drawn before play().
//
// The hub's address: the `hub` field of the template's data (e.g. http://10.0.0.5:8000), else
// the server this module came from (the hub serves it under /overlays/templates/).

/** The selection keys passed on to the page (its URL parameters, docs/overlays.md). */
export const SELECTION = ['deal', 'seat', 'tables', 'table', 'feed', 'output', 'slot', 'view', 'group', 'scope', 'stage', 'session', 'mode', 'dwell', 'team', 'top', 'tournament', 'theme'];

/** The selection keys of a template's data (never a token: the page would not take one from
 * its data either). Empty values are left out: the page's URL keeps its own. */
export function selectionOf(data) {
  const out = {};
  for (const key of SELECTION) {
    const v = data ? data[key] : undefined;
    if (v === undefined || v === null || v === '' || v === 'undefined' || v === 'null') continue;
    out[key] = Array.isArray(v) ? v.join(',') : v;
  }
  return out;
}

/** The overlays' folder on the hub: `hub` given, else next to this module's folder. */
export function overlaysBase(hub, moduleUrl = import.meta.url) {
  if (hub) return new URL('overlays/', String(hub).replace(/\/?$/, '/'));
  return new URL('../', moduleUrl);
}

/** The page's URL for `page`, `protocol` and the template's data. */
export function pageUrl(page, protocol, data, moduleUrl = import.meta.url) {
  const d = data && typeof data === 'object' ? data : {};
  const base = overlaysBase(d.hub, moduleUrl);
  const url = new URL(`${page}.html`, base);
  url.searchParams.set('playout', protocol);
  for (const [key, v] of Object.entries(selectionOf(d))) url.searchParams.set(key, String(v));
  if (d.hub) url.searchParams.set('ws', new URL('/ws', base).toString().replace(/^http/, 'ws'));
  return url.toString();
}

/** One framed page and its bridge: `open(data)` frames it (resolves once the page listens),
 * `send(action, data)` resolves with the page's state ({playing, visible}) once it drew. */
export class PlayoutFrame {
  constructor(host, page, protocol) {
    this.host = host;
    this.page = page;
    this.protocol = protocol;
    this.frame = null;
    this.calls = 0;
    this.waiting = new Map();
    this.opened = null;
    this.onMessage = (ev) => this.heard(ev);
  }

  heard(ev) {
    if (!this.frame || ev.source !== this.frame.contentWindow) return;
    const m = ev.data;
    if (!m || typeof m !== 'object') return;
    if (m.duplicast === 'playout-ready' && this.ready) this.ready();
    if (m.duplicast === 'playout-state' && this.waiting.has(m.id)) {
      this.waiting.get(m.id)(m);
      this.waiting.delete(m.id);
    }
  }

  open(data) {
    if (this.opened) return this.opened;
    window.addEventListener('message', this.onMessage);
    const frame = document.createElement('iframe');
    frame.src = pageUrl(this.page, this.protocol, data);
    frame.setAttribute('allowtransparency', 'true');
    frame.style.cssText = 'position:absolute;inset:0;width:100%;height:100%;border:0;background:transparent;';
    this.frame = frame;
    this.opened = new Promise((resolve) => { this.ready = resolve; });
    this.host.appendChild(frame);
    return this.opened;
  }

  /** Keep the playout key of the template's data (`key`, docs/overlays.md): the page gets it
   * by postMessage only, never in its URL, and reports play() and stop() to the hub with it. */
  takeKey(data) {
    const key = data && typeof data === 'object' ? data.key : undefined;
    if (typeof key === 'string' && key.trim() && key !== 'undefined') this.key = key.trim();
  }

  async send(action, data) {
    if (!this.opened) return null;
    await this.opened;
    if (this.key && this.keySent !== this.key) { // the key first, once, before the action
      this.keySent = this.key;
      await this.post('update', { key: this.key });
    }
    return this.post(action, data);
  }

  post(action, data) {
    this.calls += 1;
    const id = this.calls;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      // To the hub page's origin only: the data may carry the playout key (docs/overlays.md).
      const origin = new URL(this.frame.src).origin;
      this.frame.contentWindow.postMessage({ duplicast: 'playout', id, action, data }, origin);
    });
  }

  close() {
    window.removeEventListener('message', this.onMessage);
    if (this.frame) this.frame.remove();
    this.frame = null;
    this.opened = null;
    this.keySent = null;
    for (const resolve of this.waiting.values()) resolve(null);
    this.waiting.clear();
  }
}
