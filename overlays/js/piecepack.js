// Piecepack tiles (Dual Piecepacks Poker, docs/piecepack.md) drawn where a card would be.
// A tile code is rank, group, link: "Nbs" is the null of black spades, "5wh" the five of white
// hearts. The black group is a dark tile with filled suits (♠ ♥ ♦ ♣), the white group a light
// tile with outlined suits (♤ ♡ ♢ ♧); hearts and diamonds red on both. Payloads of a piecepack
// tournament carry game: "piecepack-holdem" (docs/protocol.md; the game's module:
// games/piecepack-holdem.js).

const SYMBOLS = {
  bs: '\u2660', bh: '\u2665', bd: '\u2666', bc: '\u2663',
  ws: '\u2664', wh: '\u2661', wd: '\u2662', wc: '\u2667',
};
const TILE = /^[NA2-5][bw][shdc]$/;

/** True for a tile code ("Nbs"); card codes have two characters. */
export function isTile(code) {
  return typeof code === 'string' && TILE.test(code);
}

/** A tile as text, as the seed writes it: "Nbs" -> "N♠", "5wh" -> "5♡". */
export function tileText(code) {
  return `${code[0]}${SYMBOLS[code.slice(1)]}`;
}

/** A rendered tile, in the card's box (same sizes: '', 'sm', 'lg'), so layouts do not move. */
export function tile(code, size = '') {
  const group = code[1] === 'b' ? 'black-group' : 'white-group';
  const red = code[2] === 'h' || code[2] === 'd';
  const node = document.createElement('span');
  node.className = `card tile ${group} ${red ? 'red' : 'black'} ${size} enter`.replace(/ +/g, ' ');
  node.dataset.card = code;
  node.dataset.tile = code;
  node.title = tileText(code);
  const rank = document.createElement('span');
  rank.className = 'rank';
  rank.textContent = code[0];
  const suit = document.createElement('span');
  suit.className = 'suit';
  suit.textContent = SYMBOLS[code.slice(1)];
  node.append(rank, suit);
  return node;
}
