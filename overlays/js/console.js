// The table console (docs/console.md): a touch page for the official at one table. It reads the
// console-scoped table state `console:{table}` (no hole cards) and sends the official's entries
// as console events over the hub's websocket (`{"op": "event"}`), each stored in the outbox
// (outbox.js) before it is sent and resent until the hub answers it.
//
// The link is watched by a heartbeat (a ping a second; three seconds without a frame is "No
// answer" and a new socket at once) and by the browser's offline/online events. Offline the pad
// keeps taking entries: rules.js works out the next legal actions with the hub's rules, each
// entry carries the table's `moves` it was made on (`after`: the hub refuses it `stale` if the
// table moved), and everything waiting goes in order once the link is back. A service worker
// (console-sw.js) keeps the page itself, so a reload during an outage opens the pad.
import { connect, params } from './duplicast.js';
import { Outbox, outboxKey, recallIdentity, rememberIdentity } from './outbox.js';
import { describe, renderPad, renderSeats, renderLog, renderSchedule, refusalTitle, words } from './consolepad.js';
import { project } from './rules.js';
import { el, fmtInt } from './ui.js';
import { topic } from './topics.js';

const $ = (id) => document.querySelector(`[data-testid="${id}"]`);
const p = params();
const store = window.localStorage;
const SETTLE_MS = 1000; // after an accepted ack, the pad waits at most this for the state to show it
const PUMP_MS = 250;
const PING_MS = 1000; // the heartbeat: a ping a second...
const SILENT_MS = 3000; // ...and "No answer" (a new socket) after this long without a frame
const EPOCH_WAIT_MS = 3000; // a hub that names no epoch after its hello: send unchecked
// A tap this soon after the table moved under the official's eyes (an entry this tablet did not
// make) was aimed at the screen before: it is sent as made on that screen, and refused `stale`.
const GLANCE_MS = 700;

const page = {
  ident: p.token ? recallIdentity(store, p.token) : null,
  outbox: null,
  state: null,
  // Entries the hub accepted that its state has not shown yet (the ack may come before the
  // table's change): offline, the pad works out the table with them too, or it would offer
  // the seat that just acted again.
  accepted: [],
  live: false, // the state came from the hub on this connection (not the stored copy)
  link: 'connecting',
  hubDown: false, // the hub answered `unavailable`: the edge has no ingest behind it
  silent: false, // the link went silent (no answer to the heartbeat): reconnecting
  netOffline: false, // the browser says it has no network
  epochKnown: false, // the hub named its event epoch on this connection: the outbox may send
  helloAt: 0,
  seenSeq: null, // the highest last_seq of this console the hub showed since the page opened
  otherTablet: null, // {count}: entries under this console's name the page did not make
  aside: [], // entries made under another hub's epoch: set aside, never sent
  moved: { moves: null, before: null, at: 0 }, // the table's last move this tablet did not make
  fatal: null,
  refusal: null,
  wait: null, // the entry the pad waits for (sent, or accepted but not yet in the state); its
  // seq may change (seq_gap), so it is held as the outbox's own entry
  ackedAt: 0,
  topic: null,
  teams: new Map(), // team id -> {code, colour} from the standings
  ui: freshUi(),
};

/** The pad's own state: what is being entered (the amount keyed in, the seats picked, an
 * entry's form: `entry`, the values it keeps, the widgets mounted for it). */
function freshUi(entry = null) {
  return { mode: entry ? 'entry' : 'play', entry, amount: '', picked: new Set(), values: {}, mounted: {}, armed: null };
}

function openOutbox(ident) {
  page.outbox = new Outbox(store, outboxKey(ident.tournament, ident.console));
  page.aside = page.outbox.setAside();
  try {
    page.state = JSON.parse(store.getItem(`${page.outbox.key}.state`) || 'null');
  } catch {
    page.state = null;
  }
}
if (page.ident) openOutbox(page.ident);


function onStatus(s) {
  if (s.state === 'silent') page.silent = true;
  if (s.state === 'open') page.silent = false;
  if (s.state === 'silent' || s.state === 'offline' || s.state === 'online') {
    page.link = 'closed';
  } else {
    page.link = s.state;
  }
  if (s.state !== 'open') {
    page.live = false;
    page.epochKnown = false;
  }
  render();
}

