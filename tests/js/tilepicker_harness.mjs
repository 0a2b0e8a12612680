// tests/js/tilepicker.html: mounts the picker as a pad would (a store kept across re-mounts,
// changed()), shows value() and problem(), and gives the test `window.picker` and `remount()`.
import { mount } from '/overlays/js/tilepicker.js';

const field = document.querySelector('[data-testid="field"]');
const answer = document.querySelector('[data-testid="answer"]');
const store = {};
let changes = 0;

function show() {
  const value = window.picker.value();
  const lines = value
    ? [`concealed ${value.concealed.join(' ')}`,
      ...value.melds.map((m) => `${m.kind} ${m.tiles.join(' ')}`),
      `winning ${value.winning}`, `flags ${(value.flags || []).join(', ') || '–'}`]
    : [`value() null: ${window.picker.problem() || 'no hand'}`];
  answer.textContent = `The hand sent with the result:\n${lines.join('\n')}`;
}

function changed() {
  changes += 1;
  show();
}

window.remount = (value, fresh = false) => {
  if (fresh) delete store.state;
  const label = 'Seat 2: the winning hand';
  window.picker = mount(field, { changed, store, value, field: { name: 'hand', kind: 'mcr_hand', label } });
  show();
};
window.changes = () => changes;
window.remount();
