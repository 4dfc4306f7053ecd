import { createServer } from "node:net";

/**
 * A loopback port nobody listens on: bound to port 0, then released. The caller binds it right
 * after (or keeps it closed to play an unreachable peer); the small race with other processes is
 * accepted by every suite that uses it.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** `count` distinct free loopback ports (held together while they are chosen, so none repeats). */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const server = createServer();
          server.once("error", reject);
          server.listen(0, "127.0.0.1", () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((s) => {
    const address = s.address();
    return typeof address === "object" && address !== null ? address.port : 0;
  });
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  return ports;
}
