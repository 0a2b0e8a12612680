// The table console's service worker (issue #30 item 5): it keeps the console page and what it
// loads, so a reload during an outage opens the pad with its waiting entries (they live in the
// browser's localStorage) instead of the browser's error page. Registered by js/console.js with
// the scope of console.html only: no other overlay page is ever served from here.
//
// Network first (the hub's current page whenever it answers), the kept copy when the network
// fails or does not answer within FETCH_MS (a silent link hangs a request for minutes).

const CACHE = 'duplicast-console-v8'; // v8: RPS Poker's throws field is its module's (throwpad.js)
const FETCH_MS = 2500;
const PAGE = 'console.html';
const FILES = [
  PAGE,
  'css/broadcast.css',
  'css/console.css',
  'fonts/barlow-condensed-latin-400-normal.woff2',
  'fonts/barlow-condensed-latin-700-normal.woff2',
  'fonts/barlow-condensed-latin-800-normal.woff2',
  'js/console.js',
  'js/consolepad.js',
  'js/amounts.js',
  'js/outbox.js',
  'js/rules.js',
  'js/duplicast.js',
  'js/playout.js', // duplicast.js's playout templates (CasparCG, SPX, OGraf: docs/overlays.md)
  'js/sign.js',
  'js/topics.js',
  '../api/topics', // the hub's topic families and the games' pad declarations (js/topics.js)
  'js/transition.js',
  'js/ui.js',
  'js/piecepack.js',
  // the games' overlay modules the pad reads its field widgets from (js/games/index.js): every
  // game of the hub's registry (tests/test_console_games.py checks the list)
  'js/games/index.js',
  'js/games/holdem.js',
  'js/games/mcr.js',
  'js/games/piecepack-holdem.js',
  'js/games/rps-poker.js',
  'js/mahjong.js',
  'js/rps.js', // rps-poker.js's throws (its seats, board and panels)
  'js/throwpad.js', // rps-poker.js's throws field of the pad (its `padFields`)
  'js/keyed.js',
  'js/tilepicker.js', // mcr.js's tile picker (its `padFields`) and the styles it links
  'css/tilepicker.css',
  'css/mahjong.css',
];
const KEPT = new Set(FILES.map((f) => new URL(f, self.registration.scope).pathname));

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches.open(CACHE).then((cache) => cache.addAll(FILES.map((f) => new URL(f, self.registration.scope).href)))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches.keys()
      .then((keys) => Promise.all(keys.filter((k) => k.startsWith('duplicast-console-') && k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

/** The network's answer within FETCH_MS, else a rejection. */
function fetchSoon(request) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no answer')), FETCH_MS);
    fetch(request).then((response) => {
      clearTimeout(timer);
      resolve(response);
    }, (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== 'GET' || url.origin !== self.location.origin || !KEPT.has(url.pathname)) return;
  // console.html?token=...: one copy whatever the query (the token stays out of the cache's keys)
  const key = new URL(url.pathname, url.origin).href;
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    try {
      const response = await fetchSoon(event.request);
      if (response.ok) await cache.put(key, response.clone());
      return response;
    } catch (err) {
      const kept = await cache.match(key);
      if (kept) return kept;
      throw err;
    }
  })());
});
