// The hub's hold'em betting rules in the page (issue #30 item 5): while the link is down the table
// console works out the next legal actions itself, so the official can enter a whole hand
// offline. A copy of hub/domain/games/holdem/hand.py `Hand` and betting.py `BettingRules` for
// the standard rules the tournament plays (pot limit or no limit, blinds, no antes, every seat
// starting at the cap); tests/test_console_rules_js.py checks it against `Hand.legal` on
// thousands of random states. Pure: no DOM, no hub; runs in node as in the browser.

export const STREETS = ['preflop', 'flop', 'turn', 'river'];
const BLINDS = new Set(['small_blind', 'big_blind']);
const BETTING = new Set(['fold', 'check', 'call', 'bet', 'raise']);
const MISDEAL_ACTIONS = 2; // hub/engine/hands.py: a misdeal only before two actions

/** A refusal as the hub words its code (hub/domain/games/holdem/betting.py). */
export class Refusal extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

export class Hand {
  /** spec: {seats, button, small_blind, big_blind, cap, pot_limit} (console:{t}'s `rules`). */
  constructor(spec) {
    this.spec = { ...spec };
    const n = spec.seats;
    this.street = 'preflop';
    this.toAct = null;
    this.committed = {};
    this.streetBet = {};
    this.start = {};
    for (let s = 1; s <= n; s++) {
      this.committed[s] = 0;
      this.streetBet[s] = 0;
      this.start[s] = spec.cap;
    }
    this.folded = new Set();
    this.allIn = new Set();
    this.actions = [];
    this.minIncr = spec.big_blind;
    this.pending = new Set();
    this.acted = new Set();
    this.high = 0;
    let sb;
    let bb;
    if (n === 2) {
      sb = spec.button;
      bb = this.left(spec.button);
    } else {
      sb = this.left(spec.button);
      bb = this.left(sb);
    }
    this.post(sb, 'small_blind', spec.small_blind);
    this.post(bb, 'big_blind', spec.big_blind);
    this.beginStreet('preflop', this.left(bb));
  }

  /** The hand of a console state (`rules`, `button`, `actions`), or null when it cannot be. */
  static fromState(s) {
    if (!s || !s.rules || !s.button) return null;
    const hand = new Hand({ ...s.rules, button: s.button });
    for (const a of s.actions || []) {
      if (BLINDS.has(a.kind)) continue;
      if (!BETTING.has(a.kind)) return null; // antes, throws: not this game's rules
      hand.act(a.seat, a.kind, a.kind === 'bet' || a.kind === 'raise' ? a.amount : null);
    }
    return hand;
  }

  left(seat) {
    return (seat % this.spec.seats) + 1;
  }

  stack(seat) {
    return this.start[seat] - this.committed[seat];
  }

  get pot() {
    return Object.values(this.committed).reduce((a, b) => a + b, 0);
  }

  get highBet() {
    return Math.max(...Object.values(this.streetBet));
  }

  canStillAct() {
    const out = new Set();
    for (let s = 1; s <= this.spec.seats; s++) if (!this.folded.has(s) && !this.allIn.has(s)) out.add(s);
    return out;
  }

  put(seat, chips) {
    this.committed[seat] += chips;
    this.streetBet[seat] += chips;
    if (this.streetBet[seat] > this.high) this.high = this.streetBet[seat];
    if (this.committed[seat] === this.start[seat]) this.allIn.add(seat);
  }

  post(seat, kind, blind) {
    const chips = Math.min(blind, this.stack(seat));
    this.put(seat, chips);
    this.actions.push({ seat, kind, added: chips, to: this.streetBet[seat], street: 'preflop' });
  }

  beginStreet(street, first) {
    this.street = street;
    this.acted = new Set();
    this.minIncr = this.spec.big_blind;
    this.pending = this.canStillAct();
    if (this.pending.size <= 1 && [...this.pending].every((s) => this.streetBet[s] >= this.high)) {
      this.pending = new Set(); // nobody left to bet against
    }
    this.advance(first, true);
  }

  advance(after, includeFirst = false) {
    const n = this.spec.seats;
    if (n - this.folded.size === 1) {
      this.toAct = null;
      this.street = 'complete'; // one seat left in: it wins
      return;
    }
    if (this.pending.size) {
      const first = includeFirst ? after : (after % n) + 1;
      for (let i = 0; i < n; i++) {
        const s = ((first - 1 + i) % n) + 1;
        if (this.pending.has(s)) {
          this.toAct = s;
          return;
        }
      }
    }
    this.toAct = null;
    const index = STREETS.indexOf(this.street);
    if (this.canStillAct().size <= 1 || index === STREETS.length - 1) {
      this.street = 'showdown';
      return;
    }
    for (const s of Object.keys(this.streetBet)) this.streetBet[s] = 0;
    this.high = 0;
    this.beginStreet(STREETS[index + 1], this.left(this.spec.button));
  }

