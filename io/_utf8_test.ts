/**
 * Tests of `_utf8.ts`: streaming decoding that locates the first invalid byte.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Utf8Chunks, validPrefix } from "./_utf8.ts";

const encoder = new TextEncoder();

Deno.test("validPrefix() stops at the first invalid sequence", () => {
  const b = (...xs: number[]) => new Uint8Array(xs);
  assert.equal(validPrefix(encoder.encode("aé€😀")), 10);
  assert.equal(validPrefix(b(0x61, 0xff)), 1);
  assert.equal(validPrefix(b(0x61, 0xc0, 0x80)), 1, "overlong");
  assert.equal(validPrefix(b(0xe0, 0x80, 0x80)), 0, "overlong 3-byte");
  assert.equal(validPrefix(b(0xed, 0xa0, 0x80)), 0, "surrogate");
  assert.equal(validPrefix(b(0xf4, 0x90, 0x80, 0x80)), 0, "above U+10FFFF");
  assert.equal(validPrefix(b(0x61, 0xe2, 0x82)), 1, "cut off by the end");
});

Deno.test("Utf8Chunks.decode() gives the valid text and the file offset of a bad byte", () => {
  const euro = encoder.encode("€"); // e2 82 ac
  const u = new Utf8Chunks(100, true);
  assert.deepEqual(u.decode(new Uint8Array([0x61, euro[0]!])), { text: "a", bad: -1 });
  assert.deepEqual(u.decode(new Uint8Array([euro[1]!])), { text: "", bad: -1 });
  assert.deepEqual(u.decode(new Uint8Array([euro[2]!, 0x62, 0xff, 0x63])), {
    text: "€b",
    bad: 105,
  });
});

Deno.test("Utf8Chunks.decode() reports a sequence cut off by the end of input", () => {
  const u = new Utf8Chunks(0, false);
  assert.deepEqual(u.decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x61, 0xe2, 0x82])), {
    text: "a",
    bad: -1,
  });
  assert.deepEqual(u.decode(undefined), { text: "", bad: 4 });
});

/** The decoding `Utf8Chunks` gives, by a fatal decoder alone (its way before its fast path). */
function fatalOnly(start: number, ignoreBom: boolean) {
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: ignoreBom });
  let offset = start;
  let carry = new Uint8Array(0);
  return (bytes: Uint8Array | undefined): { text: string; bad: number } => {
    const at = offset - carry.length;
    const all = bytes === undefined ? carry : new Uint8Array([...carry, ...bytes]);
    try {
      const text = bytes === undefined ? decoder.decode() : decoder.decode(bytes, { stream: true });
      if (bytes !== undefined) {
        offset += bytes.length;
        // The bytes of a character not yet complete, as the decoder holds them.
        let k = 0;
        while (k < Math.min(3, all.length) && (all[all.length - 1 - k]! & 0xc0) === 0x80) k++;
        const lead = all[all.length - 1 - k];
        const need = lead === undefined || lead < 0xc0
          ? 0
          : lead >= 0xf0
          ? 4
          : lead >= 0xe0
          ? 3
          : 2;
        carry = need > k + 1 ? all.slice(all.length - 1 - k) : new Uint8Array(0);
      }
      return { text, bad: -1 };
    } catch {
      const valid = validPrefix(all);
      const text = new TextDecoder("utf-8", { ignoreBOM: ignoreBom || at > 0 }).decode(
        all.subarray(0, valid),
      );
      return { text, bad: at + valid };
    }
  };
}

Deno.test("Utf8Chunks.decode() gives what a fatal decoder alone gives, U+FFFD and bad bytes anywhere", () => {
  // Pieces of text: ASCII, multi-byte characters, a U+FFFD and a BOM written in the
  // file, and invalid or cut-off sequences.
  const pieces = [
    ...["a,b\n", "12", "xyz", "\r\n"].map((s) => encoder.encode(s)),
    ...["é", "€", "😀", "\uFFFD", "\uFEFF"].map((s) => encoder.encode(s)),
    new Uint8Array([0xff]),
    new Uint8Array([0xc0, 0x80]),
    new Uint8Array([0xe2, 0x82]),
    new Uint8Array([0xed, 0xa0, 0x80]),
  ];
  let seed = 17;
  const random = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  for (let round = 0; round < 2000; round++) {
    const parts: number[] = [];
    const count = 1 + random(12);
    for (let i = 0; i < count; i++) {
      // Mostly valid text, so the fast decoder has runs to give before any switch.
      const piece = pieces[random(10) < 8 ? random(9) : random(pieces.length)]!;
      parts.push(...piece);
    }
    const bytes = new Uint8Array(parts);
    const start = random(3) === 0 ? 0 : 1 + random(50);
    const ignoreBom = random(2) === 0;
    const ours = new Utf8Chunks(start, ignoreBom);
    const theirs = fatalOnly(start, ignoreBom);
    let at = 0;
    for (;;) {
      const end = at >= bytes.length ? -1 : Math.min(bytes.length, at + 1 + random(6));
      const chunk = end < 0 ? undefined : bytes.subarray(at, end);
      const [a, b] = [ours.decode(chunk), theirs(chunk)];
      assert.deepEqual(a, b, `round ${round}: ${[...bytes]} at ${at}`);
      if (a.bad >= 0 || chunk === undefined) break;
      at = end;
    }
  }
});
