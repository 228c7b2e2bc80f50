// A loopback port nothing listens on right now: the OS picks it, the caller binds it (or relies on nothing
// listening there) a moment later.
import { createServer } from "node:net";

export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}
