// Reads JSON lines {spec, actions} on stdin; answers, per line, the state of overlays/js/rules.js's
// Hand after each prefix of the actions: to_act, street, pot, committed, legal, the pad's entries
// legal now (pokerPad), or the refusal.
// Used by tests/test_console_rules_js.py.
import { createInterface } from 'node:readline';
import { Hand, Refusal, pokerPad } from '../../overlays/js/rules.js';

const seen = (hand) => ({
  to_act: hand.toAct,
  street: hand.street,
  pot: hand.pot,
  committed: Object.values(hand.committed),
  legal: hand.legal(),
  pad: pokerPad(hand),
});

const rl = createInterface({ input: process.stdin });
rl.on('line', (line) => {
  const { spec, actions, probes } = JSON.parse(line);
  const out = [];
  try {
    const hand = new Hand(spec);
    out.push(seen(hand));
    for (const [seat, kind, amount] of actions) {
      hand.act(seat, kind, amount);
      out.push(seen(hand));
    }
    const refused = (probes || []).map(([seat, kind, amount]) => {
      try {
        hand.check(seat, kind, amount);
        return null;
      } catch (err) {
        if (!(err instanceof Refusal)) throw err;
        return err.code;
      }
    });
    process.stdout.write(`${JSON.stringify({ states: out, refused })}\n`);
  } catch (err) {
    process.stdout.write(`${JSON.stringify({ error: String(err && err.stack || err) })}\n`);
  }
});
