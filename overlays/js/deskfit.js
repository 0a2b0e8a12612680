// The commentator desk on one 1920x1080 screen whatever the number of tables: the tables' grid
// takes as many columns as keeps each box wide enough for its columns, and a section whose
// boxes would still run past their room (12 tables, 12 teams) is zoomed down until everything
// fits: no box wider than its column, nothing below the window. Never below the zoom at which
// its smallest text would be under MIN_TEXT_PX on the screen (docs/overlays.md): a section that
// does not fit even there is made tight (`data-tight`: long names and outs cut short with an
// ellipsis, panel.css) rather than smaller.

const STEP = 0.04;
const SMALLEST = 0.5;
export const MIN_TEXT_PX = 14;

/** True when no box of `section` is wider than its room and the section ends above `bottom`. */
function fits(section, bottom) {
  if (section.getBoundingClientRect().bottom > bottom) return false;
  if (section.scrollWidth > section.clientWidth + 1) return false;
  return [...section.children].every((box) => box.scrollWidth <= box.clientWidth + 1);
}

/** The smallest font size (CSS px, before the section's zoom) of a text shown in `section`. */
export function smallestFont(section) {
  let smallest = Infinity;
  const walker = document.createTreeWalker(section, NodeFilter.SHOW_TEXT);
  const seen = new Set();
  while (walker.nextNode()) {
    const node = walker.currentNode.parentElement;
    if (!node || seen.has(node) || !walker.currentNode.textContent.trim()) continue;
    seen.add(node);
    const size = Number.parseFloat(getComputedStyle(node).fontSize);
    if (size < smallest && node.getClientRects().length) smallest = size;
  }
  return smallest;
}

/** The zoom below which a text of `section` would be under `minPx` on the screen. */
export function zoomFloor(section, minPx = MIN_TEXT_PX) {
  const font = smallestFont(section);
  return Number.isFinite(font) ? Math.min(1, Math.max(SMALLEST, minPx / font)) : SMALLEST;
}

function zoomTo(section, bottom, floor) {
  let z = Number.parseFloat(section.style.zoom) || 1;
  const set = (v) => { section.style.zoom = v >= 1 ? '' : v.toFixed(3); z = v; };
  if (z < floor) set(floor);
  while (z < 1) { // grow back while it still fits
    const before = z;
    set(Math.min(1, z + STEP));
    if (!fits(section, bottom)) { set(before); break; }
  }
  while (z > floor && !fits(section, bottom)) set(Math.max(floor, z - STEP));
  return z;
}

const floors = new WeakMap(); // section -> [floor, when]: its fonts change only with its CSS
const FLOOR_EVERY = 2000; // ms

function floorOf(section, minPx) {
  const known = floors.get(section);
  if (known && performance.now() - known[1] < FLOOR_EVERY) return known[0];
  const floor = Math.ceil(zoomFloor(section, minPx) * 1000) / 1000;
  floors.set(section, [floor, performance.now()]);
  return floor;
}

/** Zoom `section` to the largest factor (1 at most) at which it fits above `bottom` (px in the
 * window), never below its `zoomFloor`; tight when it fits only so (or not at all), until it
 * fits untight at a zoom two steps above the floor. Returns the factor. Starts from the
 * current one, so an update costs a layout or two. */
export function fitSection(section, bottom, minPx = MIN_TEXT_PX) {
  const floor = floorOf(section, minPx);
  let z = zoomTo(section, bottom, floor);
  if (section.dataset.tight === 'true') {
    if (z >= floor + 2 * STEP) { // room to spare: try it untight
      delete section.dataset.tight;
      z = zoomTo(section, bottom, floor);
      if (z <= floor && !fits(section, bottom)) section.dataset.tight = 'true';
    }
  } else if (z <= floor && !fits(section, bottom)) {
    section.dataset.tight = 'true';
  }
  if (section.dataset.tight === 'true') z = zoomTo(section, bottom, floor);
  section.dataset.zoom = z.toFixed(2);
  section.dataset.floor = floor.toFixed(3);
  return z;
}

/** Columns of the tables' grid: 2 up to 6 tables (three rows of two), 3 up to 12, then 4. */
export function deskColumns(n) {
  return n <= 2 ? Math.max(1, n) : n <= 6 ? 2 : n <= 12 ? 3 : 4;
}
