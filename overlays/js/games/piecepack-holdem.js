// Piecepack hold'em (docs/piecepack.md): hold'em with the 48 tiles, drawn by ../piecepack.js.
export default { name: 'piecepack-holdem', pieces: 'tiles', unit: 'Chips' };
