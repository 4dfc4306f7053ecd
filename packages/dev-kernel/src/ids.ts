import { randomBytes } from "node:crypto";

/** Produces a new lowercase hyphenated UUID (v7 by default). */
export type IdGenerator = () => string;

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/**
 * A UUIDv7 generator (RFC 9562): 48-bit Unix milliseconds, then random bits. Ids are strictly
 * increasing within one generator even when the clock stands still or steps back, because the
 * kernel pages listings by id and expects id order = creation order: within one millisecond the
 * 74 random bits are replaced by a counter incremented from the previous id.
 */
export function createUuidV7Generator(clock: () => number = Date.now): IdGenerator {
  let lastMs = -1;
  // 12-bit rand_a and 62-bit rand_b, kept as one counter split across two numbers.
  let randA = 0;
  let randBHigh = 0; // 30 bits
  let randBLow = 0; // 32 bits
  const pool = Buffer.alloc(8 * 256);
  let poolPos = pool.length;
  const random8 = (): Buffer => {
    if (poolPos >= pool.length) {
      randomBytes(pool.length).copy(pool);
      poolPos = 0;
    }
    const slice = pool.subarray(poolPos, poolPos + 8);
    poolPos += 8;
    return slice;
  };
  return () => {
    let ms = Math.floor(clock());
    if (ms > lastMs) {
      lastMs = ms;
      const r = random8();
      randA = ((r[0]! << 8) | r[1]!) & 0x0fff;
      // Leave headroom in the top bit of rand_b so same-millisecond increments rarely carry.
      randBHigh = ((r[2]! << 22) | (r[3]! << 14) | (r[4]! << 6) | (r[5]! >> 2)) & 0x1fffffff;
      randBLow = r.readUInt32BE(4);
    } else {
      ms = lastMs;
      randBLow = (randBLow + 1) >>> 0;
      if (randBLow === 0) {
        randBHigh = (randBHigh + 1) & 0x3fffffff;
        if (randBHigh === 0) randA = (randA + 1) & 0x0fff;
      }
    }
    const b = new Uint8Array(16);
    // 48-bit timestamp, big endian (split because bitwise ops are 32-bit).
    const hi = Math.floor(ms / 0x100000000);
    const lo = ms >>> 0;
    b[0] = (hi >>> 8) & 0xff;
    b[1] = hi & 0xff;
    b[2] = lo >>> 24;
    b[3] = (lo >>> 16) & 0xff;
    b[4] = (lo >>> 8) & 0xff;
    b[5] = lo & 0xff;
    b[6] = 0x70 | (randA >>> 8);
    b[7] = randA & 0xff;
    b[8] = 0x80 | ((randBHigh >>> 24) & 0x3f);
    b[9] = (randBHigh >>> 16) & 0xff;
    b[10] = (randBHigh >>> 8) & 0xff;
    b[11] = randBHigh & 0xff;
    b[12] = randBLow >>> 24;
    b[13] = (randBLow >>> 16) & 0xff;
    b[14] = (randBLow >>> 8) & 0xff;
    b[15] = randBLow & 0xff;
    return (
      HEX[b[0]]! +
      HEX[b[1]]! +
      HEX[b[2]]! +
      HEX[b[3]]! +
      "-" +
      HEX[b[4]]! +
      HEX[b[5]]! +
      "-" +
      HEX[b[6]]! +
      HEX[b[7]]! +
      "-" +
      HEX[b[8]]! +
      HEX[b[9]]! +
      "-" +
      HEX[b[10]]! +
      HEX[b[11]]! +
      HEX[b[12]]! +
      HEX[b[13]]! +
      HEX[b[14]]! +
      HEX[b[15]]!
    );
  };
}

/**
 * The canonical lowercase form of a hyphenated UUID (`8-4-4-4-12` hex digits, either case), or
 * undefined when `text` is not one. A character loop rather than a regex plus `toLowerCase`: it
 * runs several times per agent request (route ids, lease header), and ids are almost always
 * lowercase already, in which case `text` itself is returned without a copy.
 */
export function parseUuid(text: string): string | undefined {
  if (text.length !== 36) return undefined;
  let upper = false;
  for (let i = 0; i < 36; i++) {
    const c = text.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 0x2d /* - */) return undefined;
    } else if ((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66)) {
      // 0-9, a-f
    } else if (c >= 0x41 && c <= 0x46) {
      upper = true; // A-F
    } else {
      return undefined;
    }
  }
  return upper ? text.toLowerCase() : text;
}
