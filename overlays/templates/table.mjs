// The OGraf graphic of table.html (table.ograf.json): js/playout-ograf.js does the work.
import { DuplicastGraphic } from './playout-ograf.js';

export default class extends DuplicastGraphic {
  static page = 'table';
}
