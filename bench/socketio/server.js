// Socket.IO 4.8 peer for bench/edge_bench.py: websocket transport only, no compression, the
// Redis adapter attached (so every emit is also published for other nodes, as in a cluster).
// Messages come from a plain Redis channel (PUBLISH by the bench's publisher process).
// usage: node server.js PORT CHANNEL REDIS_URL
"use strict";
const http = require("http");
const { Server } = require("socket.io");
const { createAdapter } = require("@socket.io/redis-adapter");
const { createClient } = require("redis");

const [port, channel, url] = process.argv.slice(2);

(async () => {
  const pub = createClient({ url });
  const sub = pub.duplicate();
  const feed = pub.duplicate();
  await Promise.all([pub.connect(), sub.connect(), feed.connect()]);
  const server = http.createServer();
  const io = new Server(server, {
    adapter: createAdapter(pub, sub, { key: "bench-sio" }),
    transports: ["websocket"],
    perMessageDeflate: false,
    serveClient: false,
    pingInterval: 120000, // keepalive off for the length of a point, as in the other servers
    pingTimeout: 60000,
  });
  await feed.subscribe(channel, (message) => io.emit("m", message));
  server.listen(Number(port), "127.0.0.1", () => console.log("listening"));
  const stop = () => process.exit(0);
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
})();
