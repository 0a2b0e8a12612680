// Session clock: level (or break), the blinds, time left in the level and in the session.
// The hub sends the clock only when it changes (the operator starts, pauses or adjusts it,
// or a level ends) with the time left as of `as_of` (hub wall-clock seconds); while it runs,
// this page counts down itself. Machines on air keep their clocks in sync (NTP).
import { mountOverlay } from './duplicast.js';
import { fmtInt } from './ui.js';
import { topic } from './topics.js';

const gfx = document.querySelector('[data-testid="gfx"]');
const q = (id) => document.querySelector(`[data-testid="${id}"]`);
const STATUS = { not_started: 'Not started', running: '', paused: 'Paused', over: 'Time is up' };
let clock = null;

export function mmss(seconds) {
  const s = Math.max(0, Math.ceil(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

function left(value) {
  if (!clock || clock.status !== 'running') return value;
  return value - Math.max(0, Date.now() / 1000 - clock.as_of);
}

function paint() {
  if (!clock) return;
  q('clock-time').textContent = mmss(left(clock.level_left));
  q('clock-session').textContent = `Session ${mmss(left(clock.session_left))}`;
}

function render({ states }) {
  clock = states.get(topic('clock')) || null;
  if (!clock || !clock.configured) return false;
  gfx.dataset.status = clock.status;
  gfx.dataset.break = String(Boolean(clock.break));
  q('clock-name').textContent = clock.name;
  q('clock-blinds').textContent = clock.break ? 'Break' : `Blinds ${fmtInt(clock.small_blind)} / ${fmtInt(clock.big_blind)}`;
  q('clock-status').textContent = STATUS[clock.status] ?? '';
  q('clock-next').textContent = clock.next ? `Next: ${clock.next.name}` : 'Last level';
  paint();
  return true;
}

setInterval(paint, 250);
mountOverlay({ slot: 'clock', topics: () => [topic('clock')], render });