  toCall(seat) {
    return Math.min(this.high - this.streetBet[seat], this.start[seat] - this.committed[seat]);
  }

  /** [min, max] totals of a bet or raise by `seat` now, or null when it may not raise. */
  raiseBounds(seat) {
    const high = this.high;
    const mine = this.streetBet[seat];
    const most = mine + this.start[seat] - this.committed[seat];
    if (most <= high) return null;
    if (this.acted.has(seat) && high - mine < this.minIncr) return null;
    const answer = [...this.canStillAct()].some(
      (s) => s !== seat && this.streetBet[s] + this.start[s] - this.committed[s] > high);
    if (!answer) return null;
    const minTo = Math.min(most, high + Math.max(this.minIncr, this.spec.big_blind));
    if (!this.spec.pot_limit) return [minTo, most];
    const potTo = high + this.pot + (high - mine);
    return [minTo, Math.min(most, Math.max(minTo, potTo))];
  }

  /** `Hand.legal` in console:{t}'s shape: fold, check, call, bet/raise {min, max}. */
  legal(seat = this.toAct) {
    const none = { fold: false, check: false, call: null, bet: null, raise: null };
    if (seat === null || seat !== this.toAct || !STREETS.includes(this.street)) return none;
    const toCall = this.toCall(seat);
    const b = this.raiseBounds(seat);
    const span = b ? { min: b[0], max: b[1] } : null;
    const opened = this.highBet > 0;
    return {
      fold: toCall > 0,
      check: toCall === 0,
      call: toCall > 0 ? toCall : null,
      bet: opened ? null : span,
      raise: opened ? span : null,
    };
  }

  /** The chips the action adds, or a Refusal with the hub's code. */
  check(seat, kind, amount) {
    if (!STREETS.includes(this.street)) throw new Refusal('hand_over', `the hand is at ${this.street}: no more actions`);
    if (!Number.isInteger(seat) || seat < 1 || seat > this.spec.seats) throw new Refusal('unknown_seat', `seat ${seat} is not a seat`);
    if (!BETTING.has(kind)) throw new Refusal('not_allowed', `unknown action ${kind}`);
    if (seat !== this.toAct) throw new Refusal('out_of_turn', `${this.toAct === null ? 'nobody' : `seat ${this.toAct}`} is to act, not seat ${seat}`);
    const toCall = this.toCall(seat);
    if (kind === 'fold' || kind === 'check') {
      if (amount !== null && amount !== undefined && amount !== 0) throw new Refusal('bad_amount', `a ${kind} carries no amount`);
      if (kind === 'fold' && toCall === 0) throw new Refusal('not_allowed', 'nothing to call: check instead of folding');
      if (kind === 'check' && toCall > 0) throw new Refusal('not_allowed', `seat ${seat} faces ${toCall} to call: cannot check`);
      return 0;
    }
    if (kind === 'call') {
      if (toCall === 0) throw new Refusal('not_allowed', 'nothing to call: check instead');
      if (amount !== null && amount !== undefined && amount !== toCall) throw new Refusal('bad_amount', `a call adds ${toCall} chips, not ${amount}`);
      return toCall;
    }
    const high = this.high;
    if (kind === 'bet' && high > 0) throw new Refusal('not_allowed', `there is already a bet of ${high}: raise instead`);
    if (kind === 'raise' && high === 0) throw new Refusal('not_allowed', 'there is no bet on this street to raise: bet instead');
    if (!Number.isInteger(amount) || amount <= 0) throw new Refusal('bad_amount', `a ${kind} needs a positive amount`);
    const b = this.raiseBounds(seat);
    if (!b) throw new Refusal('not_allowed', `seat ${seat} may only call or fold now, not ${kind}`);
    const mine = this.streetBet[seat];
    const most = mine + this.start[seat] - this.committed[seat];
    if (amount > most) throw new Refusal('over_cap', `${kind} to ${amount} is more than seat ${seat} has: all-in is ${most}`);
    if (amount > b[1]) throw new Refusal('over_pot_limit', `${kind} to ${amount} is over the pot limit ${b[1]}`);
    if (amount < b[0]) throw new Refusal('below_min_raise', `${kind} to ${amount} is below the minimum ${b[0]}`);
    return amount - mine;
  }

  act(seat, kind, amount = null) {
    const added = this.check(seat, kind, amount);
    const high = this.high;
    const street = this.street;
    if (kind === 'fold') this.folded.add(seat);
    else this.put(seat, added);
    this.actions.push({ seat, kind, added, to: this.streetBet[seat], street });
    this.acted.add(seat);
    this.pending.delete(seat);
    if (kind === 'bet' || kind === 'raise') {
      this.minIncr = Math.max(this.minIncr, this.streetBet[seat] - high);
      const again = this.canStillAct();
      again.delete(seat);
      this.pending = again;
    }
    this.advance(seat);
  }

