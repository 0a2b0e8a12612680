// What the table console draws from `console:{table}`: the schedule strip, the seats, the last
// actions and the pad, which offers only what the hub says is legal now. Every entry goes through
// act.submit (console.js), which stores and sends it; nothing here talks to the hub.
import { amountProblem, keyIn, presets } from './amounts.js';
import { el, fmtInt, teamStyle } from './ui.js';

const REFUSAL_TITLES = {
  out_of_turn: 'Not that player’s turn',
  not_allowed: 'Not allowed now',
  bad_amount: 'Wrong amount',
  below_min_raise: 'Below the minimum raise',
  over_pot_limit: 'Over the pot limit',
  over_cap: 'More than the player has',
  hand_not_started: 'No hand is in progress',
  hand_in_progress: 'A hand is in progress',
  hand_over: 'The betting is over',
  wrong_deal: 'Wrong deal',
  bad_winner: 'Those winners cannot be right',
  not_disputed: 'Nothing to confirm',
  unknown_seat: 'No such seat',
  unknown_deal: 'No such deal',
  unknown_console: 'This console may not enter for this table',
  time_up: 'The session’s time is up',
  stage_not_open: 'This deal may not start yet',
  bad_schema: 'The hub could not read the entry',
  taken: 'Another tablet uses this console',
  stale: 'The screen had changed',
  storage: 'The tablet’s storage is full',
};

/** The heading of a refusal, in an official's words. */
export function refusalTitle(code) {
  return REFUSAL_TITLES[code] || 'Refused by the hub';
}

/** An entry in words, for the line that says what waits: "seat 3 raise to 550". */
export function describe(event) {
  const e = event || {};
  const seat = e.seat !== undefined ? `seat ${e.seat} ` : '';
  switch (e.type) {
    case 'start': return `start of deal ${e.deal}`;
    case 'bet': return `${seat}bet ${fmtInt(e.amount)}`;
    case 'raise': return `${seat}raise to ${fmtInt(e.amount)}`;
    case 'call': return `${seat}call ${fmtInt(e.amount)}`;
    case 'win': return `winners: seat ${(e.seats || []).join(', ')}`;
    case 'confirm': return `confirm of deal ${e.deal}`;
    case 'reopen': return `reopen of deal ${e.deal}`;
    case 'void': return `misdeal of deal ${e.deal}`;
    case 'exposed': return `${seat}card ${e.card} exposed`;
    case 'early': return 'board card early';
    default: return `${seat}${words(e.type)}`;
  }
}

/** "in_progress" -> "in progress". */
export function words(s) {
  return s === undefined || s === null ? '' : String(s).replace(/_/g, ' ');
}

const OPEN = new Set(['in_progress', 'reopened']);
const FINISHED = new Set(['complete', 'voided', 'disputed']);

/** A seat's team chip: the team's code and colour from the standings, else its id. */
function teamChip(row, teams) {
  const known = teams && teams.get(String(row.team));
  const t = known || { code: row.code, colour: row.colour };
  const chip = el('span', { class: 'tcode' }, String(t.code ?? row.team ?? '–').toUpperCase());
  for (const [k, v] of Object.entries(teamStyle(t.colour))) chip.style.setProperty(k, v);
  return chip;
}

export function renderSchedule(s) {
  const list = s.schedule || [];
  const next = list.indexOf(s.next_deal);
  return list.map((d, i) => {
    const cls = d === s.deal ? 'cur' : d === s.next_deal ? 'next' : next === -1 || i < next ? 'done' : '';
    return el('span', { class: `sd ${cls}`, dataset: { deal: String(d) } }, String(d));
  });
}

