// The OGraf graphic of seat.html (seat.ograf.json): js/playout-ograf.js does the work.
import { DuplicastGraphic } from './playout-ograf.js';

export default class extends DuplicastGraphic {
  static page = 'seat';
}
