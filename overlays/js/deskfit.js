// The commentator desk on one 1920x1080 screen whatever the number of tables: the tables' grid
// takes as many columns as keeps each box wide enough for its columns, and a section whose
// boxes would still run past their room (12 tables, 12 teams) is zoomed down until everything
// fits: no box wider than its column, nothing below the window.

const STEP = 0.04;
const SMALLEST = 0.5;

/** True when no box of `section` is wider than its room and the section ends above `bottom`. */
function fits(section, bottom) {
  if (section.getBoundingClientRect().bottom > bottom) return false;
  if (section.scrollWidth > section.clientWidth + 1) return false;
  return [...section.children].every((box) => box.scrollWidth <= box.clientWidth + 1);
}

/** Zoom `section` to the largest factor (1 at most) at which it fits above `bottom` (px in the
 * window); returns the factor. Starts from the current one, so an update costs a layout or two. */
export function fitSection(section, bottom) {
  let z = Number.parseFloat(section.style.zoom) || 1;
  const set = (v) => { section.style.zoom = v >= 1 ? '' : v.toFixed(2); z = v; };
  while (z < 1) { // grow back while it still fits
    const before = z;
    set(Math.min(1, z + STEP));
    if (!fits(section, bottom)) { set(before); break; }
  }
  while (z > SMALLEST && !fits(section, bottom)) set(Math.max(SMALLEST, z - STEP));
  section.dataset.zoom = z.toFixed(2);
  return z;
}

/** Columns of the tables' grid: 2 up to 6 tables (three rows of two), 3 up to 12, then 4. */
export function deskColumns(n) {
  return n <= 2 ? Math.max(1, n) : n <= 6 ? 2 : n <= 12 ? 3 : 4;
}
