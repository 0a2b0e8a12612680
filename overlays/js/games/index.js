// The overlays' game modules, one per game of the hub, picked by the payload's `game`
// (docs/protocol.md): what a page draws differently for a game is the game module's to say,
// never an `if (game === ...)` of the page. The hub serves the list (`GAMES`, with its topics:
// each game's `overlay`, hub/domain/games/registry.py) and each is imported from it; a game
// without a module (or whose module fails to load) is drawn as hold'em is, and each module is
// read over hold'em's (./holdem.js), so a member it leaves out is hold'em's. Each declares:
//   pieces  what every table holds alike ("Same cards, same seat")
//   unit    the heading of the aggregate column (a mahjong hand scores points)
//   chip    a unit of its chip-score in words, as a TD's penalty names it ("500 chips";
//           MCR's "16 hand points": a penalty's `chips` at a mahjong table)
// and may declare (else the page draws hold'em's: cards, streets, equity):
//   renderTable(section, table), renderCompare(section, compare, rows, $)  the game draws its
//           own live table / split screen instead of the poker felt (MCR's: ../mahjong.js)
//   renderDeskCard(table, payload, {last, swings, team})  the commentator desk's card of a
//           table (null: hold'em's card)
//   showdownLines(showdown, who)  the showdown package's lines (../showdown.js; null: not its
//           package: asked of every game's module, as a public table names no game)
//   streetLabel(payload), shortLabels  the names of its streets or rounds ({street} alone on
//           the split screen; RPS Poker's "Gambit", "Gam"; hold'em's streetLabel: "Flop")
//   seatParts(seat, table) -> {top, below}, renderBoard(board, table), toActText(table)  the
//           live table's seat box (in place of hole cards), board and who it waits for
//   deskBoard(payload), deskHole(seat, payload), deskChances(payload, seat)  the desk's board,
//           a seat's hand (no hole cards) and its two chance cells
//   panelParts(row) -> {hole, score, line}  the split screen panel's seat (RPS Poker's)
//   piece  {is(code), draw(code, size), text(code)}: its pieces drawn where a card would be
//           (../ui.js `card`, `cardText`; piecepack hold'em's tiles: ../piecepack.js)
//   padFields  {kind: mount}: the table console's widgets for its own field kinds
//           (consolepad.js; mount(container, ctx) -> {value(), problem(), reset(), wide?},
//           ctx = {field, limits, state, changed}, made the latest render's on each redraw;
//           `wide`: drawn beside the form's fields, taking the whole console, as MCR's tile
//           picker is; else in the form's rows, as RPS Poker's throws are; docs/console.md)
//   refusalTitles  {code: heading}: the console's heading of a refusal code of its own
//           ("Wrong throws"); the page's own headings are every game's
// Shared pages (overlays/js outside games/) import no game's helper module (mahjong.js,
// rps.js, piecepack.js, tilepicker.js, throwpad.js) and name no game or a game's own field
// kind: tests/test_overlay_game_modules.py.
import { GAMES } from '../topics.js';
import holdem from './holdem.js';
import { addPieces } from '../ui.js';

async function loaded(name, path) {
  try {
    return [name, { ...holdem, ...(await import(`./${path}`)).default }];
  } catch (err) {
    console.error(`game ${name}: its overlay module ${path} did not load`, err);
    return [name, holdem];
  }
}

const MODULES = new Map(await Promise.all(Object.entries(GAMES).map(([n, p]) => loaded(n, p))));
for (const game of MODULES.values()) if (game.piece) addPieces(game.piece);

/** The game module of a payload (or of anything carrying `game`); hold'em's by default. */
export function gameOf(payload) {
  return (payload && MODULES.get(payload.game)) || holdem;
}

/** Every game's module (each once): what a page asks of a piece of a payload that names no game. */
export function everyGame() {
  return [...new Set([...MODULES.values(), holdem])];
}

/** Note the payload's game on <body data-game> (styles follow it: css/piecepack.css...). */
export function markGame(payload) {
  if (payload && typeof payload.game === 'string') document.body.dataset.game = payload.game;
}
