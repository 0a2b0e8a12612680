// The tournament director's part of the operator panel (issue #22, #30.7): rulings (void,
// penalty, withdraw of a penalty, confirm, roster fix), each with the official's name (`by`,
// kept for the browser session) and a reason, repeated in words for a last look before it is
// sent as the hub's websocket op, the form emptied once the hub took it (unless typed in
// since); the corrections log (who, what, why; a penalty's Withdraw button); alerts when a
// dispute or a refusal arrives (refusals grouped per console and cause, with a count), with an
// optional beep.
import { el, keepChildren } from './ui.js';
import { topic } from './topics.js';
import { gameOf } from './games/index.js';

const BY_KEY = 'duplicast.td.by'; // sessionStorage: the official, for this browser session
const SOUND_KEY = 'duplicast.td.sound'; // localStorage: "on" when the alert beeps

// Each ruling's form: [name, input type, placeholder]; the reason is every form's last field.
export const RULINGS = {
  void: { label: 'Void', fields: [['table', 'number'], ['deal', 'number']], reason: true },
  penalty: {
    label: 'Penalty',
    fields: [['table', 'number'], ['seat', 'number'], ['chips', 'number'], ['points', 'number']],
    reason: true,
  },
  withdraw: { label: 'Withdraw', fields: [['penalty', 'number', 'penalty no.']], reason: true },
  confirm: { label: 'Confirm', fields: [['table', 'number'], ['deal', 'number'], ['seats', 'text', 'winners 2,5']], reason: false },
  roster: {
    label: 'Fix roster',
    fields: [['team', 'text', 'team id'], ['seat', 'number'], ['player', 'text', 'player as shown'], ['name', 'text', 'new name'], ['team_name', 'text', 'team name'], ['colour', 'text', '#rrggbb']],
    reason: false,
  },
};

/** The ruling's op from its form values (strings): numbers parsed, empty fields left out. */
export function rulingOp(op, values, by) {
  const out = { op };
  for (const [name, type] of RULINGS[op].fields) {
    const raw = String(values[name] ?? '').trim();
    if (raw === '') continue;
    if (name === 'seats') out.seats = raw.split(',').map((x) => Number.parseInt(x, 10)).filter(Number.isFinite);
    else out[name] = type === 'number' ? Number(raw) : raw;
  }
  const reason = String(values.reason ?? '').trim();
  if (reason) out.reason = reason;
  out.by = String(by ?? '').trim();
  return out;
}

// The names the page shows for its number fields (a refusal names what the TD sees).
const LABELS = { table: 'Table', deal: 'Deal', seat: 'Seat', chips: 'Chips', points: 'Points', penalty: 'Penalty number' };

/** What the game calls a unit of a penalty's `chips` (its chip-score): "chip"; an MCR
 * hand's "hand point" (games/*.js `chip`). `payload`: anything carrying the game (ops). */
export function chipWord(payload) {
  return gameOf(payload).chip || 'chip';
}

const capital = (s) => s.charAt(0).toUpperCase() + s.slice(1);

/** Why a ruling cannot be sent as it is (null when it can): the official first. `chip`: the
 * game's word for a penalty's chips (`chipWord`). */
export function rulingProblem(op, command, chip = 'chip') {
  const label = (name) => (name === 'chips' ? capital(`${chip}s`) : LABELS[name] || name);
  if (!command.by) return 'Enter the official\'s name first: every ruling says who made it.';
  if (RULINGS[op].reason && !command.reason) return `A ${op} needs a reason.`;
  for (const [name, type] of RULINGS[op].fields) {
    if (type !== 'number' || command[name] === undefined) continue;
    const value = command[name];
    const low = name === 'chips' || name === 'points' ? 0 : 1;
    if (!Number.isSafeInteger(value) || value < low) return `${label(name)} must be a whole number, ${low} or more.`;
  }
  if (op === 'withdraw') return Number.isInteger(command.penalty) ? null : 'Which penalty? (its number in the log)';
  if (op !== 'roster' && !Number.isInteger(command.table)) return 'Which table?';
  if (op === 'penalty' && !command.chips && !command.points) return `A penalty takes off ${chip}s or points: give one above 0.`;
  return null;
}

