// Texas hold'em (hub/domain/games/holdem): cards, chips. The default of games/index.js: every
// game's module is read over this one, so what a module leaves out is drawn as hold'em's.
import { STREET_LABEL } from '../ui.js';

export default { name: 'holdem', pieces: 'cards', unit: 'Chips', chip: 'chip', streetLabel: (x) => STREET_LABEL[x.street] };