// The browser's own word on the network: offline at once, and a new socket the moment it is back.
window.addEventListener('offline', () => {
  page.netOffline = true;
  if (client) client.reconnect('offline');
  render();
});
window.addEventListener('online', () => {
  page.netOffline = false;
  if (client) client.reconnect('online');
  render();
});

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
  page.epochKnown = false;
  page.helloAt = Date.now();
  rememberIdentity(store, p.token, ident);
  const mine = topic('console', ident.table);
  if (page.topic !== mine) {
    page.topic = mine;
    client.subscribe(mine, onState);
    client.subscribe(topic('standings'), onStandings); // the teams' codes and colours (public)
  }
  // Resumed up to date, the hub sends nothing: what the client holds is the hub's state.
  page.live = client.state(topic) !== null;
  pump(true); // whatever waits goes again, in seq order, before anything new
  render();
}

function mineOf(state) {
  return state && state.consoles && page.ident ? state.consoles[page.ident.console] : null;
}

function onState(state) {
  if (!state || state.table === undefined) return;
  const before = page.state && Number.isInteger(page.state.moves) ? page.state.moves : null;
  // (on a link up for a while, nothing waiting, no refusal shown: what follows a reconnect or a
  // refusal is a jump the official is told of, not a change under the finger)
  const steady = page.live && Date.now() - page.helloAt > SETTLE_MS && !page.refusal;
  if (steady && Number.isInteger(state.moves) && before !== null && state.moves > before
    && page.outbox && !page.outbox.size) {
    // moves this tablet did not make: more than the seqs of its own the hub handled since
    const seq = (x) => { const m = mineOf(x); return m && Number.isInteger(m.last_seq) ? m.last_seq : 0; };
    const own = Math.max(0, Math.min(seq(state), page.outbox.maxSeq) - seq(page.state));
    if (state.moves - before > own) page.moved = { moves: state.moves, before, at: Date.now() };
  }
  page.state = state;
  page.live = true;
  if (page.epochKnown) absorb(state);
  render();
}

/** The hub's state, once the outbox is known to be this hub's (its epoch): seqs, the stored
 * copy, and entries under this console's name that this tablet did not make. */
function absorb(state) {
  const box = page.outbox;
  if (!state || !box) return;
  const mine = mineOf(state);
  const last = mine && Number.isInteger(mine.last_seq) ? mine.last_seq : null;
  if (last !== null) {
    const base = Math.max(page.seenSeq ?? 0, box.maxSeq);
    // Just (re)connected, the link catches up (an edge's snapshot and the deltas since): only
    // seqs above this tablet's own, once it has entered something, are another's then.
    const catchingUp = Date.now() - page.helloAt < SETTLE_MS;
    const seen = catchingUp ? box.own > 0 : page.seenSeq !== null || box.own > 0;
    if (seen && last > base) {
      const count = last - base + (page.otherTablet ? page.otherTablet.count : 0);
      page.otherTablet = { count };
    }
    page.seenSeq = Math.max(page.seenSeq ?? 0, last);
    box.floor(last);
  }
  store.setItem(`${box.key}.state`, JSON.stringify(state));
  const shown = last !== null && page.wait && last >= page.wait.seq;
  if (page.wait && (shown || page.ackedAt)) page.wait = null;
}

/** The hub named its event epoch: the outbox follows it (entries of another epoch are set
 * aside, shown, never sent), then what waits goes. */
function onEpoch(epoch) {
  if (!page.outbox) return;
  const aside = page.outbox.follow(epoch);
  if (aside) {
    page.aside = page.outbox.setAside();
    if (page.wait && aside.entries.some((e) => e.seq === page.wait.seq)) page.wait = null;
    page.ackedAt = 0;
    page.accepted = [];
    page.refusal = null;
    page.seenSeq = null;
    page.otherTablet = null;
    // The other hub's table, kept from before (the link may even have resumed it as if up to
    // date): forgotten, and this hub's asked for afresh.
    page.state = null;
    page.live = false;
    if (client && page.topic) {
      client.unsubscribe(page.topic, onState);
      client.subscribe(page.topic, onState);
    }
  }
  page.epochKnown = true;
  if (page.live) absorb(page.state);
  pump(true);
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
  if (frame.type === 'epoch') {
    onEpoch(frame.epoch);
    return;
  }
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
    page.accepted = [...page.accepted.slice(-31), { seq: entry.seq, event: entry.event }];
    pump(true); // the next waiting entry, if any
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
  // Entries made after the refused one (offline) were worked out from a table the hub never
  // reached: they are withdrawn, never sent, and counted in the notice.
  let later = 0;
  if (seq !== null && page.outbox) {
    for (const e of page.outbox.waiting()) {
      if (e.seq > seq && page.outbox.answered(e.seq)) later += 1;
    }
  }
  page.refusal = { seq, code, message: message || '', later };
  if (page.wait && (seq === page.wait.seq || later)) page.wait = null;
}

