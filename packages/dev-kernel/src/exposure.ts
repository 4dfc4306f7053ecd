/**
 * Who can reach a kernel that lets anonymous requests through. In dev mode (the default) a request
 * without a token has full access: it can read every execution's input and output, create and
 * cancel executions, change policies and grant approvals. That is fine on loopback, where only this
 * machine can call; anywhere else it hands the kernel to the network. So {@link DevKernel.listen}
 * decides from the address it actually bound (after name resolution, never from the string asked
 * for) and refuses anything but loopback unless the caller says the network is trusted.
 */
import { BlockList, isIPv4, isIPv6 } from "node:net";
import { RebunoError, type RebunoErrorOptions } from "@rebuno/protocol";

// 127.0.0.0/8 and ::1. BlockList also matches IPv4-mapped IPv6 (`::ffff:127.0.0.1`, `::ffff:7f00:1`)
// against the IPv4 subnet, so a dual-stack bind of a mapped loopback address counts as loopback.
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

/**
 * True when `address` is an IP literal on the loopback network (127.0.0.0/8, `::1`, or an
 * IPv4-mapped IPv6 form of 127.0.0.0/8). Host names, the unspecified addresses `0.0.0.0` and `::`,
 * and anything that does not parse are not loopback.
 */
export function isLoopbackAddress(address: string): boolean {
  const family = isIPv4(address) ? "ipv4" : isIPv6(address) ? "ipv6" : undefined;
  if (family === undefined) return false;
  try {
    return LOOPBACK.check(address, family);
  } catch {
    // A form BlockList does not take (an IPv6 zone id such as `fe80::1%eth0`) is a real interface.
    return false;
  }
}

/**
 * `listen()` refused to serve anonymous requests on an address other people can reach. `address`
 * and `port` are what the socket was bound to (it is closed again before this is thrown); `host` is
 * what was asked for. Turn anonymous access off (`devMode: false` with a `bootstrapToken` or
 * `apiKeys`), or pass `allowAnonymous: true` to `listen()` on a network you trust.
 */
export class AnonymousNetworkAccessError extends RebunoError {
  static {
    AnonymousNetworkAccessError.prototype.name = "AnonymousNetworkAccessError";
  }
  /** The address the socket was bound to, e.g. `0.0.0.0`, `::` or `192.168.1.20`. */
  readonly address: string;
  readonly port: number;
  /** The host `listen()` was given (`""` for every interface). */
  readonly host: string;

  constructor(address: string, port: number, host: string, options: Omit<RebunoErrorOptions, "code"> = {}) {
    super(
      `refusing to serve anonymous requests on ${formatHostPort(address, port)}${host === address ? "" : ` (asked for ${JSON.stringify(host)})`}: ` +
        "it is not a loopback address, and anonymous requests have full access (read every execution, " +
        "create and cancel executions, change policies, grant approvals). Require a token " +
        "(devMode: false with a bootstrapToken or apiKeys), or, on a network you trust, pass " +
        "allowAnonymous: true to listen()",
      { ...options, code: "anonymous_network_access" },
    );
    this.address = address;
    this.port = port;
    this.host = host;
  }
}

/** `address:port`, with IPv6 addresses in brackets. */
export function formatHostPort(address: string, port: number): string {
  return `${isIPv6(address) ? `[${address}]` : address}:${port}`;
}
