// UTF-8 decoding with Go's replacement rule: every byte that does not start a valid sequence
// becomes one U+FFFD (Go `utf8.DecodeRune` returns (RuneError, 1)). WHATWG TextDecoder replaces a
// whole "maximal subpart" with a single U+FFFD instead, so it is only used for valid input.

const strictDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Decode UTF-8 like Go does when it decodes JSON strings (invalid bytes → one U+FFFD each). */
export function decodeUtf8Go(bytes: Uint8Array): string {
  try {
    return strictDecoder.decode(bytes);
  } catch {
    return decodeSlow(bytes);
  }
}

function cont(b: number | undefined): boolean {
  return b !== undefined && (b & 0xc0) === 0x80;
}

function decodeSlow(bytes: Uint8Array): string {
  const out: number[] = [];
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const b0 = bytes[i]!;
    if (b0 < 0x80) {
      out.push(b0);
      i++;
      continue;
    }
    const b1 = bytes[i + 1];
    const b2 = bytes[i + 2];
    const b3 = bytes[i + 3];
    let cp = -1;
    let size = 1;
    if (b0 >= 0xc2 && b0 <= 0xdf) {
      if (cont(b1)) {
        cp = ((b0 & 0x1f) << 6) | (b1! & 0x3f);
        size = 2;
      }
    } else if (b0 >= 0xe0 && b0 <= 0xef) {
      // Second-byte ranges exclude overlongs (E0) and UTF-16 surrogates (ED), as in Go.
      const lo = b0 === 0xe0 ? 0xa0 : 0x80;
      const hi = b0 === 0xed ? 0x9f : 0xbf;
      if (b1 !== undefined && b1 >= lo && b1 <= hi && cont(b2)) {
        cp = ((b0 & 0x0f) << 12) | ((b1 & 0x3f) << 6) | (b2! & 0x3f);
        size = 3;
      }
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
      const lo = b0 === 0xf0 ? 0x90 : 0x80;
      const hi = b0 === 0xf4 ? 0x8f : 0xbf;
      if (b1 !== undefined && b1 >= lo && b1 <= hi && cont(b2) && cont(b3)) {
        cp = ((b0 & 0x07) << 18) | ((b1 & 0x3f) << 12) | ((b2! & 0x3f) << 6) | (b3! & 0x3f);
        size = 4;
      }
    }
    if (cp < 0) {
      out.push(0xfffd);
      i++;
      continue;
    }
    if (cp > 0xffff) {
      const v = cp - 0x10000;
      out.push(0xd800 | (v >> 10), 0xdc00 | (v & 0x3ff));
    } else {
      out.push(cp);
    }
    i += size;
  }
  let s = "";
  for (let k = 0; k < out.length; k += 8192) s += String.fromCharCode(...out.slice(k, k + 8192));
  return s;
}
