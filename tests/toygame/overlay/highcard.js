// High card's overlay module (tests/toygame): the hub serves it from the game's package
// (`overlay_dir`, at /overlays/js/games/highcard/) and lists it with its topics.
export default { name: 'highcard', pieces: 'cards', unit: 'Chips', throws: false };
