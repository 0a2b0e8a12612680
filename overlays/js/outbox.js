// The table console's outbox (docs/protocol.md 1.6): every event is given its seq and written to
// the browser's storage BEFORE it is sent, removed only by the hub's answer, resent in seq order
// (same seq, same fields) after a drop, a reload or a tablet sleep. A seq is never reused: the
// highest seq ever given is kept even when the outbox is empty, and the next one is above both it
// and the hub's `last_seq` for this console.
//
// The outbox follows the hub's event epoch as a Redis console's does (hub/client/outbox.py): it
// is bound to the first epoch the hub names, and one opened under another epoch (a rehearsal's
// hub, the real event's now, on the same address) is set aside, kept under its own key, shown
// and never sent. Every event leaves through `transmit`, the one send path.

const PREFIX = 'duplicast.console';
const ACK_TIMEOUT_MS = 1000;
const MAX_BACKOFF_MS = 5000;

/** The storage key of a console's outbox: one per tournament and console name. */
export function outboxKey(tournament, consoleName) {
  return `${PREFIX}.${tournament}.${consoleName}`;
}

/** A short, stable name for a token (FNV-1a), so storage never holds the token itself. */
export function tokenTag(token) {
  let h = 0x811c9dc5;
  for (const ch of String(token || '')) {
    h ^= ch.codePointAt(0);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/** Which console a token spoke for last time (tournament, console, table): known before the hub
 * answers, so a page reloaded offline still shows its waiting events. */
export function rememberIdentity(storage, token, identity) {
  storage.setItem(`${PREFIX}.identity.${tokenTag(token)}`, JSON.stringify(identity));
}

export function recallIdentity(storage, token) {
  try {
    const v = JSON.parse(storage.getItem(`${PREFIX}.identity.${tokenTag(token)}`) || 'null');
    return v && v.tournament && v.console ? v : null;
  } catch {
    return null;
  }
}

/** Wait before the n-th resend: the ack timeout plus full jitter on a capped doubling. */
export function resendDelay(sends, rand = Math.random) {
  return ACK_TIMEOUT_MS + Math.round(rand() * Math.min(MAX_BACKOFF_MS, ACK_TIMEOUT_MS * 2 ** Math.max(0, sends - 1)));
}

export class Outbox {
  /** `storage`: localStorage (or anything with getItem/setItem); `key`: outboxKey(...). */
  constructor(storage, key) {
    this.storage = storage;
    this.key = key;
    let saved = null;
    try {
      saved = JSON.parse(storage.getItem(key) || 'null');
    } catch {
      saved = null;
    }
    this.maxSeq = saved && Number.isInteger(saved.maxSeq) ? saved.maxSeq : 0;
    this.epoch = saved && typeof saved.epoch === 'string' ? saved.epoch : null;
    this.own = saved && Number.isInteger(saved.own) ? saved.own : 0; // the highest seq this tablet gave
    this.entries = saved && Array.isArray(saved.entries) ? saved.entries.filter((e) => Number.isInteger(e.seq)) : [];
    this.entries.sort((a, b) => a.seq - b.seq);
    for (const e of this.entries) {
      e.due = 0; // resend at once after a reload
      e.sends = 0;
      e.restored = true; // sent before the reload: the hub may have it already
    }
  }

  save() {
    const entries = this.entries.map(({ seq, event }) => ({ seq, event }));
    this.storage.setItem(this.key, JSON.stringify({ maxSeq: this.maxSeq, epoch: this.epoch, own: this.own, entries }));
  }

  /**
   * The hub names its event epoch (null: unknown, nothing checked). The first one binds the
   * outbox; another one sets the outbox aside: its entries and seqs belong to the other hub.
   * Returns what was set aside ({epoch, entries, key}) or null.
   */
  follow(epoch) {
    if (typeof epoch !== 'string' || !epoch) return null;
    if (this.epoch === null) {
      this.epoch = epoch;
      this.save();
      return null;
    }
    if (this.epoch === epoch) return null;
    const aside = {
      epoch: this.epoch,
      key: `${this.key}.epoch-${this.epoch}`,
      entries: this.entries.map(({ seq, event }) => ({ seq, event })),
    };
    if (aside.entries.length) {
      this.storage.setItem(aside.key, JSON.stringify({ maxSeq: this.maxSeq, epoch: aside.epoch, entries: aside.entries }));
    }
    this.storage.removeItem(`${this.key}.state`); // the other hub's table: not this one's
    this.epoch = epoch;
    this.maxSeq = 0;
    this.own = 0;
    this.entries = [];
    this.save();
    return aside;
  }

  /** The entries set aside under other epochs (what `follow` kept), for the page to show. */
  setAside() {
    const out = [];
    for (let i = 0; i < this.storage.length; i++) {
      const k = this.storage.key(i);
      if (!k || !k.startsWith(`${this.key}.epoch-`)) continue;
      try {
        const v = JSON.parse(this.storage.getItem(k) || 'null');
        if (v && Array.isArray(v.entries)) out.push({ key: k, epoch: v.epoch, entries: v.entries });
      } catch {
        // not ours
      }
    }
    return out;
  }

  /**
   * Send `entry` through `send` (the link's: returns false when the link is down): the one
   * place an event leaves the tablet, as `{"op": "event", "event": {seq, ...fields}}`.
   * Recorded as sent (when to send it again) only when it left.
   */
  transmit(entry, send, now = Date.now()) {
    const frame = { op: 'event', event: { seq: entry.seq, ...entry.event } };
    if (!send(frame)) return false;
    this.sent(entry, now);
    return true;
  }

  /** The hub's last seq of this console: the next seq goes above it. */
  floor(lastSeq) {
    if (Number.isInteger(lastSeq) && lastSeq > this.maxSeq) {
      this.maxSeq = lastSeq;
      this.save();
    }
  }

  /** Number `event` (a map without seq), store it, and return its entry: stored before sent. */
  add(event) {
    const entry = { seq: this.maxSeq + 1, event: { ...event }, sends: 0, due: 0 };
    const own = this.own;
    this.maxSeq = entry.seq;
    this.own = entry.seq;
    this.entries.push(entry);
    try {
      this.save();
    } catch (err) {
      // The storage is full (or refused): the entry is not kept, so it must not be sent.
      this.entries.pop();
      this.maxSeq = entry.seq - 1;
      this.own = own;
      throw err;
    }
    return entry;
  }

  get(seq) {
    return this.entries.find((e) => e.seq === seq) || null;
  }

  /** The hub answered `seq` (accepted or refused): it leaves the outbox. */
  answered(seq) {
    const before = this.entries.length;
    this.entries = this.entries.filter((e) => e.seq !== seq);
    if (this.entries.length !== before) this.save();
    return before !== this.entries.length;
  }

  /**
   * The hub expects `expected` next (seq_gap): nothing at or above it was recorded. If the
   * outbox does not hold `expected`, its waiting events are numbered again from there.
   */
  gap(expected) {
    if (!Number.isInteger(expected) || expected < 1 || this.get(expected)) return;
    const waiting = this.entries.filter((e) => e.seq > expected);
    if (!waiting.length) return;
    let seq = expected;
    for (const e of waiting) e.seq = seq++;
    this.maxSeq = Math.max(seq - 1, ...this.entries.map((e) => e.seq));
    this.save();
  }

  get size() {
    return this.entries.length;
  }

  /** The waiting events in seq order. */
  waiting() {
    return this.entries.slice();
  }

  /** True when the oldest waiting event has waited its ack timeout since it was last sent. */
  due(now) {
    return this.entries.length > 0 && now >= this.entries[0].due;
  }

  /** Record a send of `entry` at `now` and when to send it again if nothing answers. */
  sent(entry, now, rand = Math.random) {
    entry.sends = (entry.sends || 0) + 1;
    entry.due = now + resendDelay(entry.sends, rand);
  }
}