export function renderSeats(s, ui, act, teams) {
  const picking = ['win', 'confirm', 'exposed'].includes(ui.mode);
  return (s.seats || []).map((x) => {
    const flags = [x.folded ? 'folded' : null, x.all_in ? 'all-in' : null, x.seat === s.to_act ? 'to act' : null];
    const row = el(
      'div',
      {
        class: `seat${x.folded ? ' folded' : ''}${x.seat === s.to_act ? ' toact' : ''}${ui.picked.has(x.seat) ? ' picked' : ''}`,
        dataset: { testid: 'seat', seat: String(x.seat) },
        onclick: picking ? () => pick(ui, act, x.seat) : null,
      },
      el('span', { class: 'no' }, String(x.seat)),
      el('span', { class: 'btn-d' }, x.seat === s.button ? 'D' : ''),
      teamChip(x, teams),
      el('span', { class: 'player' }, x.player || ''),
      el('span', { class: 'stack', dataset: { testid: 'stack' } }, fmtInt(x.stack)),
      el('span', { class: 'bet' }, x.bet ? fmtInt(x.bet) : ''),
      el('span', { class: 'flag' }, flags.filter(Boolean).join(' · ')),
    );
    return row;
  });
}

export function renderLog(s) {
  const rows = (s.actions || []).slice(-8).reverse();
  return rows.map((a) =>
    el('li', {}, `${words(a.street)} · seat ${a.seat ?? '–'} ${words(a.kind)}${a.amount ? ` ${fmtInt(a.amount)}` : ''}`));
}

function pick(ui, act, seat) {
  const picked = new Set(ui.mode === 'exposed' ? [] : ui.picked);
  if (picked.has(seat)) picked.delete(seat);
  else picked.add(seat);
  act.set({ picked });
}

/** A large pad button; `testid` names it for tests and screenshots. */
const BY_KEY = 'duplicast.console.by'; // sessionStorage: the official who rules a dispute

function button(testid, label, onclick, { cls = '', disabled = false } = {}) {
  return el('button', { class: `big ${cls}`, dataset: { testid }, disabled: disabled || null, onclick }, label);
}

function seatById(s, seat) {
  return (s.seats || []).find((x) => x.seat === seat) || null;
}

export function renderPad(s, ui, act, wait, teams) {
  const out = [];
  if (wait) out.push(el('p', { class: 'wait', dataset: { testid: 'waiting' } }, wait));
  const body = padBody(s, ui, act, teams);
  if (wait) {
    for (const b of body.querySelectorAll('button')) b.disabled = true;
  }
  out.push(body);
  return out;
}

function padBody(s, ui, act, teams) {
  const open = OPEN.has(s.status);
  if (ui.mode === 'win' || ui.mode === 'confirm') return winnersPad(s, ui, act);
  if (ui.mode === 'exposed') return exposedPad(s, ui, act);
  if (ui.mode === 'reopen') return reopenPad(s, act);
  if (!open) return betweenHands(s, ui, act);
  const parts = [];
  if (s.to_act !== null && s.to_act !== undefined && s.legal) parts.push(...bettingPad(s, ui, act, teams));
  else if (s.winners_needed) parts.push(el('p', { class: 'who' }, 'Betting is over: declare the winners.'),
    button('win', 'Declare winners…', () => act.set({ mode: 'win', picked: new Set() }), { cls: 'primary' }));
  else if (s.status === 'reopened') parts.push(el('p', { class: 'who' }, `Deal ${s.deal} is reopened and its betting is over.`),
    button('confirm', `Confirm deal ${s.deal}`, () => act.submit({ type: 'confirm', deal: s.deal }), { cls: 'primary' }));
  parts.push(corrections(s, ui, act));
  return el('div', { class: 'padbody' }, parts);
}