/** Send what waits: all of it, in seq order, when forced (a new link) or when the oldest is due. */
function pump(force = false) {
  const box = page.outbox;
  if (!box || !box.size || page.link !== 'open' || page.fatal) return;
  if (!page.epochKnown) {
    if (Date.now() - page.helloAt < EPOCH_WAIT_MS) return; // never to another epoch's hub
    page.epochKnown = true; // a hub that names none: nothing to check against
  }
  const now = Date.now();
  if (!force && !box.due(now)) return;
  // One at a time, in seq order: the next goes once the hub accepted this one (an entry made
  // offline after one the hub refuses is never sent).
  box.transmit(box.waiting()[0], (frame) => client.send(frame), now);
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

/** The link does not carry entries now: closed, silent, or the hub behind the edge gone. */
function offline() {
  return page.link !== 'open' || page.hubDown || page.silent || page.netOffline;
}

/** The entries the hub's last state does not show yet, in seq order: those waiting, and
 * those it accepted whose change the state has not shown yet. */
function unanswered() {
  if (!page.outbox) return [];
  const mine = mineOf(page.state);
  const last = mine && Number.isInteger(mine.last_seq) ? mine.last_seq : 0;
  const waiting = page.outbox.waiting().filter((e) => e.seq > last);
  const shown = new Set(waiting.map((e) => e.seq));
  const taken = page.accepted.filter((e) => e.seq > last && !shown.has(e.seq));
  return taken.length ? [...taken, ...waiting].sort((a, b) => a.seq - b.seq) : waiting;
}

/** The table as the pad shows it: offline, the hub's last state with every entry waiting
 * applied by the hub's rules (rules.js); null when that cannot be worked out here. */
function shownState() {
  const waiting = unanswered();
  if (!waiting.length || !page.state) return page.state;
  if (!offline()) return page.state;
  return project(page.state, waiting.map((e) => e.event));
}

/** True while the pad takes no new entry: online, while an entry waits for its answer (no
 * double send); offline, when what waits cannot be worked out with the rules here. */
function busy() {
  if (offline() && page.state) return Boolean(unanswered().length) && shownState() === null;
  return Boolean(page.outbox && page.outbox.size) || page.wait !== null;
}

/** The official's entry: stored, then sent; the pad waits for the hub's answer. `again`: the
 * entry whose form opens afresh after it (the next seat's throws). */
function submit(fields, again = null) {
  if (busy() || !page.outbox || !page.state || page.fatal) return false;
  page.refusal = null;
  const view = shownState() || page.state;
  let after = view.moves;
  const m = page.moved;
  if (m.moves === after && Date.now() - m.at < GLANCE_MS) after = m.before; // aimed at the screen before
  const made = Number.isInteger(after) ? { ...fields, after } : fields;
  let entry;
  try {
    entry = page.outbox.add(made);
  } catch (err) {
    // Not stored, so not sent either: an entry that could be lost is never sent.
    refused(null, 'storage', `this tablet could not store the entry (${err.message}), so it was not sent: free the browser’s storage and enter it again.`);
    render();
    return false;
  }
  page.wait = entry;
  page.ackedAt = 0;
  page.ui = freshUi(again);
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
    page.moved = { moves: null, before: null, at: 0 };
    render();
  },
  dismissOther() {
    page.otherTablet = null;
    render();
  },
};

