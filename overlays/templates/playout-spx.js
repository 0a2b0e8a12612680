// The SPX-GC template of a Duplicast overlay (docs/overlays.md, SPX): `<page>.html` in this
// folder declares `window.SPXGCTemplateDefinition` (SPX reads it from the file) and names its
// page (`<html data-page="…">`); this module takes SPX's calls (update(JSON text), play(),
// stop(), next(), runTemplateUpdate()) and passes them to the hub's page, framed
// (playout-frame.js). The first update() frames the page with the fields as its URL: the hub's
// address is one of them (`hub`).
import { PlayoutFrame, selectionOf } from './playout-frame.js';

function fields(data) {
  if (data && typeof data === 'object') return data;
  try {
    return JSON.parse(String(data || '{}'));
  } catch {
    return {};
  }
}

export function spxTemplate(page, host = document.body) {
  const framed = new PlayoutFrame(host, page, 'spx');
  let last = {};
  window.update = (data) => {
    last = fields(data);
    framed.takeKey(last); // (SPX's `key` field: the page reports play and stop with it)
    if (!framed.opened) return framed.open(last);
    return framed.send('update', selectionOf(last));
  };
  window.runTemplateUpdate = () => window.update(last);
  window.play = () => framed.send('play');
  window.stop = () => framed.send('stop');
  window.next = () => framed.send('next');
  return framed;
}

spxTemplate(document.documentElement.dataset.page);