function plural(n, word) {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * The ruling in words, as the TD confirms it before it is sent: "Penalty 500 chips to table 3
 * seat 2 (BRA), by TD Ana?". `team(table, seat)`: the team code in that seat, if known;
 * `penalty(n)`: the n-th penalty of the log, if known.
 */
export function rulingText(op, c, team = () => null, penalty = () => null, chip = 'chip') {
  const by = `, by ${c.by}?`;
  const seatOf = (t, s) => {
    const code = team(t, s);
    return `table ${t} seat ${s}${code ? ` (${code})` : ''}`;
  };
  if (op === 'penalty') {
    const parts = [];
    if (c.chips) parts.push(plural(c.chips, chip));
    if (c.points) parts.push(plural(c.points, 'point'));
    return `Penalty ${parts.join(' and ')} to ${seatOf(c.table, c.seat)}${by}`;
  }
  if (op === 'withdraw') {
    const p = penalty(c.penalty);
    const what = p ? ` (${[p.chips ? plural(p.chips, chip) : '', p.points ? plural(p.points, 'point') : ''].filter(Boolean).join(' and ')} to ${seatOf(p.table, p.seat)})` : '';
    return `Withdraw penalty ${c.penalty}${what}${by}`;
  }
  if (op === 'void') return `Void deal ${c.deal ?? '(the hand in play)'} at table ${c.table}${by}`;
  if (op === 'confirm') {
    const who = c.seats && c.seats.length ? `winners seat ${c.seats.join(', ')}` : 'the hub\'s winners';
    return `Confirm deal ${c.deal} at table ${c.table}: ${who}${by}`;
  }
  const changes = ['name', 'team_name', 'colour'].filter((k) => c[k]).map((k) => `${words(k)} ${c[k]}`);
  return `Fix roster of ${c.team}: ${changes.join(', ') || 'nothing'}${by}`;
}

/** The team code in (table, seat) from a standings payload (null if it does not say). */
export function teamIn(standings, table, seat) {
  for (const view of ['running', 'like_for_like']) {
    for (const block of standings?.[view]?.seats || []) {
      if (block.seat !== seat) continue;
      const row = (block.rows || []).find((r) => r.table === table);
      if (row && row.team) return row.team;
    }
  }
  return null;
}

/** Corrections and penalties in one log, newest first: {at, table, deal, what, who, why}. */
export function correctionLog(ops) {
  const rows = (ops.corrections || []).map((c) => ({
    at: c.at,
    table: c.table,
    deal: c.deal,
    type: c.type,
    penalty: c.penalty,
    seat: c.seat,
    what: c.type === 'roster' ? `roster ${c.what || ''}`.trim() : `${words(c.type)}${c.seat ? ` S${c.seat}` : ''}`,
    who: c.by || c.console || '–',
    why: c.reason || '',
  }));
  for (const p of ops.penalties || []) {
    const parts = [];
    if (p.chips) parts.push(plural(p.chips, chipWord(ops)));
    if (p.points) parts.push(`${p.points} pt`);
    const no = p.id ? ` #${p.id}` : '';
    const gone = p.withdrawn ? ' (withdrawn)' : '';
    rows.push({ at: p.at, table: p.table, type: 'penalty', id: p.id, withdrawn: Boolean(p.withdrawn), what: `penalty${no} S${p.seat} −${parts.join(', −')}${gone}`, who: p.by || '–', why: p.reason || '' });
  }
  for (const r of rows) if (r.type === 'withdraw') r.what = `withdraw penalty #${r.penalty ?? '?'}${r.seat ? ` S${r.seat}` : ''}`;
  return rows.sort((a, b) => (b.at || 0) - (a.at || 0));
}

function words(s) {
  return String(s ?? '').replace(/_/g, ' ');
}

/** One line of the corrections box: where, what, who, why, when; a penalty still counting has
 * a Withdraw button when `withdraw(id)` is given (it fills the TD's withdraw form). */
export function correctionRow(c, ago, withdraw) {
  const where = c.table === undefined ? (c.type === 'roster' ? 'roster' : '') : `T${c.table}${c.deal ? ` · D${c.deal}` : ''}`;
  const when = [el('span', { class: 'td-ago', dataset: { testid: 'correction-age' } }, ago(c.at))];
  if (c.type === 'penalty' && c.id && !c.withdrawn && withdraw) {
    when.push(' ', el('button', { class: 'td-withdraw', dataset: { testid: 'withdraw-penalty', penalty: String(c.id) }, onclick: () => withdraw(c.id) }, 'Withdraw…'));
  }
  return el('tr', { dataset: { testid: 'correction-row', type: c.type } },
    el('td', {}, where), el('td', { class: 'warn', dataset: { testid: 'correction-what' } }, c.what),
    el('td', { dataset: { testid: 'correction-who' } }, c.who),
    el('td', { dataset: { testid: 'correction-why' } }, c.why || '–'), el('td', {}, ...when));
}

/** The corrections box's rows in `tbody` (then `tail`, e.g. "+ 3 earlier"): a row stays while
 * its correction is unchanged, only its age ("12 s ago", every second another) written in
 * place: a Withdraw pressed before a feed update and released after it is a click still. */
export function drawCorrections(tbody, rows, ago, withdraw, tail = []) {
  keepChildren(tbody, [...rows.map((c) => correctionRow(c, ago, withdraw)), ...tail], { live: '.td-ago' });
}

/** What is new in `ops` since the last call: disputes and refusals, as alert texts; a
 * refusal's `group` is its console and cause (one alert row per group, with a count). */
export function newArrivals(seen, ops) {
  const out = [];
  for (const d of ops.disputes || []) {
    const key = `d:${d.table}:${d.deal}`;
    if (seen.has(key)) continue;
    seen.add(key);
    // a game's own words when it has them (mahjong: the typed fan against the tiles')
    const what = d.reason || `declared ${(d.declared || []).join(', ') || '–'}, the cards say ${(d.computed || []).join(', ') || '–'}`;
    out.push({ kind: 'dispute', text: `Dispute at table ${d.table}, deal ${d.deal}: ${what}` });
  }
  for (const r of ops.rejections || []) {
    const key = `r:${r.console}:${r.seq}:${r.at}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ kind: 'refusal', group: `${r.console}|${r.code}`, text: `Refused at table ${r.table ?? '?'} (${r.console} #${r.seq}): ${words(r.code)} — ${r.message || ''}` });
  }
  return out;
}

function beep() {
  const Ctx = globalThis.AudioContext || globalThis.webkitAudioContext;
  if (!Ctx) return;
  beep.ctx = beep.ctx || new Ctx();
  const ctx = beep.ctx;
  const osc = ctx.createOscillator();
  const gain = ctx.createGain();
  osc.frequency.value = 880;
  gain.gain.setValueAtTime(0.2, ctx.currentTime);
  gain.gain.exponentialRampToValueAtTime(0.001, ctx.currentTime + 0.3);
  osc.connect(gain).connect(ctx.destination);
  osc.start();
  osc.stop(ctx.currentTime + 0.3);
}

/**
 * The TD's section in `root` and the alerts in `alertsRoot`. Returns {reply(frame), rule(op,
 * values)}: feed it the hub's `ok`/`error` answers; `rule` sends a ruling with the official's
 * name (the disputes table's Confirm uses it).
 */
export function mountTd(client, root, alertsRoot) {
  const status = el('div', { class: 'td-status', dataset: { testid: 'td-status' } });
  const by = el('input', { name: 'by', class: 'td-by', placeholder: 'official (TD) name', dataset: { testid: 'td-by' } });
  by.value = sessionStorage.getItem(BY_KEY) || '';
  by.addEventListener('input', () => sessionStorage.setItem(BY_KEY, by.value.trim()));
  const sound = el('input', { type: 'checkbox', dataset: { testid: 'td-sound' } });
  sound.checked = localStorage.getItem(SOUND_KEY) === 'on';
  sound.addEventListener('change', () => {
    localStorage.setItem(SOUND_KEY, sound.checked ? 'on' : 'off');
    if (sound.checked) beep(); // a click unlocks the page's audio, and says what it sounds like
  });
  const say = (text, ok) => {
    status.textContent = text;
    status.dataset.state = ok ? 'ok' : 'error';
  };
  let pending = null; // the op last sent, until the hub answers it
  let sentFrom = null; // [form, values]: the form it was sent from, emptied once the hub took
  // it if it still holds exactly the values sent (what the TD typed since is theirs)
  let standings = null; // the live standings: who sits where (the confirmation names the team)
  let penalties = []; // the desk's penalties (a withdrawal's confirmation repeats the penalty)
  let chip = 'chip'; // the game's word for a penalty's chips (the desk's `game`: chipWord)
  client.subscribe(topic('standings'), (s) => { standings = s; });
  // The last look: the ruling in words, sent only on "Yes, send".
  const ask = el('span', { class: 'td-ask-text', dataset: { testid: 'td-ask-text' } });
  const yes = el('button', { class: 'primary', type: 'button', dataset: { testid: 'td-ask-yes' } }, 'Yes, send');
  const no = el('button', { type: 'button', dataset: { testid: 'td-ask-no' } }, 'Cancel');
  const asking = el('div', { class: 'td-ask', hidden: true, dataset: { testid: 'td-ask' } }, ask, yes, no);
  let waiting = null; // [op, command, [form, values]] to send on "Yes"
  const dismiss = () => { waiting = null; asking.hidden = true; };
  no.addEventListener('click', () => { dismiss(); say('Not sent.', false); });
  yes.addEventListener('click', () => {
    if (!waiting) return;
    const [op, command, from] = waiting;
    dismiss();
    if (!client.send(command)) {
      say('Not sent: the link to the hub is down.', false);
      return;
    }
    pending = op;
    sentFrom = from;
    say(`${RULINGS[op].label}: sent…`, true);
  });

  function rule(op, values, form = null) {
    const command = rulingOp(op, values, by.value);
    const problem = rulingProblem(op, command, chip);
    if (problem) {
      say(problem, false);
      if (!command.by) by.focus();
      return false;
    }
    waiting = [op, command, form ? [form, { ...values }] : null];
    ask.textContent = rulingText(op, command, (t, s) => teamIn(standings, t, s), (n) => penalties.find((p) => p.id === n), chip);
    asking.hidden = false;
    say('', true);
    yes.focus();
    return true;
  }

  const forms = Object.entries(RULINGS).map(([op, spec]) => {
    const inputs = spec.fields.map(([name, type, hint]) => el('input', { name, type: type === 'number' ? 'number' : 'text', placeholder: hint || name }));
    const reason = el('input', { name: 'reason', class: 'td-reason', placeholder: spec.reason ? 'reason (required)' : 'reason' });
    const form = el('form', { class: 'td-form', dataset: { testid: `td-${op}` } },
      el('span', { class: 'name' }, spec.label), ...inputs, reason,
      el('button', { class: 'primary', type: 'submit', dataset: { testid: `td-${op}-send` } }, spec.label));
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const values = Object.fromEntries([...inputs, reason].map((i) => [i.name, i.value]));
      rule(op, values, form);
    });
    return form;
  });
  const formOf = Object.fromEntries(forms.map((f, i) => [Object.keys(RULINGS)[i], f]));
  root.replaceChildren(
    el('h2', {}, 'Tournament director'),
    el('div', { class: 'td-head' }, el('label', {}, 'Official ', by), el('label', { class: 'td-sound' }, sound, ' beep on alerts')),
    el('div', { class: 'td-forms' }, ...forms), asking, status);

  // Alerts: every dispute or refusal that arrives after the panel opened, until acknowledged;
  // refusals of one console for one cause are one row with a count (a console refused 3,000
  // times is one alert to acknowledge, not 3,000). In order of arrival, a new one at the
  // bottom of the column (pinned at the top of the desk) and a group's count raised in place:
  // no arrival moves a row, so an Acknowledge lands on the alert the TD aimed at, and the TD
  // works down the list oldest first. (New ones on top pushed every row down under a pending
  // click: the press and the release fell on two rows and acknowledged none, or the wrong one.)
  const seen = new Set();
  const groups = new Map(); // refusal group -> {item, text, count}
  let primed = false;
  client.subscribe(topic('ops'), (ops) => {
    penalties = ops.penalties || [];
    chip = chipWord(ops);
    formOf.penalty.querySelector('input[name="chips"]').placeholder = `${chip}s`;
    const fresh = newArrivals(seen, ops);
    if (!primed) {
      primed = true; // what was there when the panel opened is on the desk already
      return;
    }
    for (const a of fresh) {
      const group = a.group ? groups.get(a.group) : null;
      if (group) {
        group.count += 1;
        group.text.textContent = a.text;
        group.count_el.textContent = `×${group.count}`; // (in place: the row does not move)
        continue;
      }
      const text = el('span', {}, a.text);
      const count = el('span', { class: 'td-count', dataset: { testid: 'td-alert-count' } }, '×1');
      const item = el('div', { class: `td-alert ${a.kind}`, dataset: { testid: 'td-alert', kind: a.kind } },
        ...(a.group ? [count] : []), text,
        el('button', { dataset: { testid: 'td-ack' }, onclick: () => { item.remove(); if (a.group) groups.delete(a.group); } }, 'Acknowledge'));
      if (a.group) groups.set(a.group, { item, text, count_el: count, count: 1 });
      alertsRoot.append(item);
    }
    if (fresh.length && sound.checked) beep();
  });

  return {
    rule,
    /** Fill the withdraw form with penalty `id` and ask for the reason. */
    withdraw(id) {
      const form = formOf.withdraw;
      form.querySelector('input[name="penalty"]').value = String(id);
      form.querySelector('input[name="reason"]').focus();
    },
    reply(frame) {
      if (!frame.op || !(frame.op in RULINGS) || frame.op !== pending) return false;
      pending = null;
      const [form, values] = sentFrom || [null, null];
      sentFrom = null;
      if (frame.type === 'ok') {
        say(`${RULINGS[frame.op].label}: done${frame.queued ? ' (queued)' : ''}.`, true);
        // no ruling repeats itself; a form the TD typed in since it was sent is left as it is
        const inputs = form ? [...form.querySelectorAll('input')] : [];
        if (inputs.every((input) => input.value === String(values[input.name] ?? ''))) for (const input of inputs) input.value = '';
      } else say(`${RULINGS[frame.op].label} refused — ${words(frame.code)}: ${frame.message || ''}`, false);
      return true;
    },
  };
}