function linkText() {
  const n = page.outbox ? page.outbox.size : 0;
  const waiting = n ? ` · ${n} waiting` : '';
  if (page.netOffline) return ['offline', `Offline${waiting}`];
  if (page.silent) return ['silent', `No answer · reconnecting${waiting}`];
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
      el('b', {}, refusalTitle(page.refusal.code, page.state)),
      el('span', { class: 'msg' }, page.refusal.message),
      ...(page.refusal.later ? [el('span', { class: 'msg', dataset: { testid: 'refusal-later' } },
        `${page.refusal.later} later ${page.refusal.later === 1 ? 'entry' : 'entries'}, made after it, ${page.refusal.later === 1 ? 'was' : 'were'} NOT sent: enter ${page.refusal.later === 1 ? 'it' : 'them'} again from the screen.`)] : []),
      el('button', { dataset: { testid: 'refusal-ok' }, onclick: act.dismiss }, 'OK'),
    );
  }
  const o = $('other-tablet');
  o.replaceChildren();
  o.hidden = !page.otherTablet;
  if (page.otherTablet) {
    const k = page.otherTablet.count;
    o.append(el('b', {}, 'Another tablet uses this console'),
      el('span', { class: 'msg' }, `${k} ${k === 1 ? 'entry' : 'entries'} under this console’s name came from elsewhere: `
        + 'check the table before the next tap; the other tablet needs a console link of its own.'),
      el('button', { dataset: { testid: 'other-ok' }, onclick: act.dismissOther }, 'OK'));
  }
  const a = $('set-aside');
  a.replaceChildren();
  const kept = page.aside.reduce((n, x) => n + x.entries.length, 0);
  a.hidden = kept === 0;
  if (kept) {
    a.append(el('b', {}, `${kept} ${kept === 1 ? 'entry' : 'entries'} of another session set aside`),
      el('span', { class: 'msg' }, `Entered on this tablet under another hub (a rehearsal: epoch ${page.aside.map((x) => x.epoch).join(', ')}), `
        + `${kept === 1 ? 'it was' : 'they were'} NOT sent to this event and never will be: `
        + page.aside.flatMap((x) => x.entries.map((e) => describe(e.event))).join('; ') + '.'));
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
  const s = shownState() || page.state;
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
  const kept = page.outbox ? page.outbox.waiting().length : 0; // (not those already accepted)
  const note = $('kept');
  note.hidden = !(!wait && kept && offline());
  note.textContent = note.hidden ? '' : `${kept} ${kept === 1 ? 'entry is' : 'entries are'} kept on this tablet and sent in order when the link is back. Go on entering the hand.`;
  // Every update redraws the pad (the standings move when any table's deal is done): what
  // has the focus keeps it, a field's caret where it was, or the next keys go nowhere (and a
  // tablet's keyboard closes under the finger).
  const focused = focusIn(pad);
  pad.replaceChildren(...renderPad(s, page.ui, act, wait, page.teams));
  focusAgain(pad, focused);
}

/** What has the focus in `box` before a redraw, and a field's caret. */
function focusIn(box) {
  const node = document.activeElement;
  if (!node || node === box || !box.contains(node)) return null;
  const field = ['INPUT', 'TEXTAREA'].includes(node.tagName);
  return { node, testid: node.dataset.testid, caret: field ? [node.selectionStart, node.selectionEnd] : [null, null] };
}

/** Focus again, after a redraw, what had it: the same element (a mounted widget's, moved to
 * the new pad) or the one drawn anew with its testid; a field's caret where it was. */
function focusAgain(box, was) {
  if (!was) return;
  const node = box.contains(was.node) ? was.node : was.testid ? box.querySelector(`[data-testid="${was.testid}"]`) : null;
  if (!node || node === document.activeElement || node.disabled) return;
  node.focus({ preventScroll: true });
  if (was.caret[0] === null) return; // (a number field has no caret to set)
  try {
    node.setSelectionRange(was.caret[0], was.caret[1]);
  } catch {
    // a field kind without a selection
  }
}

function waitingText() {
  const waiting = page.outbox ? page.outbox.waiting() : [];
  const what = waiting.length ? `“${describe(waiting[waiting.length - 1].event)}”` : 'your entry';
  const more = waiting.length > 1 ? ` (${waiting.length} entries)` : '';
  if (page.silent && page.link !== 'open') return `No answer from the hub: ${what}${more} is kept and will be sent when the link is back.`;
  if (page.link !== 'open') return `Offline: ${what}${more} is kept and will be sent when the link is back.`;
  if (page.hubDown) return `The hub is not answering: ${what}${more} is kept and sent again.`;
  return waiting.length ? `Sending ${what}…` : 'Sending…';
}

// Connected last: the hub's first answers may come before the page's functions are defined.
const client = p.token
  ? connect({
    url: p.ws, token: p.token, tournament: p.tournament, onStatus, onError, onHello, onMessage,
    pingEveryMs: PING_MS, silentAfterMs: SILENT_MS,
  })
  : null;
// The page itself is kept by a service worker (console-sw.js), for a reload during an outage.
// Browsers allow one only on https or localhost; elsewhere the page works without it.
if ('serviceWorker' in navigator && window.isSecureContext) {
  navigator.serviceWorker.register('console-sw.js', { scope: './console.html' }).catch((err) => {
    console.warn('the console page is not kept for offline reloads:', err.message);
  });
}
if (!client) page.fatal = 'This page needs the console link with its token (#token=…): ask the tournament director.';
render();
