// The table console (docs/console.md): a touch page for the official at one table. It reads the
// console-scoped table state `console:{table}` (no hole cards) and sends the official's entries
// as console events over the hub's websocket (`{"op": "event"}`), each stored in the outbox
// (outbox.js) before it is sent and resent until the hub answers it.
import { connect, params } from './duplicast.js';
import { Outbox, outboxKey, recallIdentity, rememberIdentity } from './outbox.js';
import { describe, renderPad, renderSeats, renderLog, renderSchedule, refusalTitle, words } from './consolepad.js';
import { el, fmtInt } from './ui.js';

const $ = (id) => document.querySelector(`[data-testid="${id}"]`);
const p = params();
const store = window.localStorage;
const SETTLE_MS = 1000; // after an accepted ack, the pad waits at most this for the state to show it
const PUMP_MS = 250;

const page = {
  ident: p.token ? recallIdentity(store, p.token) : null,
  outbox: null,
  state: null,
  live: false, // the state came from the hub on this connection (not the stored copy)
  link: 'connecting',
  hubDown: false, // the hub answered `unavailable`: the edge has no ingest behind it
  fatal: null,
  refusal: null,
  wait: null, // the entry the pad waits for (sent, or accepted but not yet in the state); its
  // seq may change (seq_gap), so it is held as the outbox's own entry
  ackedAt: 0,
  topic: null,
  teams: new Map(), // team id -> {code, colour} from the standings
  ui: { mode: 'play', amount: '', picked: new Set(), card: 1, armed: null },
};

function openOutbox(ident) {
  page.outbox = new Outbox(store, outboxKey(ident.tournament, ident.console));
  try {
    page.state = JSON.parse(store.getItem(`${page.outbox.key}.state`) || 'null');
  } catch {
    page.state = null;
  }
}
if (page.ident) openOutbox(page.ident);


function onStatus(s) {
  page.link = s.state;
  if (s.state !== 'open') page.live = false;
  render();
}

function onError(frame) {
  if (frame.code === 'unavailable') {
    page.hubDown = true; // kept in the outbox: resent with backoff
  } else if (frame.code === 'unauthorized') {
    page.fatal = 'The hub does not know this console link (its token): ask the tournament director for the right one.';
  } else if (frame.code === 'wrong_tournament') {
    page.fatal = frame.message;
  } else if (frame.seq !== undefined && page.outbox && page.outbox.answered(frame.seq)) {
    refused(frame.seq, frame.code, frame.message);
  } else {
    console.warn('hub:', frame.code, frame.message || '');
  }
  render();
}

function onHello(frame) {
  if (client.mismatch) return;
  if (frame.role !== 'console') {
    page.fatal = `This link opens the hub as ${frame.role}, not as a table console: use the console link of your table.`;
    render();
    return;
  }
  page.fatal = null;
  const ident = { tournament: String(frame.tournament), console: String(frame.console), table: frame.table };
  const same = page.ident && page.ident.tournament === ident.tournament && page.ident.console === ident.console;
  if (!same || !page.outbox) {
    page.ident = ident;
    openOutbox(ident);
  }
  page.ident = ident;
  rememberIdentity(store, p.token, ident);
  const topic = `console:${ident.table}`;
  if (page.topic !== topic) {
    page.topic = topic;
    client.subscribe(topic, onState);
    client.subscribe('standings', onStandings); // the teams' codes and colours (public)
  }
  // Resumed up to date, the hub sends nothing: what the client holds is the hub's state.
  page.live = client.state(topic) !== null;
  pump(true); // whatever waits goes again, in seq order, before anything new
  render();
}

function onState(state) {
  if (!state || state.table === undefined) return;
  page.state = state;
  page.live = true;
  const mine = state.consoles && page.ident ? state.consoles[page.ident.console] : null;
  if (page.outbox) {
    if (mine && Number.isInteger(mine.last_seq)) page.outbox.floor(mine.last_seq);
    store.setItem(`${page.outbox.key}.state`, JSON.stringify(state));
  }
  const shown = mine && page.wait && mine.last_seq >= page.wait.seq;
  if (page.wait && (shown || page.ackedAt)) page.wait = null;
  render();
}

function onStandings(standings) {
  const teams = new Map();
  for (const view of ['like_for_like', 'running']) {
    for (const t of (standings && standings[view] && standings[view].teams) || []) teams.set(String(t.team), t);
  }
  page.teams = teams;
  render();
}

function onMessage(frame) {
  if (frame.type !== 'ack' || !page.outbox || !Number.isInteger(frame.seq)) return;
  page.hubDown = false;
  if (!frame.ok && frame.code === 'seq_gap') {
    page.outbox.gap(frame.expected);
    pump(true);
    return;
  }
  const entry = page.outbox.get(frame.seq);
  if (!entry || !page.outbox.answered(frame.seq)) return; // a resend's answer, already taken
  if (frame.duplicate && entry.sends === 1 && !entry.restored) {
    // Sent once, never before: the hub handled this seq from someone else under this name.
    refused(frame.seq, 'taken', 'another tablet is entering under this console’s name, so this entry was NOT entered: '
      + 'check the table and enter it again, and ask the tournament director for a console link of its own.');
  } else if (frame.ok) {
    const mine = page.state && page.state.consoles && page.ident ? page.state.consoles[page.ident.console] : null;
    if (entry === page.wait) {
      if (mine && mine.last_seq >= frame.seq) page.wait = null; // the state showed it first
      else page.ackedAt = Date.now();
    }
  } else {
    refused(frame.seq, frame.code, frame.message || frame.error);
  }
  render();
}

