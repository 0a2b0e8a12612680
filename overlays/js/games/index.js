// The overlays' game modules, one per game of the hub (hub/domain/games/registry.py), picked by
// the payload's `game` (docs/protocol.md): what a page draws differently for a game is the
// game module's to say, never an `if (game === ...)` of the page. A game without a module here
// (a third party's) is drawn as hold'em is. Each module declares:
//   pieces  what every table holds alike ("Same cards, same seat")
//   unit    the heading of the aggregate column (a mahjong hand scores points)
//   throws  seats throw against a dealer (RPS Poker, rps.js): rounds, scores, the dealer's row
//   renderTable(section, table), renderCompare(section, compare, rows, $)  (optional) the game
//           draws its own live table / split screen instead of the poker felt (mahjong.js)
import holdem from './holdem.js';
import mcr from './mcr.js';
import piecepack from './piecepack-holdem.js';
import rps from './rps-poker.js';

const MODULES = new Map([holdem, piecepack, mcr, rps].map((m) => [m.name, m]));

/** The game module of a payload (or of anything carrying `game`); hold'em's by default. */
export function gameOf(payload) {
  return (payload && MODULES.get(payload.game)) || holdem;
}

/** Note the payload's game on <body data-game> (styles follow it: css/piecepack.css...). */
export function markGame(payload) {
  if (payload && typeof payload.game === 'string') document.body.dataset.game = payload.game;
}
