// Piecepack hold'em (docs/piecepack.md): hold'em with the 48 tiles, each drawn in a card's box
// wherever a card would be (`piece`: ../piecepack.js).
import { isTile, tile, tileText } from '../piecepack.js';

export default { name: 'piecepack-holdem', pieces: 'tiles', unit: 'Chips', piece: { is: isTile, draw: tile, text: tileText } };