function bettingPad(s, ui, act, teams) {
  const seat = seatById(s, s.to_act);
  const legal = s.legal;
  const kind = legal.bet ? 'bet' : 'raise';
  const range = legal.bet || legal.raise || null;
  const base = { deal: s.deal, seat: s.to_act };
  const who = el('p', { class: 'who', dataset: { testid: 'to-act' } },
    `Seat ${s.to_act}`, seat ? el('span', {}, ' ', teamChip(seat, teams), ` ${seat.player || ''}`) : '', ' to act',
    legal.call ? el('span', { class: 'tocall' }, ` · ${fmtInt(legal.call)} to call`) : '');
  const row = el('div', { class: 'row' },
    legal.fold ? button('fold', 'Fold', () => act.submit({ ...base, type: 'fold' }), { cls: 'fold' }) : null,
    legal.check ? button('check', 'Check', () => act.submit({ ...base, type: 'check' }), { cls: 'go' }) : null,
    legal.call ? button('call', `Call ${fmtInt(legal.call)}`, () => act.submit({ ...base, type: 'call', amount: legal.call }), { cls: 'go' }) : null);
  if (!range) return [who, row, el('p', { class: 'hint' }, `No ${legal.check ? 'bet' : 'raise'} is possible: call or fold.`)];
  const keyed = ui.amount === '' ? null : Number(ui.amount);
  const problem = amountProblem(keyed, range, seat, kind);
  const pre = presets(range, seat);
  const fill = (v) => () => act.set({ amount: String(v) });
  const presetRow = el('div', { class: 'row' },
    button('min', `Min ${fmtInt(pre.min)}`, fill(pre.min)),
    button('pot', `Pot ${fmtInt(pre.pot)}`, fill(pre.pot)),
    button('allin', pre.allIn === null ? 'All-in: above the pot limit' : `All-in ${fmtInt(pre.allIn)}`, fill(pre.allIn), { disabled: pre.allIn === null }));
  const keys = el('div', { class: 'keys' },
    ['1', '2', '3', '4', '5', '6', '7', '8', '9', 'clear', '0', 'back'].map((k) =>
      el('button', { class: 'key', dataset: { testid: `key-${k}` }, onclick: () => act.set({ amount: keyIn(ui.amount, k) }) },
        k === 'clear' ? 'C' : k === 'back' ? '⌫' : k)));
  const label = `${kind === 'bet' ? 'Bet' : 'Raise to'} ${keyed === null ? '…' : fmtInt(keyed)}`;
  const amountBox = el('div', { class: 'amountbox' },
    el('div', { class: 'amount', dataset: { testid: 'amount' } }, ui.amount === '' ? '–' : fmtInt(keyed)),
    el('div', { class: `why${problem ? ' bad' : ''}`, dataset: { testid: 'amount-why' } },
      problem || `${kind} ${fmtInt(range.min)}–${fmtInt(range.max)}`),
    button('send-amount', label, () => {
      if (amountProblem(keyed, range, seat, kind) === null) act.submit({ ...base, type: kind, amount: keyed });
    }, { cls: 'primary', disabled: problem !== null }));
  return [who, row, presetRow, el('div', { class: 'keypad' }, keys, amountBox)];
}

function corrections(s, ui, act) {
  const armed = ui.armed === 'void';
  return el('div', { class: 'row small' },
    button('undo', 'Undo last', () => act.submit({ type: 'undo', deal: s.deal })),
    s.misdeal_window
      ? button('void', armed ? `Tap again: void deal ${s.deal}` : 'Misdeal (void)', () =>
        (armed ? act.submit({ type: 'void', deal: s.deal }) : act.set({ armed: 'void' })), { cls: armed ? 'danger' : '' })
      : null,
    button('exposed', 'Card exposed…', () => act.set({ mode: 'exposed', picked: new Set(), card: 1 })),
    button('early', 'Board card early', () => act.submit({ type: 'early', deal: s.deal })));
}

function betweenHands(s, ui, act) {
  const parts = [];
  if (s.next_deal) {
    parts.push(button('start', `Start deal ${s.next_deal}`, () => act.submit({ type: 'start', deal: s.next_deal }), { cls: 'primary huge' }));
  } else {
    parts.push(el('p', { class: 'who' }, 'Every deal of this table’s schedule has been played.'));
  }
  if (s.status === 'disputed') {
    parts.push(button('confirm-pick', `Confirm winners of deal ${s.deal}…`, () => act.set({ mode: 'confirm', picked: new Set() }), { cls: 'warnbtn' }));
  }
  const row = [];
  if (FINISHED.has(s.status) && s.deal) {
    row.push(button('reopen', `Reopen deal ${s.deal}`, () => act.submit({ type: 'reopen', deal: s.deal })));
  }
  if (played(s).some((d) => d !== s.deal)) {
    row.push(button('reopen-pick', 'Reopen an earlier deal…', () => act.set({ mode: 'reopen' })));
  }
  if (row.length) parts.push(el('div', { class: 'row' }, row));
  return el('div', { class: 'padbody' }, parts);
}

/** The deals this table has played, in its order: the schedule before the next deal. */
function played(s) {
  const list = s.schedule || [];
  const next = s.next_deal ? list.indexOf(s.next_deal) : -1;
  return next === -1 ? list.slice() : list.slice(0, next);
}

