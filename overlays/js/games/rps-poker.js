// RPS Poker (docs/rps-poker.md): every table plays against the same dealer's throws; seats show
// their throws and score against him (../rps.js).
export default { name: 'rps-poker', pieces: 'dealer throws', unit: 'Chips', throws: true };
