// The hub's topic families, as it serves them (`GET /api/topics`, made from each family's one
// declaration: hub/engine/families). A page builds a topic's name from them
// (`topic('compare', deal, seat)`) and reads who has a family (`family('projection').audiences`)
// instead of spelling names of its own. Loaded once, before the page's own code runs (a
// top-level await); the last list served is kept in localStorage, so a page opened during an
// outage (the console's, from its service worker) still has it.

const KEPT = 'duplicast-topics';
const FETCH_MS = 2500; // a silent link hangs a request for minutes
const RETRY_MS = [500, 1000, 2000, 5000];

/** Where a hub answers: the page's own origin (the hub that served it: the families are the
 * hub's, whatever the tournament), then the page's `ws=` hub if it names another. */
function topicsUrls() {
  const loc = globalThis.location;
  const urls = [];
  if (loc && loc.host) urls.push(new URL('/api/topics', loc.href).href);
  const ws = loc ? new URLSearchParams(loc.search).get('ws') : null;
  if (ws) urls.push(new URL('/api/topics', ws.replace(/^ws(s?):/, 'http$1:')).href);
  if (!urls.length) urls.push('http://localhost:8000/api/topics');
  return [...new Set(urls)];
}

async function fetchList(url) {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), FETCH_MS);
  try {
    const r = await fetch(url, { signal: abort.signal, cache: 'no-store' });
    if (!r.ok) throw new Error(`GET ${url}: ${r.status}`);
    const answer = await r.json();
    return { topics: answer.topics, games: answer.games || {}, pads: answer.pads || {} };
  } finally {
    clearTimeout(timer);
  }
}

function kept() {
  try {
    const raw = globalThis.localStorage && localStorage.getItem(KEPT);
    const copy = raw ? JSON.parse(raw) : null;
    return Array.isArray(copy) ? { topics: copy, games: {} } : copy; // (a list: an older copy)
  } catch {
    return null;
  }
}

async function load() {
  const urls = topicsUrls();
  for (let attempt = 0; ; attempt += 1) {
    for (const url of urls) {
      try {
        const list = await fetchList(url);
        try { localStorage.setItem(KEPT, JSON.stringify(list)); } catch { /* private mode: no copy */ }
        return list;
      } catch { /* the next hub, then the kept copy */ }
    }
    const copy = kept();
    if (copy) return copy;
    await new Promise((ok) => setTimeout(ok, RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)]));
  }
}

const SERVED = await load();

/** name -> {name, pattern, params, audiences, role, console, route, delta} */
export const FAMILIES = Object.fromEntries(SERVED.topics.map((f) => [f.name, f]));

/** game name -> its overlay module, a path under js/games/ (the hub's registry of games). */
export const GAMES = SERVED.games;

/** game name -> its console-pad entries (`Game.pad`: key, type, label, typed fields, to_act,
 * correction, fixed), served once here rather than in every `console:{t}` (js/consolepad.js). */
export const PADS = SERVED.pads || {};

/** A family's facts (throws on a name the hub does not serve: a page's mistake, shown at once). */
export function family(name) {
  const found = FAMILIES[name];
  if (!found) throw new Error(`the hub serves no topic family ${JSON.stringify(name)}`);
  return found;
}

/** A topic's name: `topic('standings')`, `topic('compare', deal, seat)`. */
export function topic(name, ...args) {
  const f = family(name);
  if (args.length !== f.params.length) {
    throw new Error(`${name} takes ${f.params.length} parameters (${f.params.join(', ')}), not ${args.length}`);
  }
  return [name, ...args.map(String)].join(':');
}

/** The parameters of a topic of `name` (`{table: 3}`), or null when `text` is no such topic. */
export function parseTopic(name, text) {
  const f = family(name);
  const parts = String(text).split(':');
  if (parts[0] !== name || parts.length !== f.params.length + 1) return null;
  const values = parts.slice(1).map(Number);
  if (!values.every((v) => Number.isInteger(v) && v >= 0)) return null;
  return Object.fromEntries(f.params.map((p, i) => [p, values[i]]));
}
