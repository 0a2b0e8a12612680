// Reads JSON lines, each a list of MCR `hand`s; answers, per line, the list of
// overlays/js/tilepicker.js's `handProblem` for them (a sentence or null).
// Used by tests/test_tilepicker_js.py.
import { createInterface } from 'node:readline';
import { handProblem } from '../../overlays/js/tilepicker.js';

const rl = createInterface({ input: process.stdin });
rl.on('line', (line) => {
  try {
    const problems = JSON.parse(line).map((hand) => handProblem(hand));
    process.stdout.write(`${JSON.stringify({ problems })}\n`);
  } catch (err) {
    process.stdout.write(`${JSON.stringify({ error: String((err && err.stack) || err) })}\n`);
  }
});
