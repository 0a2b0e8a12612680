// Duplicast browser client: the one module every overlay, the operator panel and the
// commentator view share. It speaks the client protocol of docs/protocol.md §2 (JSON frames),
// keeps the full current state of every subscribed topic, never shows a gap (a delta whose seq
// is not last + 1 triggers a resubscribe with resume), and reconnects with capped exponential
// backoff and full jitter, resuming every topic from its last seq.
import { installPlayout, PROTOCOLS } from './playout.js';
import { contentTransitions } from './transition.js';
import { signer } from './sign.js';
import { topic } from './topics.js';

const BACKOFF_BASE_MS = 250;
const BACKOFF_CAP_MS = 5000;
const PING_EVERY_MS = 10000;

/** Backoff with full jitter: uniform in [0, min(cap, base * 2^attempt)]. */
export function backoffDelay(attempt, rand = Math.random, base = BACKOFF_BASE_MS, cap = BACKOFF_CAP_MS) {
  return Math.round(rand() * Math.min(cap, base * 2 ** attempt));
}

/**
 * Apply a delta: a JSON Patch (RFC 6902: add, replace, remove; `/-` appends). `state` is not
 * changed: the objects along each path are copied, everything else is shared, so a renderer
 * can tell what changed by identity. Throws on an operation that does not fit.
 */
export function applyPatch(state, ops) {
  let doc = state;
  for (const op of ops || []) {
    const parts = op.path === '' ? [] : String(op.path).slice(1).split('/').map(unescapePointer);
    if (!parts.length) {
      if (op.op === 'remove') throw new Error('cannot remove the whole document');
      doc = op.value;
      continue;
    }
    doc = patchIn(doc, parts, 0, op);
  }
  return doc;
}

function unescapePointer(part) {
  return part.replace(/~1/g, '/').replace(/~0/g, '~');
}

function arrayIndex(list, part, extend) {
  if (part === '-' && extend) return list.length;
  if (!/^(0|[1-9][0-9]*)$/.test(part)) throw new Error(`bad array index ${part}`);
  const i = Number(part);
  if (i > list.length || (i === list.length && !extend)) throw new Error(`index ${i} out of range`);
  return i;
}

function patchIn(node, parts, i, op) {
  if (node === null || typeof node !== 'object') throw new Error(`no container at ${op.path}`);
  const copy = Array.isArray(node) ? node.slice() : { ...node };
  const part = parts[i];
  if (i < parts.length - 1) {
    const key = Array.isArray(copy) ? arrayIndex(copy, part, false) : part;
    if (!Object.prototype.hasOwnProperty.call(copy, key)) throw new Error(`no member ${part}`);
    copy[key] = patchIn(copy[key], parts, i + 1, op);
    return copy;
  }
  if (Array.isArray(copy)) {
    if (op.op === 'add') copy.splice(arrayIndex(copy, part, true), 0, op.value);
    else if (op.op === 'replace') copy[arrayIndex(copy, part, false)] = op.value;
    else if (op.op === 'remove') copy.splice(arrayIndex(copy, part, false), 1);
    else throw new Error(`unsupported operation ${op.op}`);
  } else if (op.op === 'add' || op.op === 'replace') {
    copy[part] = op.value;
  } else if (op.op === 'remove') {
    delete copy[part];
  } else {
    throw new Error(`unsupported operation ${op.op}`);
  }
  return copy;
}

const OFF = new Set(['0', 'off', 'false', 'no']);

function intOrNull(v) {
  if (v === undefined || v === null || v === '') return null;
  const n = Number.parseInt(String(v), 10);
  return Number.isFinite(n) ? n : null;
}

function intList(v) {
  if (v === undefined || v === null || v === '') return null;
  const items = Array.isArray(v) ? v : String(v).split(',');
  const out = items.map((x) => intOrNull(x)).filter((x) => x !== null);
  return out.length ? out : null;
}

