// End-to-end signatures (docs/security.md, hub/wire/signing.py): a page never shows its token
// to the hub it connects to. From the token it derives
//   - the session proof `p1.<hex>` = HMAC-SHA256(token, "duplicast session proof v1"), what it
//     shows the edge (`?token=` of the websocket), and
//   - the signing key = HMAC-SHA256(token, "duplicast signing key v1"), which never leaves the
//     page: every command and console event is sent as {op, signed: its JSON text, sig: hex},
//     and the ingest, which holds the token, verifies it before anything is applied. An edge
//     that relays it can neither forge nor alter it.
// A command's signed text carries a `nonce` (its idempotency key: a retry keeps it, and the hub
// answers it once) and `ts` (ms, on the hub's clock as its hello gave it). SHA-256 is computed
// here, synchronously, rather than with WebCrypto: crypto.subtle is missing on a plain-HTTP
// venue network (not a secure context), and the send path stays synchronous.

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** SHA-256 of a byte array (Uint8Array): 32 bytes. */
export function sha256(bytes) {
  const len = bytes.length;
  const padded = new Uint8Array(((len + 9 + 63) >> 6) << 6);
  padded.set(bytes);
  padded[len] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(len / 0x20000000));
  view.setUint32(padded.length - 4, (len << 3) >>> 0);
  const h = new Uint32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
  const w = new Uint32Array(64);
  const rotr = (x, n) => (x >>> n) | (x << (32 - n));
  for (let off = 0; off < padded.length; off += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(off + 4 * i);
    for (let i = 16; i < 64; i++) {
      const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
      const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) >>> 0;
    }
    let [a, b, c, d, e, f, g, hh] = h;
    for (let i = 0; i < 64; i++) {
      const t1 = (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i]) >>> 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      hh = g; g = f; f = e; e = (d + t1) >>> 0; d = c; c = b; b = a; a = (t1 + t2) >>> 0;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
  }
  const out = new Uint8Array(32);
  const outView = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) outView.setUint32(4 * i, h[i]);
  return out;
}

const utf8 = (text) => new TextEncoder().encode(text);
const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

/** HMAC-SHA256(key, message), both byte arrays: 32 bytes. */
export function hmac(key, message) {
  const block = new Uint8Array(64);
  block.set(key.length > 64 ? sha256(key) : key);
  const inner = new Uint8Array(64 + message.length);
  const outer = new Uint8Array(64 + 32);
  for (let i = 0; i < 64; i++) {
    inner[i] = block[i] ^ 0x36;
    outer[i] = block[i] ^ 0x5c;
  }
  inner.set(message, 64);
  outer.set(sha256(inner), 64);
  return sha256(outer);
}

/** What the page shows the hub instead of its token. */
export function sessionProof(token) {
  return `p1.${hex(hmac(utf8(token), utf8('duplicast session proof v1')))}`;
}

/** A token already given as a proof (a proof is shown as is; it cannot sign). */
export const isProof = (value) => /^p1\.[0-9a-f]{64}$/.test(String(value));

function nonce() {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  return hex(bytes);
}

// What a client says that is neither a command nor a console event: sent as is.
const PLAIN = new Set(['subscribe', 'unsubscribe', 'ping']);

/**
 * The signer of a token: `signer.wrap(op, hello)` gives what to send for `op`. Every op but
 * subscribe/unsubscribe/ping is signed: a console `event` completed with what its hello names
 * (v, tournament, table, console), every other op (any operator command or ruling) with a
 * `nonce` (kept when the op has one: give it to retry a command) and `ts`. Null: an event
 * before the hello (nothing to sign it as yet; the caller keeps it).
 */
export function signer(token) {
  const key = isProof(token) ? null : hmac(utf8(String(token)), utf8('duplicast signing key v1'));
  let skew = 0; // the hub's clock minus ours (its hello's `now`)
  const sign = (text) => hex(hmac(key, utf8(text)));
  return {
    proof: isProof(token) ? String(token) : sessionProof(String(token)),
    clock(hello) {
      if (hello && Number.isFinite(hello.now)) skew = hello.now * 1000 - Date.now();
    },
    wrap(op, hello) {
      if (!key || !op || PLAIN.has(op.op) || op.signed !== undefined) return op;
      let body;
      if (op.op === 'event') {
        const h = hello || {};
        if (h.console === undefined) return null; // not yet told which console it is: not sent
        body = { v: 1, tournament: h.tournament, table: h.table, console: h.console, ...op.event };
      } else {
        const { nonce: given, ...rest } = op;
        body = { ...rest, nonce: given || nonce(), ts: Math.round(Date.now() + skew) };
      }
      const text = JSON.stringify(body);
      return { op: op.op, signed: text, sig: sign(text) };
    },
  };
}
