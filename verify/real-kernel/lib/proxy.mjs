// A small loopback round-robin TCP proxy: the "load balancer" in front of `rebuno server` replicas.
// Each new client connection goes to the next backend; a backend that refuses the connection (a
// killed replica) is skipped, so clients only see the failure of connections that were open on it.
import net from "node:net";

export async function startRoundRobinProxy(backends) {
  let next = 0;
  const sockets = new Set();
  const connectTo = (tries, onReady, onFail) => {
    if (tries === 0) return onFail();
    const b = backends[next++ % backends.length];
    const upstream = net.connect(b.port, "127.0.0.1");
    upstream.once("connect", () => onReady(upstream));
    upstream.once("error", () => {
      upstream.destroy();
      connectTo(tries - 1, onReady, onFail);
    });
  };
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => client.destroy());
    client.pause();
    connectTo(
      backends.length,
      (upstream) => {
        sockets.add(upstream);
        upstream.on("close", () => {
          sockets.delete(upstream);
          client.destroy();
        });
        upstream.on("error", () => upstream.destroy());
        client.on("close", () => upstream.destroy());
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      },
      () => client.destroy(),
    );
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
