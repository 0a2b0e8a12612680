// The EBU OGraf v1 graphic of an overlay (docs/overlays.md, OGraf). The renderer defines the
// class a page's module exports (`<page>.mjs`, named by `<page>.ograf.json`) as a custom element
// and calls load / playAction / updateAction / stopAction / customAction / dispose. The element
// frames the hub's own page (playout-frame.js): the graphic on air is the page a browser source
// shows, drawn by the same code, after playAction only.
import { PlayoutFrame, selectionOf } from './playout-frame.js';

export class DuplicastGraphic extends HTMLElement {
  /** The overlay page this graphic is (`leaderboard`, `compare`…): set by the page's module. */
  static page = '';

  constructor() {
    super();
    this.framed = null;
    this.step = -1; // OGraf's current step: -1 before playAction
  }

  connectedCallback() {
    // Nothing painted before load().
  }

  async load(params) {
    if (params.renderType !== 'realtime') {
      return { statusCode: 400, statusMessage: 'Only realtime rendering is supported by this graphic' };
    }
    const ctor = /** @type {typeof DuplicastGraphic} */ (this.constructor);
    this.style.cssText = 'position:absolute;inset:0;display:block;';
    this.framed = new PlayoutFrame(this, ctor.page, 'ograf');
    this.framed.takeKey(params.data); // (the `key` the page reports play and stop with)
    await this.framed.open(params.data);
    return { statusCode: 200 };
  }

  async dispose() {
    if (this.framed) this.framed.close();
    this.framed = null;
    return { statusCode: 200 };
  }

  async updateAction(params) {
    this.framed.takeKey(params && params.data);
    await this.framed.send('update', selectionOf((params && params.data) || {}));
    return { statusCode: 200 };
  }

  /** The first play shows the graphic; each further one steps it (the split screen's
   * synchronised replay: one action; the ticker: the next item), as CasparCG's next(). */
  async playAction(params) {
    const delta = params && Number.isInteger(params.delta) ? params.delta : 1;
    if (this.step < 0) {
      await this.framed.send('play');
      this.step = 0;
    } else {
      for (let i = 0; i < delta; i += 1) await this.framed.send('next');
      this.step += delta;
    }
    return { statusCode: 200, currentStep: this.step };
  }

  async stopAction() {
    await this.framed.send('stop');
    this.step = -1;
    return { statusCode: 200 };
  }

  /** `select` (the split screen's deal, seat and tables, or any selection key) and `next`. */
  async customAction(params) {
    const id = params && params.id;
    if (id === 'select') {
      await this.framed.send('update', selectionOf((params && params.payload) || {}));
      return { statusCode: 200 };
    }
    if (id === 'next') {
      await this.framed.send('next');
      return { statusCode: 200 };
    }
    return { statusCode: 404, statusMessage: `unknown action ${id}` };
  }
}