  /** The hand's actions as console:{t} lists them. */
  actionItems() {
    return this.actions.map((a, i) => ({
      i, seat: a.seat, kind: a.kind,
      amount: a.kind === 'bet' || a.kind === 'raise' ? a.to : (a.added || null),
      street: a.street,
    }));
  }
}

const clone = (x) => JSON.parse(JSON.stringify(x));
export const WINNERS_PROMPT = 'Betting is over: declare the winners.';

/** The pad's entries legal now in a poker hand, as the hub's `PokerGame.pad_now` lists them
 * (console:{t}'s `pad`; hub/domain/games/holdem/game.py): the seat to act's betting, the winners
 * once the betting is over, and the dealer's card errors until the hand is settled. */
export function pokerPad(hand) {
  if (hand.street === 'complete') return [];
  const out = [];
  const seat = hand.toAct;
  const offer = (key, fields, prompt = null) => out.push({ key, prompt, fields });
  if (seat !== null) {
    const legal = hand.legal(seat);
    const who = { choices: [seat] };
    if (legal.fold) offer('fold', { seat: who });
    if (legal.check) offer('check', { seat: who });
    if (legal.call) offer('call', { seat: who, amount: { value: legal.call } });
    const span = legal.bet || legal.raise;
    if (span) offer(legal.bet ? 'bet' : 'raise', { seat: who, amount: { min: span.min, max: span.max } });
  } else if (hand.street === 'showdown') {
    const live = [];
    for (let s = 1; s <= hand.spec.seats; s++) if (!hand.folded.has(s)) live.push(s);
    offer('win', { seats: { choices: live } }, WINNERS_PROMPT);
  }
  const seats = [];
  for (let s = 1; s <= hand.spec.seats; s++) seats.push(s);
  offer('exposed', { seat: { choices: seats }, card: { choices: [1, 2] } });
  offer('early', {});
  return out;
}

/** Copy the hand's moving fields into a console state. */
function showHand(view, hand) {
  const voluntary = hand.actions.filter((a) => BETTING.has(a.kind)).length;
  view.street = hand.street;
  view.pot = hand.pot;
  view.to_act = hand.toAct;
  view.legal = hand.legal();
  view.actions = hand.actionItems();
  view.winners_needed = hand.street === 'showdown';
  view.pad = pokerPad(hand).filter((o) => !BETTING.has(o.key)); // (console:{t}'s: the betting is `legal`)
  view.misdeal_window = view.status === 'in_progress' && voluntary < MISDEAL_ACTIONS;
  if (hand.street === 'complete' && view.status !== 'reopened') { // (a reopened one: confirm)
    view.status = 'complete';
    view.misdeal_window = false;
  }
  for (const seat of view.seats || []) {
    const s = seat.seat;
    if (!(s in hand.committed)) continue;
    seat.stack = hand.start[s] - hand.committed[s];
    seat.bet = hand.street === 'complete' ? 0 : hand.streetBet[s];
    seat.folded = hand.folded.has(s);
    seat.all_in = hand.allIn.has(s);
  }
}

/**
 * The console state after `events` (entries not answered yet, in order) on the hub's last
 * state `s`, worked out with the hub's rules: what the pad shows offline. Null when it cannot
 * be worked out here (another game, an entry other than start, an action or the winners): the
 * pad then waits for the hub. Each entry moves the table once (`moves`).
 */
export function project(s, events) {
  if (!s || !Number.isInteger(s.moves) || !s.rules) return null;
  const view = clone(s);
  let hand = null;
  try {
    if (view.status === 'in_progress' || view.status === 'reopened') hand = Hand.fromState(view);
    for (const e of events) {
      if (e.type === 'start') {
        if (view.status === 'in_progress' || view.status === 'reopened') return null;
        if (e.deal !== view.next_deal || !view.rules.next_button) return null;
        const order = view.schedule || [];
        hand = new Hand({ ...view.rules, button: view.rules.next_button });
        view.deal = e.deal;
        view.button = view.rules.next_button;
        view.status = 'in_progress';
        view.dispute = null;
        const at = order.indexOf(e.deal);
        view.next_deal = at >= 0 && at + 1 < order.length ? order[at + 1] : null;
        view.rules = { ...view.rules, next_button: null }; // the next deal's: not known here
        showHand(view, hand);
      } else if (BETTING.has(e.type)) {
        if (!hand || e.seat !== hand.toAct) return null;
        hand.act(e.seat, e.type, e.type === 'bet' || e.type === 'raise' ? e.amount : (e.amount ?? null));
        showHand(view, hand);
      } else if (e.type === 'win') {
        if (!hand || hand.street !== 'showdown') return null;
        view.status = 'complete';
        view.street = 'complete';
        view.winners_needed = false;
        view.to_act = null;
        view.legal = hand.legal(null);
        view.pad = [];
        view.misdeal_window = false;
        hand = null;
      } else {
        return null;
      }
      view.moves += 1;
    }
  } catch (err) {
    if (err instanceof Refusal) return null;
    throw err;
  }
  return view;
}