/** Normalise a raw selection (URL parameters, CasparCG data, onair slot) into typed values. */
export function normalise(raw) {
  const out = {};
  const has = (k) => Object.prototype.hasOwnProperty.call(raw, k) && raw[k] !== undefined;
  for (const k of ['deal', 'seat', 'table', 'top']) if (has(k)) out[k] = intOrNull(raw[k]);
  if (has('tables')) out.tables = intList(raw.tables);
  if (has('scale')) out.scale = Number.parseFloat(raw.scale) || 1;
  // Group, stage and session ids are names ("A", "final"); an empty value selects nothing.
  for (const k of ['group', 'stage', 'session', 'scope', 'team']) if (has(k)) out[k] = raw[k] === null || raw[k] === '' ? null : String(raw[k]);
  for (const k of ['ws', 'token', 'theme', 'view', 'mode', 'tournament', 'feed', 'output']) if (has(k)) out[k] = String(raw[k]);
  if (has('slot')) out.slot = OFF.has(String(raw.slot).toLowerCase()) ? false : String(raw.slot);
  if (has('visible')) out.visible = raw.visible === true || raw.visible === 'true' || raw.visible === '1';
  if (has('autoplay')) out.autoplay = !OFF.has(String(raw.autoplay).toLowerCase());
  if (has('playout')) out.playout = PROTOCOLS.includes(String(raw.playout).toLowerCase()) ? String(raw.playout).toLowerCase() : null;
  return out;
}

/**
 * URL parameters of the page, with defaults (transparent theme; no on-air slot followed: a page
 * shows what its URL names, and follows its slot only when asked with `slot=`). `scale` is null
 * when the URL does not set it: the stage then fits the window.
 */
