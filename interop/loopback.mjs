// Loaded with `node --import ./loopback.mjs` before a server that calls
// listen(port) with no address (server-everything's sse and streamableHttp
// modes do: app.listen(PORT)), which would bind every interface. This makes
// such a listen bind 127.0.0.1 instead, and prints the address the kernel
// chose (PORT=0) on stderr as "interop: listening on 127.0.0.1:PORT", the
// line the interop tests wait for.
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const port = args[0];
  const isPort = typeof port === "number" || (typeof port === "string" && /^\d+$/.test(port));
  if (isPort && typeof args[1] !== "string") {
    args.splice(1, 0, "127.0.0.1");
  }
  this.once("listening", () => {
    const a = this.address();
    if (a && typeof a === "object") {
      process.stderr.write(`interop: listening on ${a.address}:${a.port}\n`);
    }
  });
  return listen.apply(this, args);
};
