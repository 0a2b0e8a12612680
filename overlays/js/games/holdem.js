// Texas hold'em (hub/domain/games/holdem): cards, chips. The default of games/index.js.
export default { name: 'holdem', pieces: 'cards', unit: 'Chips' };
