// How an on-air graphic changes content (docs/overlays.md "Take and Cut"). A *mix* (the
// operator's Take) dips the old content out, holds it while the new selection's topics load, then
// brings the new content in; a *cut* swaps at once, holding the old frame only until the new data
// is there, so the screen never flashes empty. Show and hide keep the CSS transition of `.gfx`
// (`.gfx.cut` turns it off for a cut). The graphic says what ran: `data-transition` ("mix" or
// "cut") and `data-swaps` (content changes drawn since the page opened).

export const MIX_OUT_MS = 220;
export const MIX_IN_MS = 320;
export const HOLD_MAX_MS = 1500; // never hold the old frame longer (a topic with no data)

const OUT = [{ opacity: 1, transform: 'none' }, { opacity: 0, transform: 'translateX(40px)' }];
const IN = [{ opacity: 0, transform: 'translateX(-40px)' }, { opacity: 1, transform: 'none' }];

/** The transitions of one graphic; `redraw()` is called when a held frame may be released. */
export function contentTransitions(gfx, redraw) {
  let swap = null;
  let swaps = 0;

  function release() {
    if (!swap) return;
    clearTimeout(swap.timer);
    clearTimeout(swap.outTimer);
    if (swap.out) swap.out.cancel();
    if (!swap.cut && typeof gfx.animate === 'function') {
      gfx.animate(IN, { duration: MIX_IN_MS, easing: 'cubic-bezier(.2, .8, .2, 1)' });
    }
    swap = null;
    swaps += 1;
    gfx.dataset.swaps = String(swaps);
  }

  return {
    /** The graphic is on screen and its selection changed: start a mix or a cut. */
    begin(cut) {
      if (swap) release();
      gfx.dataset.transition = cut ? 'cut' : 'mix';
      const s = { cut, outDone: cut, out: null, timer: 0, outTimer: 0, expired: false };
      s.timer = setTimeout(() => { s.expired = true; redraw(); }, HOLD_MAX_MS);
      if (!cut) {
        // The dip's end is timed on the clock, not on the animation's `finished` (a page whose
        // frames are not drawn, a hidden source, never finishes it).
        if (typeof gfx.animate === 'function') {
          s.out = gfx.animate(OUT, { duration: MIX_OUT_MS, easing: 'ease-in', fill: 'forwards' });
        }
        s.outTimer = setTimeout(() => { s.outDone = true; redraw(); }, MIX_OUT_MS);
      }
      swap = s;
    },
    /** Whether the old frame must stay on screen; false once the new content may be drawn
     * (`loaded`: every topic of the new selection has its data), which brings it in. */
    holding(loaded) {
      if (!swap) return false;
      if (!swap.expired && !(swap.outDone && loaded)) return true;
      release();
      return false;
    },
  };
}