export function params(search = globalThis.location ? location.search : '', hash = globalThis.location ? location.hash : '') {
  const raw = Object.fromEntries(new URLSearchParams(search));
  // A link's token goes in its fragment (`#token=`): a browser never sends that to the server
  // (docs/security.md); `?token=` is still read, for links made before.
  const fragment = new URLSearchParams(String(hash || '').replace(/^#/, ''));
  if (fragment.get('token')) raw.token = fragment.get('token');
  const given = normalise(raw);
  // Under a playout (CasparCG, SPX, OGraf) nothing is drawn before play(), unless autoplay says.
  const autoplay = given.autoplay ?? !given.playout;
  return {
    ws: null, token: null, theme: 'transparent', scale: null, deal: null, seat: null,
    tables: null, table: null, group: null, stage: null, session: null, scope: null,
    view: 'like_for_like', mode: 'live',
    tournament: null, feed: null, output: null, slot: false, playout: null, ...given, autoplay,
  };
}

/** Default hub websocket URL: same origin, path /ws. */
export function defaultWsUrl() {
  const loc = globalThis.location;
  if (!loc || !loc.host) return 'ws://localhost:8000/ws';
  return `${loc.protocol === 'https:' ? 'wss' : 'ws'}://${loc.host}/ws`;
}

/**
 * Connect to the hub. Returns a client with subscribe/unsubscribe/send/close.
 * onStatus({state: 'connecting'|'open'|'closed', attempt, role}) reports the link;
 * onError(frame) receives hub error frames (for example `forbidden`).
 * tournament: the tournament id the page expects; when the hub's hello names another one the
 * client reports a `wrong_tournament` error and delivers no data (client.mismatch is set) until a
 * hello names the expected tournament again.
 * onMessage(frame) receives every other frame type (a console's `ack`).
 */
export function connect({ url, token, format = 'json', onStatus, onError, onHello, onOk, onMessage, tournament, feed, output, pingEveryMs, silentAfterMs } = {}) {
  return new DuplicastClient({ url, token, format, onStatus, onError, onHello, onOk, onMessage, tournament, feed, output, pingEveryMs, silentAfterMs });
}

/** The error text of a tournament mismatch (null when the hello matches). */
export function tournamentMismatch(expected, hello) {
  if (!expected || !hello || hello.tournament === undefined || String(hello.tournament) === expected) return null;
  return `wrong tournament: this page expects "${expected}" but the hub at this address runs "${hello.tournament}"`;
}

class DuplicastClient {
  constructor({ url, token, format, onStatus, onError, onHello, onOk, onMessage, tournament, feed, output, pingEveryMs, silentAfterMs }) {
    if (format !== 'json') throw new Error('the browser client speaks format=json only');
    const base = new URL(url || defaultWsUrl(), globalThis.location ? location.href : undefined);
    base.searchParams.set('format', 'json');
    // The hub is shown the token's session proof; its signing key stays here (sign.js).
    this.signer = token ? signer(token) : null;
    if (token) base.searchParams.set('token', this.signer.proof);
    if (feed) base.searchParams.set('feed', feed); // 'program': the secure-delay program feed
    if (output) base.searchParams.set('output', output); // which program output (its own delay)
    this.url = base.toString();
    this.onStatus = onStatus || (() => {});
    this.onError = onError || (() => {});
    this.onHello = onHello || (() => {});
    this.onOk = onOk || (() => {}); // an operator command's {type: 'ok', op}
    this.onMessage = onMessage || (() => {});
    this.tournament = tournament || null;
    this.mismatch = null;
    this.topics = new Map(); // topic -> {seq, state, listeners:Set}
    this.role = null;
    this.attempt = 0;
    this.closed = false;
    this.ws = null;
    this.timer = null;
    this.pinger = null;
    this.lastFrameAt = 0;
    // The heartbeat: a ping every pingEvery; a link silent for silentAfter (no frame, or no
    // hello since the socket was opened) is given up at once and a new one opened (a hung
    // edge, an access point that stops forwarding: the socket itself may not close for minutes).
    this.pingEvery = pingEveryMs || PING_EVERY_MS;
    this.silentAfter = silentAfterMs || 3 * PING_EVERY_MS;
    this.openedAt = 0;
    this.open();
  }

  open() {
    this.onStatus({ state: 'connecting', attempt: this.attempt, role: this.role });
    const ws = new WebSocket(this.url);
    this.ws = ws;
    this.openedAt = Date.now();
    this.lastFrameAt = 0;
    clearInterval(this.pinger);
    this.pinger = setInterval(() => this.keepAlive(), this.pingEvery);
    ws.onopen = () => {
      this.lastFrameAt = Date.now();
      this.resubscribe([...this.topics.keys()]);
    };
    ws.onmessage = (ev) => {
      this.lastFrameAt = Date.now();
      if (typeof ev.data !== 'string') return;
      let frame;
      try {
        frame = JSON.parse(ev.data);
      } catch {
        return;
      }
      this.handle(frame);
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      clearInterval(this.pinger);
      this.ws = null;
      if (this.closed) return;
      this.onStatus({ state: 'closed', attempt: this.attempt, role: this.role });
      const delay = backoffDelay(this.attempt);
      this.attempt = Math.min(this.attempt + 1, 10);
      this.timer = setTimeout(() => this.open(), delay);
    };
    ws.onerror = () => {}; // onclose follows and schedules the reconnect
  }

  keepAlive() {
    if (!this.ws) return;
    const heard = Math.max(this.lastFrameAt, this.openedAt);
    if (Date.now() - heard > this.silentAfter) {
      this.reconnect('silent'); // silent link: give it up, reconnect and resume
      return;
    }
    if (this.ws.readyState === WebSocket.OPEN) this.send({ op: 'ping' });
  }

  /** Give the socket up now (not waiting for it to close) and open a new one at once;
   * `why` ('silent', 'offline', 'online') is reported as the status first. */
  reconnect(why) {
    const old = this.ws;
    this.ws = null;
    clearTimeout(this.timer);
    if (old) {
      old.onclose = null;
      old.onmessage = null;
      old.onopen = null;
      try {
        old.close();
      } catch {
        // (already closed)
      }
    }
    if (this.closed) return;
    this.onStatus({ state: why, attempt: this.attempt, role: this.role });
    if (why === 'online') this.attempt = 0;
    this.open();
  }

  handle(frame) {
    switch (frame.type) {
      case 'hello':
        this.hello = frame;
        if (this.signer) this.signer.clock(frame);
        this.role = frame.role || 'public';
        this.attempt = 0;
        this.mismatch = tournamentMismatch(this.tournament, frame);
        if (this.mismatch) {
          for (const t of this.topics.values()) {
            t.seq = null; // nothing of the other tournament is kept or resumed
            t.state = null;
          }
          console.error(`duplicast: ${this.mismatch}`);
          this.onError({ type: 'error', code: 'wrong_tournament', message: this.mismatch });
        }
        this.onHello(frame);
        this.onStatus({ state: 'open', attempt: 0, role: this.role });
        break;
      case 'snapshot': {
        if (this.mismatch) return; // another tournament's data: never show it
        const t = this.topics.get(frame.topic);
        if (!t) return;
        t.seq = frame.seq;
        t.state = frame.data || {};
        this.emit(frame.topic, t, frame);
        break;
      }
      case 'delta': {
        if (this.mismatch) return;
        const t = this.topics.get(frame.topic);
        if (!t || t.seq === null) return; // wait for the snapshot
        if (frame.seq <= t.seq) return; // already applied (resume overlap)
        if (frame.seq !== t.seq + 1) {
          this.resubscribe([frame.topic]); // gap: ask for what we missed
          return;
        }
        try {
          t.state = applyPatch(t.state, frame.patch);
        } catch (err) {
          console.error(`duplicast: ${frame.topic}: ${err.message}; asking for a snapshot`);
          t.seq = null;
          this.send({ op: 'subscribe', topics: [frame.topic] });
          return;
        }
        t.seq = frame.seq;
        this.emit(frame.topic, t, frame);
        break;
      }
      case 'error':
        this.onError(frame);
        break;
      case 'ok':
        this.onOk(frame);
        break;
      default:
        if (!this.mismatch) this.onMessage(frame);
        break;
    }
  }

  emit(topic, t, frame) {
    for (const fn of [...t.listeners]) {
      try {
        fn(t.state, { topic, seq: t.seq, type: frame.type });
      } catch (err) {
        console.error(err);
      }
    }
  }

  resubscribe(topics) {
    if (!topics.length) return;
    const resume = {};
    for (const topic of topics) {
      const t = this.topics.get(topic);
      if (t && t.seq !== null) resume[topic] = t.seq;
    }
    this.send({ op: 'subscribe', topics, resume });
  }

  /** Call onState(state, info) with the full state after every snapshot/delta of `topic`. */
  subscribe(topic, onState) {
    let t = this.topics.get(topic);
    if (!t) {
      t = { seq: null, state: null, listeners: new Set() };
      this.topics.set(topic, t);
      this.send({ op: 'subscribe', topics: [topic] });
    } else if (t.state !== null) {
      const info = { topic, seq: t.seq, type: 'snapshot' };
      queueMicrotask(() => t.listeners.has(onState) && onState(t.state, info));
    }
    t.listeners.add(onState);
    return () => this.unsubscribe(topic, onState);
  }

  /** Remove one listener (or all); the hub is told when no listener is left. */
  unsubscribe(topic, onState) {
    const t = this.topics.get(topic);
    if (!t) return;
    if (onState) t.listeners.delete(onState);
    else t.listeners.clear();
    if (t.listeners.size) return;
    this.topics.delete(topic);
    this.send({ op: 'unsubscribe', topics: [topic] });
  }

  state(topic) {
    const t = this.topics.get(topic);
    return t ? t.state : null;
  }

  /** Send one op; returns false when the link is down (ops are not queued). */
  send(op) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    const out = this.signer ? this.signer.wrap(op, this.hello) : op; // commands go signed
    if (!out) return false;
    this.ws.send(JSON.stringify(out));
    return true;
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    clearInterval(this.pinger);
    if (this.ws) this.ws.close();
  }
}

export { parseTemplateData } from './playout.js';

export const STAGE = { width: 1920, height: 1080 };

/** The stage's scale in a window of `width` x `height`: the URL's `scale`, else fit the window. */
export function stageScale(p, width, height) {
  if (p.scale) return p.scale;
  return Math.min(width / STAGE.width, height / STAGE.height) || 1;
}

/**
 * Apply theme and scale parameters to the page: the 1920x1080 stage is scaled by `scale`, or
 * to fit the window when the URL has none (a 1280x720 browser source shows the whole graphic).
 */
export function applyTheme(p) {
  document.documentElement.dataset.theme = p.theme || 'transparent';
  const stage = document.querySelector('.stage');
  if (!stage) return;
  const fit = () => {
    const s = stageScale(p, window.innerWidth, window.innerHeight);
    stage.style.transform = s === 1 ? '' : `scale(${s})`;
  };
  fit();
  if (!p.scale) window.addEventListener('resize', fit);
}

/**
 * Run an overlay page: URL selection, onair slot following, CasparCG hooks, subscriptions that
 * follow the selection, batched rendering and animated show/hide.
 *   slot: the onair slot name; topics(sel) -> topic list; render(ctx) -> true if there is
 *   something to show; next(ctx) optional (CasparCG next()).
 */
export function mountOverlay({ slot, topics, render, next, root }) {
  const p = params();
  applyTheme(p);
  const gfx = root || document.querySelector('[data-testid="gfx"]');
  const followOf = (v) => (v === false ? null : ['1', 'on', 'true', 'yes', ''].includes(v) ? slot : v);
  let base = { ...p };
  let playing = p.autoplay;
  let templated = Boolean(p.playout); // a playout drives the page: it is drawn after play() only
  const states = new Map();
  const unsubs = new Map();
  const ctx = { sel: { ...base }, states, client: null, slotVisible: true, cut: false, blocked: false, rerender: schedule };
  const swaps = contentTransitions(gfx, schedule);
  /** Change the page's own selection (as a playout's update() does). Template data naming
   * another hub, feed or output moves the connection there (an SPX template is served by SPX,
   * and learns the hub's address from its fields); one naming a playout enters template mode:
   * nothing is drawn until play(). */
  ctx.update = (data) => {
    const link = (b) => [b.ws, b.feed, b.output, b.tournament].join('|');
    const before = link(base);
    if (data.playout && !templated) {
      templated = true;
      playing = false;
    }
    base = { ...base, ...data };
    if (link(base) !== before) relink();
    schedule();
  };

  function open() {
    const c = connect({
      url: base.ws,
      token: p.token, // the URL's own: template data never carries a token (playout.js)
      tournament: base.tournament,
      feed: base.feed,
      output: base.output,
      onStatus: (s) => {
        document.documentElement.dataset.link = s.state;
      },
      onError: (f) => {
        if (f.code !== 'wrong_tournament') console.warn('hub:', f.code, f.message || '');
      },
      onHello: () => {
        if (ctx.client !== c) return;
        // On air, a mismatch draws nothing at all (the error is in the console log and in
        // data-error on the graphic, for whoever checks the source).
        ctx.blocked = Boolean(c.mismatch);
        if (ctx.blocked) {
          gfx.dataset.error = 'wrong_tournament';
          states.clear();
        } else delete gfx.dataset.error;
        schedule();
      },
    });
    ctx.client = c;
    return c;
  }

  /** A new connection for the new hub, feed or output: nothing of the old one is kept. */
  function relink() {
    const old = ctx.client;
    unsubs.clear();
    states.clear();
    ctx.client = null;
    old.close();
    client = open();
    wanted = sync();
  }

  let client = open();

  function selection() {
    const sel = { ...base };
    ctx.slotVisible = true;
    ctx.cut = false;
    const follow = followOf(base.slot);
    const onair = states.get(topic('onair'));
    const value = follow && onair && onair.slots ? onair.slots[follow] : null;
    if (value && typeof value === 'object') {
      const v = normalise(value);
      ctx.slotVisible = v.visible !== false;
      ctx.cut = value.cut === true; // the operator's Cut: no transition for this change
      for (const k of ['deal', 'seat', 'tables', 'table', 'view', 'group', 'stage', 'session', 'scope', 'mode']) {
        if (v[k] !== undefined && v[k] !== null) sel[k] = v[k];
      }
    }
    return sel;
  }

  /** Subscribe to what the selection needs (and drop the rest); the topics wanted. */
  function sync() {
    const want = new Set(topics(ctx.sel));
    if (followOf(ctx.sel.slot)) want.add(topic('onair'));
    for (const [topic, off] of unsubs) {
      if (!want.has(topic)) {
        off();
        unsubs.delete(topic);
        states.delete(topic);
      }
    }
    for (const topic of want) {
      if (unsubs.has(topic)) continue;
      unsubs.set(topic, client.subscribe(topic, (state) => {
        states.set(topic, state);
        schedule();
      }));
    }
    return want;
  }

  let wanted = new Set();
  let pending = false;
  function schedule() {
    if (pending) return;
    pending = true;
    queueMicrotask(() => {
      pending = false;
      draw();
    });
  }

  function draw() {
    const sel = selection();
    const changed = JSON.stringify(sel) !== JSON.stringify(ctx.sel);
    ctx.sel = sel;
    gfx.classList.toggle('cut', ctx.cut);
    if (changed) {
      wanted = sync();
      if (gfx.classList.contains('on') && ctx.slotVisible) swaps.begin(ctx.cut);
    }
    if (swaps.holding([...wanted].every((t) => states.has(t)))) return; // the old frame stays
    let content = false;
    const held = heldOf();
    try {
      content = !ctx.blocked && !held && Boolean(render(ctx));
    } catch (err) {
      console.error(err);
    }
    showHold(held, playing && ctx.slotVisible && !ctx.blocked);
    const visible = playing && ctx.slotVisible && content;
    gfx.classList.toggle('on', visible);
    gfx.dataset.visible = String(visible);
  }

  /** The program feed holds a topic the page draws while its deal is not released. */
  function heldOf() {
    for (const topic of unsubs.keys()) {
      const state = states.get(topic);
      if (state && state.held) return state;
    }
    return null;
  }

  installPlayout({
    play: () => { playing = true; schedule(); },
    stop: () => { playing = false; schedule(); },
    update: (data) => ctx.update(normalise(data)),
    next: () => { if (next) next(ctx); schedule(); },
    state: () => ({ playing, visible: gfx.dataset.visible === 'true' }),
    about: () => ({ tool: base.playout, page: slot, sel: selection(), ws: ctx.client ? ctx.client.url : null }),
  });
  gfx.dataset.visible = 'false';
  wanted = sync();
  schedule();
  return ctx;
}

/** The program feed's hold, in words, in place of the graphic (null: no hold). */
export function holdText(held) {
  const where = held.table ? ` · table ${held.table}` : '';
  return `${held.reason === 'hand in progress' ? 'Hand in progress' : held.reason} · deal ${held.deal}${where}`;
}

function showHold(held, shown) {
  let box = document.querySelector('[data-testid="held"]');
  if (!held || !shown) {
    if (box) box.hidden = true;
    return;
  }
  if (!box) {
    box = document.createElement('div');
    box.dataset.testid = 'held';
    box.className = 'held'; // the broadcast look: css/broadcast.css, on the scaled stage
    (document.querySelector('.stage') || document.body).appendChild(box);
  }
  box.hidden = false;
  box.dataset.deal = String(held.deal);
  box.textContent = holdText(held);
}
