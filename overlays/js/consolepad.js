// What the table console draws from `console:{table}`: the schedule strip, the seats, the last
// actions and the pad, which offers only what the hub says is legal now. Every entry goes through
// act.submit (console.js), which stores and sends it; nothing here talks to the hub.
//
// The pad is driven by the game's declarations (issue #32, docs/console.md): its entries (`PADS`,
// each with typed fields: served once by the hub with its topics, `GET /api/topics`, and kept by
// the service worker) and `pad` in console:{t} (those legal now, each field within its
// constraints: the seats still to throw, the winners' choices...), computed by the hub; the seat
// to act's betting is `to_act` and `legal` (a `to_act` entry is never in `pad`). Start,
// undo, void, reopen and confirm are every game's. An entry's fields are drawn by kind: the game's
// overlay module may bring its own widgets (`padFields: {kind: mount}`, games/index.js), else the
// page's own (`FIELDS` below). There is no `if game` here.
import { amountProblem, keyIn, presets } from './amounts.js';
import { gameOf } from './games/index.js';
import { PADS } from './topics.js';
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

/** The heading of a refusal, in an official's words: the game module's for a code of its own
 * (`refusalTitles`, games/index.js), else the page's. */
export function refusalTitle(code, payload) {
  return (gameOf(payload).refusalTitles || {})[code] || REFUSAL_TITLES[code] || 'Refused by the hub';
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
  const picking = ui.mode === 'confirm';
  const hidden = secretsIn(s);
  return (s.seats || []).map((x) => {
    const flags = [x.folded ? 'folded' : null, x.all_in ? 'all-in' : null, x.seat === s.to_act ? 'to act' : null];
    const secret = hidden.get(x.seat);
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
      el('span', { class: 'flag' }, flags.filter(Boolean).join(' · '),
        secret ? el('span', { class: 'chip hidden', dataset: { testid: 'hidden-chip' } }, `${secret} · hidden`) : ''),
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
  // A form with a wide widget (its api's `wide`: MCR's tile picker) takes the whole console,
  // its fields beside the widget (css/console.css `body[data-wide]`): the page never scrolls.
  document.body.dataset.wide = String(body.classList.contains('wide'));
  // While an entry waits every button is off; a mounted widget's outlive this render, so those
  // turned off here are turned on again once nothing waits (the widget's own stay as it set them).
  for (const b of body.querySelectorAll(wait ? 'button:not(:disabled)' : 'button[data-waiting]')) {
    b.disabled = Boolean(wait);
    if (wait) b.dataset.waiting = '';
    else delete b.dataset.waiting;
  }
  out.push(body);
  return out;
}

/** The game's entries legal now (`pad`), each with its declaration (the game's in `PADS`)
 * and its fields' constraints now (`limits`). The seat to act's betting is not among them: it
 * is `to_act` and `legal` (`bettingPad`). */
export function offers(s) {
  const declared = new Map((PADS[s.game] || []).map((e) => [e.key, e]));
  const out = [];
  for (const o of s.pad || []) {
    const entry = declared.get(o.key);
    if (entry && !entry.to_act) out.push({ ...entry, prompt: o.prompt || null, limits: o.fields || {} });
  }
  return out;
}

/** Seat -> the label of a secret field it has entered ("Throws"): shown as hidden. */
function secretsIn(s) {
  const out = new Map();
  for (const o of offers(s)) {
    for (const f of o.fields) {
      if (!f.secret) continue;
      for (const seat of (o.limits[f.name] || {}).done || []) out.set(seat, f.label);
    }
  }
  return out;
}

function padBody(s, ui, act, teams) {
  const open = OPEN.has(s.status);
  if (ui.mode === 'confirm') return winnersPad(s, ui, act);
  if (ui.mode === 'reopen') return reopenPad(s, act);
  const now = open ? offers(s) : [];
  if (ui.mode === 'entry') {
    const offer = now.find((o) => o.key === ui.entry);
    if (offer) return entryForm(s, offer, ui, act);
  }
  if (!open) return betweenHands(s, ui, act);
  const parts = [];
  const betting = s.to_act !== null && s.to_act !== undefined && s.legal; // (only while offered)
  if (betting) parts.push(...bettingPad(s, ui, act, teams));
  const main = now.filter((o) => !o.to_act && !o.correction);
  for (const o of main) {
    if (o.prompt) parts.push(el('p', { class: 'who', dataset: { testid: `${o.key}-prompt` } }, o.prompt));
    parts.push(button(o.key, o.fields.length ? `${o.label}…` : o.label, () => openEntry(s, o, act), { cls: 'primary' }));
  }
  if (!main.length && !betting && s.status === 'reopened') {
    parts.push(el('p', { class: 'who' }, `Deal ${s.deal} is reopened and its betting is over.`),
      button('confirm', `Confirm deal ${s.deal}`, () => act.submit({ type: 'confirm', deal: s.deal }), { cls: 'primary' }));
  }
  parts.push(corrections(s, ui, act, now.filter((o) => o.correction)));
  return el('div', { class: 'padbody' }, parts);
}

/** An entry tapped: sent at once when it has nothing to fill in, else its form. */
function openEntry(s, o, act) {
  if (!o.fields.length) act.submit(eventOf(s, o, {}));
  else act.set({ mode: 'entry', entry: o.key, values: {}, mounted: {} });
}

function eventOf(s, o, values) {
  return { type: o.type, deal: s.deal, ...(o.fixed || {}), ...values };
}

const isEmpty = (v) => v === null || v === undefined || v === '' || (Array.isArray(v) && !v.length);

/** The seats a field may name: its constraints' choices, else every seat of the table. */
function seatChoices(s, limits) {
  return limits && Array.isArray(limits.choices) ? limits.choices : (s.seats || []).map((x) => x.seat);
}

/** A field's value now: a mounted widget's own, else what the page keeps (a seat awaited is
 * the default of a seat field; the first card of a card field). */
function valueOf(s, o, f, ui) {
  const w = ui.mounted && ui.mounted[f.name];
  if (w) return w.api.value();
  const v = ui.values ? ui.values[f.name] : undefined;
  if (v !== undefined) return v;
  const limits = o.limits[f.name] || {};
  if (f.kind === 'seat' && (limits.awaited || []).length) return limits.awaited[0];
  if (f.kind === 'card') return (limits.choices || [1])[0];
  return null;
}

function formValues(s, o, ui) {
  const out = {};
  for (const f of o.fields) {
    const v = valueOf(s, o, f, ui);
    if (!isEmpty(v) && v !== false) out[f.name] = v;
  }
  return out;
}

/** Why the form cannot be sent yet, in words (null: it can). */
function formProblem(s, o, ui, values) {
  for (const f of o.fields) {
    const w = ui.mounted && ui.mounted[f.name];
    const problem = w ? w.api.problem() : null;
    if (problem) return problem;
    const given = !isEmpty(values[f.name]);
    if (f.either) {
      const other = o.fields.find((x) => x.name === f.either);
      if (!given && isEmpty(values[f.either])) return `choose the ${f.label.toLowerCase()} or ${other ? other.label.toLowerCase() : f.either}`;
      continue;
    }
    if (!given && !f.optional) return `${f.label}: still to enter`;
  }
  return null;
}

/** What a value reads as on the send button (a secret one never shows). */
function spoken(f, v) {
  if (f.secret) return `${f.label.toLowerCase()} hidden`;
  if (f.kind === 'seat') return f.label === 'Seat' ? `seat ${v}` : `${f.label.toLowerCase()} seat ${v}`;
  if (f.kind === 'seats') return `seat ${v.join(', ')}`;
  if (f.kind === 'flag') return f.label.toLowerCase();
  if (f.kind === 'card') return `card ${v}`;
  if (typeof v === 'string' || typeof v === 'number') return `${f.label.toLowerCase()} ${v}`;
  return f.label.toLowerCase();
}

function entryForm(s, o, ui, act) {
  ui.values = ui.values || {};
  ui.mounted = ui.mounted || {};
  const send = button(`${o.key}-send`, o.label, () => {
    const values = formValues(s, o, ui);
    if (formProblem(s, o, ui, values) !== null) return;
    // An entry some seats still wait for stays open for the next one (each seat's throws).
    const again = o.fields.some((f) => ((o.limits[f.name] || {}).awaited || []).length > 1);
    act.submit(eventOf(s, o, values), again ? o.key : null);
  }, { cls: 'primary' });
  const why = el('div', { class: 'why', dataset: { testid: `${o.key}-why` } });
  const update = () => {
    const values = formValues(s, o, ui);
    const problem = formProblem(s, o, ui, values);
    send.disabled = problem !== null;
    send.textContent = problem === null
      ? `${o.label}: ${o.fields.filter((f) => !isEmpty(values[f.name])).map((f) => spoken(f, values[f.name])).join(', ')}`
      : o.label;
    why.textContent = problem || '';
    why.classList.toggle('bad', problem !== null);
  };
  const set = (name, value, either) => {
    const values = { ...ui.values, [name]: value };
    if (either) values[either] = null; // the other of two alternatives
    act.set({ values });
  };
  const widgets = [];
  const rows = o.fields.map((f) => {
    // (a mounted widget outlives this render: its ctx is made the latest render's, so it
    // calls the form's update of the latest one and reads the constraints now)
    const ctx = { field: f, limits: o.limits[f.name] || {}, state: s, changed: () => ui.refresh && ui.refresh() };
    const custom = gameOf(s).padFields && gameOf(s).padFields[f.kind];
    const mount = custom || MOUNTED[f.kind];
    if (mount) {
      let w = ui.mounted[f.name];
      if (w) Object.assign(w.ctx, ctx);
      else {
        const box = el('div', { class: `field ${f.kind}`, dataset: { testid: `field-${f.name}` } });
        w = { box, ctx, api: mount(box, ctx) };
        ui.mounted[f.name] = w;
      }
      const row = el('div', { class: 'formrow' }, el('span', { class: 'flabel' }, f.label + (f.optional ? ' (optional)' : '')), w.box);
      if (w.api.wide) widgets.push(row); // (beside the fields: MCR's tile picker)
      return w.api.wide ? null : row;
    }
    const draw = FIELDS[f.kind] || FIELDS.text;
    return el('div', { class: 'formrow' }, el('span', { class: 'flabel' }, f.label + (f.optional ? ' (optional)' : '')),
      draw(s, o, f, valueOf(s, o, f, ui), (v) => set(f.name, v, f.either)));
  });
  const fields = [
    o.prompt ? el('p', { class: 'who' }, o.prompt) : null,
    ...rows.filter((r) => r !== null),
    why,
    el('div', { class: 'row' }, send,
      button('cancel', 'Back', () => act.set({ mode: 'play', values: {}, mounted: {}, picked: new Set() }))),
  ];
  const body = widgets.length
    ? el('div', { class: 'padbody form wide', dataset: { testid: `${o.key}-form` } },
      el('div', { class: 'formcol' }, ...fields), el('div', { class: 'formcol widgets' }, ...widgets))
    : el('div', { class: 'padbody form', dataset: { testid: `${o.key}-form` } }, ...fields);
  ui.refresh = update;
  update();
  return body;
}

const pickId = (f, seat) => (f.name === 'seat' || f.name === 'seats' ? `pick-${seat}` : `${f.name}-${seat}`);

/** The page's own field kinds, drawn afresh on every render from the value it keeps. */
const FIELDS = {
  seat(s, o, f, value, set) {
    const limits = o.limits[f.name] || {};
    const awaited = new Set(limits.awaited || []);
    const done = new Set(o.fields.flatMap((g) => (g.secret ? (o.limits[g.name] || {}).done || [] : [])));
    return el('div', { class: 'picker' }, seatChoices(s, limits).map((seat) => {
      const x = seatById(s, seat) || {};
      const note = done.has(seat) ? ' · hidden' : awaited.has(seat) ? ' · to enter' : '';
      return el('button', {
        class: `big pickseat${value === seat ? ' picked' : ''}`,
        dataset: { testid: pickId(f, seat) },
        onclick: () => set(seat),
      }, `Seat ${seat}`, el('small', {}, ` ${x.player || ''}${note}`));
    }));
  },
  seats(s, o, f, value, set) {
    const picked = new Set(value || []);
    return el('div', { class: 'picker' }, seatChoices(s, o.limits[f.name]).map((seat) => {
      const x = seatById(s, seat) || {};
      return el('button', {
        class: `big pickseat${picked.has(seat) ? ' picked' : ''}`,
        dataset: { testid: pickId(f, seat) },
        onclick: () => {
          const next = new Set(picked);
          if (next.has(seat)) next.delete(seat);
          else next.add(seat);
          set([...next].sort((a, b) => a - b));
        },
      }, `Seat ${seat}`, el('small', {}, ` ${x.player || ''}`));
    }));
  },
  card(s, o, f, value, set) {
    const names = { 1: 'First card', 2: 'Second card' };
    return el('div', { class: 'row' }, ((o.limits[f.name] || {}).choices || [1, 2]).map((c) =>
      button(`card-${c}`, names[c] || `Card ${c}`, () => set(c), { cls: value === c ? 'picked' : '' })));
  },
  flag(s, o, f, value, set) {
    return el('div', { class: 'row' }, button(`flag-${f.name}`, f.label, () => set(value ? null : true), { cls: value ? 'picked' : '' }));
  },
  text(s, o, f, value, set) {
    return el('p', { class: 'hint' }, `${f.label}: this page cannot enter a field of kind “${f.kind}”.`);
  },
};

/** Widgets that keep their own state across renders (a text being typed keeps its focus), with
 * the interface of a game module's `padFields`: mount(container, ctx) -> {value, problem,
 * reset, wide?}. */
const MOUNTED = {
  amount(box, ctx) {
    const input = el('input', { type: 'number', inputmode: 'numeric', min: 0, class: 'num', dataset: { testid: `${ctx.field.name}-input` } });
    input.addEventListener('input', ctx.changed);
    box.append(input);
    return {
      value: () => (input.value === '' ? null : Number(input.value)),
      problem: () => (input.value !== '' && !(Number.isInteger(Number(input.value)) && Number(input.value) >= 0) ? `${ctx.field.label}: a whole number` : null),
      reset: () => { input.value = ''; },
    };
  },
};

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

function corrections(s, ui, act, offered) {
  const armed = ui.armed === 'void';
  return el('div', { class: 'row small' },
    button('undo', 'Undo last', () => act.submit({ type: 'undo', deal: s.deal })),
    s.misdeal_window
      ? button('void', armed ? `Tap again: void deal ${s.deal}` : 'Misdeal (void)', () =>
        (armed ? act.submit({ type: 'void', deal: s.deal }) : act.set({ armed: 'void' })), { cls: armed ? 'danger' : '' })
      : null,
    ...offered.map((o) => button(o.key, o.fields.length ? `${o.label}…` : o.label, () => openEntry(s, o, act))));
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