function reopenPad(s, act) {
  return el('div', { class: 'padbody' },
    el('p', { class: 'who' }, 'Which finished deal goes back into play for a correction?'),
    el('div', { class: 'picker' }, played(s).map((d) =>
      button(`reopen-${d}`, `Deal ${d}`, () => act.submit({ type: 'reopen', deal: d })))),
    button('cancel', 'Back', () => act.set({ mode: 'play' })));
}

function seatPicker(s, ui, act, eligible) {
  return el('div', { class: 'picker' }, (s.seats || []).filter(eligible).map((x) =>
    el('button', {
      class: `big pickseat${ui.picked.has(x.seat) ? ' picked' : ''}`,
      dataset: { testid: `pick-${x.seat}` },
      onclick: () => pick(ui, act, x.seat),
    }, `Seat ${x.seat}`, el('small', {}, ` ${x.player || ''}`))));
}

function winnersPad(s, ui, act) {
  const seats = [...ui.picked].sort((a, b) => a - b);
  const list = seats.length ? seats.map((x) => `seat ${x}`).join(', ') : 'no seat chosen';
  const cancel = button('cancel', 'Back', () => act.set({ mode: 'play', picked: new Set() }));
  if (ui.mode === 'confirm') {
    // A dispute is ruled by an official, named as the operator's confirm names one (`by`,
    // issue #30 item 7): both buttons wait for the name, kept for the browser session.
    const by = () => String(ui.by ?? sessionStorage.getItem(BY_KEY) ?? '').trim();
    const pickBtn = button('confirm-seats', `Confirm winners: ${list}`, () => by() && act.submit({ type: 'confirm', deal: s.deal, seats, by: by() }), { cls: 'primary', disabled: !seats.length || !by() });
    const hubBtn = button('confirm-hub', 'Keep the hub’s winners', () => by() && act.submit({ type: 'confirm', deal: s.deal, by: by() }), { disabled: !by() });
    const name = el('input', { class: 'by', name: 'by', maxlength: 64, placeholder: 'official’s name (required)', autocomplete: 'name', dataset: { testid: 'confirm-by' } });
    name.value = by();
    name.addEventListener('input', () => {
      ui.by = name.value; // (no render: the field keeps its focus)
      sessionStorage.setItem(BY_KEY, name.value.trim());
      pickBtn.disabled = !seats.length || !by();
      hubBtn.disabled = !by();
    });
    return el('div', { class: 'padbody' },
      el('p', { class: 'who' }, `Deal ${s.deal}: tap the winners the official rules, or keep the hub’s.`),
      seatPicker(s, ui, act, (x) => !x.folded),
      el('label', { class: 'row' }, 'Ruled by ', name),
      el('div', { class: 'row' }, pickBtn, hubBtn),
      cancel);
  }
  return el('div', { class: 'padbody' },
    el('p', { class: 'who' }, 'Tap every seat that wins a pot (a split: more than one).'),
    seatPicker(s, ui, act, (x) => !x.folded),
    el('div', { class: 'row' },
      button('win-send', `Winners: ${list}`, () => act.submit({ type: 'win', deal: s.deal, seats }), { cls: 'primary', disabled: !seats.length }),
      cancel));
}

function exposedPad(s, ui, act) {
  const seat = [...ui.picked][0] ?? null;
  return el('div', { class: 'padbody' },
    el('p', { class: 'who' }, 'A hole card was exposed by the dealer: which seat, which card?'),
    seatPicker(s, ui, act, () => true),
    el('div', { class: 'row' },
      [1, 2].map((c) => button(`card-${c}`, c === 1 ? 'First card' : 'Second card', () => act.set({ card: c }), { cls: ui.card === c ? 'picked' : '' }))),
    el('div', { class: 'row' },
      button('exposed-send', seat === null ? 'Choose the seat' : `Seat ${seat}: card ${ui.card} exposed`,
        () => act.submit({ type: 'exposed', deal: s.deal, seat, card: ui.card }), { cls: 'primary', disabled: seat === null }),
      button('cancel', 'Back', () => act.set({ mode: 'play', picked: new Set() }))));
}
