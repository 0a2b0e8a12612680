// The overlays' game modules, one per game of the hub, picked by the payload's `game`
// (docs/protocol.md): what a page draws differently for a game is the game module's to say,
// never an `if (game === ...)` of the page. The hub serves the list (`GAMES`, with its topics:
// each game's `overlay`, hub/domain/games/registry.py) and each is imported from it; a game
// without a module (or whose module fails to load) is drawn as hold'em is. Each declares:
//   pieces  what every table holds alike ("Same cards, same seat")
//   unit    the heading of the aggregate column (a mahjong hand scores points)
//   throws  seats throw against a dealer (RPS Poker, rps.js): rounds, scores, the dealer's row
//   renderTable(section, table), renderCompare(section, compare, rows, $)  (optional) the game
//           draws its own live table / split screen instead of the poker felt (mahjong.js)
//   padFields  (optional) {kind: mount}: the table console's widgets for its own field kinds
//           (consolepad.js; mount(container, ctx) -> {value(), problem(), reset()}, ctx =
//           {field, limits, state, changed}; docs/console.md)
import { GAMES } from '../topics.js';
import holdem from './holdem.js';

async function loaded(name, path) {
  try {
    return [name, (await import(`./${path}`)).default];
  } catch (err) {
    console.error(`game ${name}: its overlay module ${path} did not load`, err);
    return [name, holdem];
  }
}

const MODULES = new Map(await Promise.all(Object.entries(GAMES).map(([n, p]) => loaded(n, p))));

/** The game module of a payload (or of anything carrying `game`); hold'em's by default. */
export function gameOf(payload) {
  return (payload && MODULES.get(payload.game)) || holdem;
}

/** Note the payload's game on <body data-game> (styles follow it: css/piecepack.css...). */
export function markGame(payload) {
  if (payload && typeof payload.game === 'string') document.body.dataset.game = payload.game;
}
