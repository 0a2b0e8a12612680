// Duplicate MCR mahjong (docs/mahjong.md): walls of tiles, hands scored in points. It draws its
// own live table (seat rows with winds and tiles) and split screen (each table's result for the
// seat): ../mahjong.js.
import { renderCompare, renderTable } from '../mahjong.js';
// The console pad's winning hand (field kind `mcr_hand`, CONTRACT32): the tile picker.
import { mount as mcrHand } from '../tilepicker.js';

export default { name: 'mcr', pieces: 'tiles', unit: 'Points', throws: false, renderTable, renderCompare, padFields: { mcr_hand: mcrHand } };
