// The tournament director's part of the operator panel (issue #22): rulings (void, penalty,
// confirm, roster fix), each with the official's name (`by`, kept for the browser session) and
// a reason, sent as the hub's websocket ops; the corrections log (who, what, why); alerts when
// a dispute or a refusal arrives, with an optional beep.
import { el } from './ui.js';

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

/** Why a ruling cannot be sent as it is (null when it can): the official first. */
export function rulingProblem(op, command) {
  if (!command.by) return 'Enter the official\'s name first: every ruling says who made it.';
  if (RULINGS[op].reason && !command.reason) return `A ${op} needs a reason.`;
  if (op !== 'roster' && !Number.isInteger(command.table)) return 'Which table?';
  return null;
}

/** Corrections and penalties in one log, newest first: {at, table, deal, what, who, why}. */
export function correctionLog(ops) {
  const rows = (ops.corrections || []).map((c) => ({
    at: c.at,
    table: c.table,
    deal: c.deal,
    type: c.type,
    what: c.type === 'roster' ? `roster ${c.what || ''}`.trim() : `${words(c.type)}${c.seat ? ` S${c.seat}` : ''}`,
    who: c.by || c.console || '–',
    why: c.reason || '',
  }));
  for (const p of ops.penalties || []) {
    const parts = [];
    if (p.chips) parts.push(`${p.chips} chips`);
    if (p.points) parts.push(`${p.points} pt`);
    rows.push({ at: p.at, table: p.table, type: 'penalty', what: `penalty S${p.seat} −${parts.join(', −')}`, who: p.by || '–', why: p.reason || '' });
  }
  return rows.sort((a, b) => (b.at || 0) - (a.at || 0));
}

function words(s) {
  return String(s ?? '').replace(/_/g, ' ');
}

/** One line of the corrections box: where, what, who, why, when. */
export function correctionRow(c, ago) {
  const where = c.table === undefined ? (c.type === 'roster' ? 'roster' : '') : `T${c.table}${c.deal ? ` · D${c.deal}` : ''}`;
  return el('tr', { dataset: { testid: 'correction-row', type: c.type } },
    el('td', {}, where), el('td', { class: 'warn', dataset: { testid: 'correction-what' } }, c.what),
    el('td', { dataset: { testid: 'correction-who' } }, c.who),
    el('td', { dataset: { testid: 'correction-why' } }, c.why || '–'), el('td', {}, ago(c.at)));
}

/** What is new in `ops` since the last call: disputes and refusals, as alert texts. */
export function newArrivals(seen, ops) {
  const out = [];
  for (const d of ops.disputes || []) {
    const key = `d:${d.table}:${d.deal}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ kind: 'dispute', text: `Dispute at table ${d.table}, deal ${d.deal}: declared ${(d.declared || []).join(', ') || '–'}, the cards say ${(d.computed || []).join(', ') || '–'}` });
  }
  for (const r of ops.rejections || []) {
    const key = `r:${r.console}:${r.seq}:${r.at}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ kind: 'refusal', text: `Refused at table ${r.table ?? '?'} (${r.console} #${r.seq}): ${words(r.code)} — ${r.message || ''}` });
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

  function rule(op, values) {
    const command = rulingOp(op, values, by.value);
    const problem = rulingProblem(op, command);
    if (problem) {
      say(problem, false);
      if (!command.by) by.focus();
      return false;
    }
    if (!client.send(command)) {
      say('Not sent: the link to the hub is down.', false);
      return false;
    }
    pending = op;
    say(`${RULINGS[op].label}: sent…`, true);
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
      if (rule(op, values)) reason.value = '';
    });
    return form;
  });
  root.replaceChildren(
    el('h2', {}, 'Tournament director'),
    el('div', { class: 'td-head' }, el('label', {}, 'Official ', by), el('label', { class: 'td-sound' }, sound, ' beep on alerts')),
    el('div', { class: 'td-forms' }, ...forms), status);

  // Alerts: every dispute or refusal that arrives after the panel opened, until acknowledged.
  const seen = new Set();
  let primed = false;
  client.subscribe('ops', (ops) => {
    const fresh = newArrivals(seen, ops);
    if (!primed) {
      primed = true; // what was there when the panel opened is on the desk already
      return;
    }
    for (const a of fresh) {
      const item = el('div', { class: `td-alert ${a.kind}`, dataset: { testid: 'td-alert', kind: a.kind } },
        el('span', {}, a.text),
        el('button', { dataset: { testid: 'td-ack' }, onclick: () => item.remove() }, 'Acknowledge'));
      alertsRoot.prepend(item);
    }
    if (fresh.length && sound.checked) beep();
  });

  return {
    rule,
    reply(frame) {
      if (!frame.op || !(frame.op in RULINGS) || frame.op !== pending) return false;
      pending = null;
      if (frame.type === 'ok') say(`${RULINGS[frame.op].label}: done${frame.queued ? ' (queued)' : ''}.`, true);
      else say(`${RULINGS[frame.op].label} refused — ${words(frame.code)}: ${frame.message || ''}`, false);
      return true;
    },
  };
}
