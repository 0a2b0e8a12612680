// Duplicate MCR mahjong (docs/mahjong.md): walls of tiles, hands scored in points. Its table and
// split screen are ../mahjong.js's, drawn for payloads carrying `mahjong`.
export default { name: 'mcr', pieces: 'tiles', unit: 'Points', throws: false };