function refused(seq, code, message) {
  page.refusal = { seq, code, message: message || '' };
  if (page.wait && seq === page.wait.seq) page.wait = null;
}

/** Send what waits: all of it, in seq order, when forced (a new link) or when the oldest is due. */
function pump(force = false) {
  const box = page.outbox;
  if (!box || !box.size || page.link !== 'open' || page.fatal) return;
  const now = Date.now();
  if (!force && !box.due(now)) return;
  for (const entry of box.waiting()) {
    if (!client.send({ op: 'event', event: { seq: entry.seq, ...entry.event } })) break;
    box.sent(entry, now);
  }
}

setInterval(() => {
  if (page.wait && page.ackedAt && Date.now() - page.ackedAt > SETTLE_MS) {
    page.wait = null;
    render();
  }
  pump();
}, PUMP_MS);

// A tablet waking up: check the link at once instead of waiting for the next ping.
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && client) client.keepAlive();
});

/** True while an entry waits for its answer: the pad takes no new entry (no double send). */
function busy() {
  return Boolean(page.outbox && page.outbox.size) || page.wait !== null;
}

/** The official's entry: stored, then sent; the pad waits for the hub's answer. */
function submit(fields) {
  if (busy() || !page.outbox || !page.state || page.fatal) return false;
  page.refusal = null;
  let entry;
  try {
    entry = page.outbox.add(fields);
  } catch (err) {
    // Not stored, so not sent either: an entry that could be lost is never sent.
    refused(null, 'storage', `this tablet could not store the entry (${err.message}), so it was not sent: free the browser’s storage and enter it again.`);
    render();
    return false;
  }
  page.wait = entry;
  page.ackedAt = 0;
  page.ui = { mode: 'play', amount: '', picked: new Set(), card: 1, armed: null };
  pump(true);
  render();
  return true;
}

const act = {
  submit,
  busy,
  set(changes) {
    Object.assign(page.ui, changes);
    render();
  },
  dismiss() {
    page.refusal = null;
    render();
  },
};

function linkText() {
  const n = page.outbox ? page.outbox.size : 0;
  const waiting = n ? ` · ${n} waiting` : '';
  if (page.link === 'open' && page.hubDown) return ['hub-down', `Hub not answering${waiting}`];
  if (page.link === 'open') return ['open', n ? `Connected · sending ${n}` : 'Connected'];
  return ['offline', `Offline${waiting}`];
}

function renderHeader(s) {
  const [state, text] = linkText();
  const link = $('link');
  link.dataset.state = state;
  link.dataset.waiting = String(page.outbox ? page.outbox.size : 0);
  link.textContent = text;
  const id = page.ident;
  $('where').textContent = id ? `Table ${id.table} · ${id.console}` : 'Table console';
  if (!s) return;
  const deal = s.deal ?? null;
  $('deal').textContent = deal === null ? (s.next_deal ? `Next: deal ${s.next_deal}` : 'No deal') : `Deal ${deal} · ${words(s.status)}`;
  $('deal').dataset.status = s.status || 'none';
  $('street').textContent = s.street ? words(s.street) : '';
  $('pot').textContent = fmtInt(s.pot ?? 0);
  document.documentElement.dataset.stale = String(!page.live);
}

function renderNotices(s) {
  const r = $('refusal');
  r.replaceChildren();
  r.hidden = !page.refusal;
  if (page.refusal) {
    r.dataset.code = page.refusal.code || '';
    r.append(
      el('b', {}, refusalTitle(page.refusal.code)),
      el('span', { class: 'msg' }, page.refusal.message),
      el('button', { dataset: { testid: 'refusal-ok' }, onclick: act.dismiss }, 'OK'),
    );
  }
  const d = $('dispute');
  d.replaceChildren();
  const dispute = s && s.dispute;
  d.hidden = !dispute;
  if (dispute) {
    d.append(el('b', {}, `Deal ${s.deal} is disputed`), el('span', { class: 'msg' }, dispute.reason || ''),
      el('span', { class: 'msg' }, 'It counts nowhere until an official confirms the winners.'));
  }
}

function render() {
  const s = page.state;
  renderHeader(s);
  renderNotices(s);
  const pad = $('pad');
  if (page.fatal) {
    pad.replaceChildren(el('p', { class: 'fatal', dataset: { testid: 'fatal' } }, page.fatal));
    return;
  }
  if (!s) {
    pad.replaceChildren(el('p', { class: 'hint' }, 'Waiting for the hub…'));
    return;
  }
  $('schedule').replaceChildren(...renderSchedule(s));
  $('seats').replaceChildren(...renderSeats(s, page.ui, act, page.teams));
  $('log').replaceChildren(...renderLog(s));
  const wait = busy() ? waitingText() : null;
  pad.replaceChildren(...renderPad(s, page.ui, act, wait, page.teams));
}

function waitingText() {
  const waiting = page.outbox ? page.outbox.waiting() : [];
  const what = waiting.length ? `“${describe(waiting[waiting.length - 1].event)}”` : 'your entry';
  const more = waiting.length > 1 ? ` (${waiting.length} entries)` : '';
  if (page.link !== 'open') return `Offline: ${what}${more} is kept and will be sent when the link is back.`;
  if (page.hubDown) return `The hub is not answering: ${what}${more} is kept and sent again.`;
  return waiting.length ? `Sending ${what}…` : 'Sending…';
}

// Connected last: the hub's first answers may come before the page's functions are defined.
const client = p.token
  ? connect({ url: p.ws, token: p.token, tournament: p.tournament, onStatus, onError, onHello, onMessage })
  : null;
if (!client) page.fatal = 'This page needs the console link with its token (#token=…): ask the tournament director.';
render();
