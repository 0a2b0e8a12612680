// The OGraf graphic of stats.html (stats.ograf.json): js/playout-ograf.js does the work.
// Written by deploy/make_templates.py from templates.json: edit that, not this.
import { DuplicastGraphic } from './playout-ograf.js';

export default class extends DuplicastGraphic {
  static page = 'stats';
}
