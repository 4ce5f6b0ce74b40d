/**
 * Tests of `_write_text.ts`'s CSV fast paths: string columns with dictionary codes
 * (`format/coded_strings.ts`), int64 digits and whole-second timestamps written in
 * place must give the bytes the general writers give, cell for cell.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { Batch, Column, Field, Schema, TimeUnit } from "../format/column.ts";
import { withCodes } from "../format/coded_strings.ts";
import { IoError } from "./errors.ts";
import { TimestampFormatter } from "./_format.ts";
import { exactCodedColumn, renderRows, writeCsv } from "./_write_text.ts";
import { DETACH_PROTECTOR_BROKEN, evalTracingDetach } from "../internal/_test_utils.ts";

const CSV = { format: "csv", delimiter: "," } as const;
const text = (batch: Batch, schema: Schema) =>
  new TextDecoder().decode(renderRows(schema, batch, CSV, 0).bytes);

/** The dictionary's strings at the codes' rows, with codes recorded, and a plain copy. */
function coded(dictionary: string[], codes: number[]): { coded: Column; plain: Column } {
  const values = codes.map((c) => dictionary[c]!);
  return {
    coded: {
      type: "string",
      values: withCodes(values, Uint16Array.from(codes), dictionary),
      validity: null,
    },
    plain: { type: "string", values: [...values], validity: null },
  };
}

Deno.test("CSV: a string column with codes renders as the same strings without", () => {
  const dictionary = ["LAX", "", "a,b", " lead", "trail\t", 'q"q', "ü", "🧊", "line\nbreak", "x"];
  const codes = Array.from({ length: 500 }, (_, i) => (i * 7 + (i >> 2)) % dictionary.length);
  const schema: Schema = [{ name: "s", type: "string", nullable: true }];
  const { coded: withDict, plain } = coded(dictionary, codes);
  const expected = text({ schema, columns: [plain], length: 500 }, schema);
  assert.equal(text({ schema, columns: [withDict], length: 500 }, schema), expected);
  assert.ok(expected.includes('\n"a,b"\n') && expected.includes('\n"line\nbreak"\n'));
  // A value changed after decoding is written as it now is, not as its code says.
  (withDict.values as string[])[3] = "changed";
  (plain.values as string[])[3] = "changed";
  const changed = text({ schema, columns: [plain], length: 500 }, schema);
  assert.equal(text({ schema, columns: [withDict], length: 500 }, schema), changed);
  assert.notEqual(changed, expected);
  // Nulls stay empty.
  const validity = Uint8Array.from(codes, (_, i) => (i % 3 === 0 ? 0 : 1));
  assert.equal(
    text({ schema, columns: [{ ...withDict, validity }], length: 500 }, schema),
    text({ schema, columns: [{ ...plain, validity }], length: 500 }, schema),
  );
});

Deno.test("CSV: a coded entry holding a lone surrogate fails at the first row using it", () => {
  const schema: Schema = [{ name: "s", type: "string", nullable: false }];
  const { coded: withDict } = coded(["ok", "bad\ud800"], [0, 0, 0, 1, 0]);
  assert.throws(
    () => renderRows(schema, { schema, columns: [withDict], length: 5 }, CSV, 10),
    (e: unknown) => e instanceof IoError && /row 13 of column 's'/.test(e.message),
  );
});

Deno.test("CSV: a column given by its codes alone renders as its rows would, whatever its values hold", () => {
  const dictionary = ["LAX", "", "a,b", " lead", "trail\t", 'q"q', "ü", "🧊", "line\nbreak", "x"];
  const codes = Array.from({ length: 500 }, (_, i) => (i * 7 + (i >> 2)) % dictionary.length);
  const schema: Schema = [{ name: "s", type: "string", nullable: true }];
  const { plain } = coded(dictionary, codes);
  const validity = Uint8Array.from(codes, (_, i) => (i % 3 === 0 ? 0 : 1));
  for (const v of [null, validity]) {
    const want = text({ schema, columns: [{ ...plain, validity: v }], length: 500 }, schema);
    // The values array stands for the rows only: stale or empty contents are not read.
    for (const rows of [new Array<string>(500), new Array<string>(500).fill("stale")]) {
      const column = exactCodedColumn(Uint32Array.from(codes), dictionary, v, rows);
      assert.equal(text({ schema, columns: [column], length: 500 }, schema), want);
    }
  }
  // More entries than rows: the rows are built, and written as they are.
  const few = [9, 2, 0];
  const column = exactCodedColumn(Uint32Array.from(few), dictionary, null, new Array(3));
  assert.deepEqual(column.values, ["x", "a,b", "LAX"]);
  assert.equal(text({ schema, columns: [column], length: 3 }, schema), 'x\n"a,b"\nLAX\n');
  // An entry with a lone surrogate fails at the first row that uses it, named.
  const bad = exactCodedColumn(Uint32Array.from([0, 0, 1]), ["ok", "bad\ud800"], null, [
    "",
    "",
    "",
  ]);
  assert.throws(
    () => renderRows(schema, { schema, columns: [bad], length: 3 }, CSV, 10),
    (e: unknown) => e instanceof IoError && /row 12 of column 's'/.test(e.message),
  );
});

Deno.test("CSV: int64 cells are their decimal text at every size", () => {
  const picks = [0n, 7n, -7n, 9n, 10n, 99n, 100n, -100n, 999n, 1000n, 9999n, 10000n, -10000n];
  for (let d = 5n; d < 19n; d++) picks.push(10n ** d - 1n, 10n ** d, -(10n ** d) - 3n);
  picks.push(2n ** 31n - 1n, -(2n ** 31n) + 1n, -(2n ** 31n) - 1n, 2n ** 32n, -(2n ** 32n));
  picks.push(2n ** 31n, -(2n ** 31n), 2n ** 53n - 1n, 2n ** 53n, -(2n ** 53n) + 1n, -(2n ** 53n));
  picks.push(-(2n ** 53n) - 1n, 2n ** 63n - 1n, -(2n ** 63n));
  const schema: Schema = [{ name: "a", type: "int64", nullable: true }, {
    name: "b",
    type: "int64",
    nullable: true,
  }];
  const values = BigInt64Array.from(picks);
  const validity = Uint8Array.from(picks, (_, i) => (i % 5 === 4 ? 0 : 1));
  const batch: Batch = {
    schema,
    columns: [
      { type: "int64", values, validity: null },
      { type: "int64", values: values.slice().reverse(), validity },
    ],
    length: picks.length,
  };
  const rows = picks.map((v, i) =>
    `${v},${validity[i] ? String(picks[picks.length - 1 - i]) : ""}\n`
  );
  assert.equal(text(batch, schema), rows.join(""));
});

Deno.test("CSV: int64 cells of a big batch (from the small integers' table) are their decimal text", () => {
  const schema: Schema = [{ name: "a", type: "int64", nullable: true }];
  const picks: bigint[] = [];
  for (let v = -1100n; v <= 10100n; v++) picks.push(v);
  picks.push(2n ** 31n - 1n, -(2n ** 31n), 2n ** 32n + 5n, -(2n ** 40n), 2n ** 63n - 1n);
  const validity = Uint8Array.from(picks, (_, i) => (i % 11 === 10 ? 0 : 1));
  for (const v of [null, validity]) {
    const batch: Batch = {
      schema,
      columns: [{ type: "int64", values: BigInt64Array.from(picks), validity: v }],
      length: picks.length,
    };
    const rows = picks.map((n, i) => (v === null || v[i] ? String(n) : "") + "\n");
    assert.equal(text(batch, schema), rows.join(""));
  }
});

Deno.test("CSV: timestamps render as TimestampFormatter formats them, repeated or not", () => {
  const day = 86_400n;
  for (const unit of ["s", "ms", "us", "ns"] as TimeUnit[]) {
    for (const zone of [undefined, "UTC"]) {
      const per = { s: 1n, ms: 1000n, us: 1_000_000n, ns: 1_000_000_000n }[unit];
      const picks: bigint[] = [];
      for (const secs of [0n, 59n, 3599n, 86399n, -1n, -day, 978_307_260n, 253_402_300_799n]) {
        picks.push(secs * per, secs * per, secs * per + (per > 1n ? 1n : 0n), secs * per);
      }
      picks.push(2n ** 53n, 2n ** 53n, -(2n ** 53n) - 5n, 2n ** 63n - 1n, -(2n ** 63n));
      picks.push(-(2n ** 53n) + 1n, 2n ** 53n - 1n, 1_000_000n * day * per, 0n);
      // (Seconds past int64 in ns wrap, as a column would hold them.)
      const ticks = picks.map((v) => BigInt.asIntN(64, v));
      const field: Field = { name: "t", type: "timestamp", nullable: true, unit, timezone: zone };
      const schema: Schema = [field];
      const validity = Uint8Array.from(ticks, (_, i) => (i % 7 === 6 ? 0 : 1));
      const batch: Batch = {
        schema,
        columns: [{ type: "timestamp", values: BigInt64Array.from(ticks), validity }],
        length: ticks.length,
      };
      const formatter = new TimestampFormatter(unit, false, zone !== undefined);
      const rows = ticks.map((v, i) => (validity[i] ? formatter.format(v) : "") + "\n");
      assert.equal(text(batch, schema), rows.join(""), `${unit} ${zone}`);
    }
  }
});

Deno.test("renderRows puts its bytes into a spare buffer big enough, overwriting its old bytes", () => {
  const schema: Schema = [{ name: "n", type: "float64", nullable: false }];
  const batch: Batch = {
    schema,
    columns: [{
      type: "float64",
      values: Float64Array.from({ length: 300 }, (_, i) => i * 37 - 900),
      validity: null,
    }],
    length: 300,
  };
  const fresh = renderRows(schema, batch, CSV, 0);
  const expected = new TextDecoder().decode(fresh.bytes);
  const small = new ArrayBuffer(16);
  const big = new ArrayBuffer(1 << 20);
  new Uint8Array(big).fill(0x41); // stale bytes of an earlier chunk
  const spare = [big, small];
  const reused = renderRows(schema, batch, CSV, 0, spare);
  // The small one is dropped (too small for the bytes), the big one taken.
  assert.equal(spare.length, 0);
  assert.equal(reused.bytes.buffer, big);
  assert.equal(new TextDecoder().decode(reused.bytes), expected);
  // None that fits: a fresh buffer, as without spares.
  const none = [new ArrayBuffer(16)];
  const again = renderRows(schema, batch, CSV, 0, none);
  assert.notEqual(again.bytes.buffer, none[0]);
  assert.equal(new TextDecoder().decode(again.bytes), expected);
});

Deno.test("renderRows's bytes are the one view of their buffer: moving it keeps V8's typed-array promise", async () => {
  // V8 reports the first detach in an isolate that breaks its ArrayBufferDetaching
  // protector; a buffer with one view does not, one with two (the control) does.
  const run = async (moved: string) => {
    const script = `
      import { renderRows } from ${
      JSON.stringify(new URL("./_write_text.ts", import.meta.url).href)
    };
      const schema = [{ name: "n", type: "int64", nullable: false }, { name: "t", type: "timestamp", unit: "s", nullable: false }];
      const values = BigInt64Array.from({ length: 2000 }, (_, i) => BigInt(i * 7 - 50));
      const batch = { schema, columns: [{ type: "int64", values, validity: null }, { type: "timestamp", values, validity: null }], length: 2000 };
      const spare = [new ArrayBuffer(1 << 16)];
      for (let i = 0; i < 3; i++) {
        const r = renderRows(schema, batch, { format: "csv", delimiter: "," }, 0, i === 1 ? spare : undefined);
        const buffer = ${moved};
        structuredClone(buffer, { transfer: [buffer] });
        if (r.bytes.length !== 0) throw new Error("the bytes were not moved");
      }
      console.log("moved");
    `;
    const text = await evalTracingDetach(script);
    assert.match(text, /moved/);
    return text;
  };
  assert.doesNotMatch(await run("r.bytes.buffer"), DETACH_PROTECTOR_BROKEN);
  assert.match(await run("(r.bytes.subarray(1), r.bytes.buffer)"), DETACH_PROTECTOR_BROKEN);
});

Deno.test("writeCsv recycles rendered rows only once their bytes are written", async () => {
  const schema: Schema = [{ name: "n", type: "float64", nullable: false }];
  const batch: Batch = {
    schema,
    columns: [{ type: "float64", values: Float64Array.from([1, 2, 3]), validity: null }],
    length: 3,
  };
  const events: string[] = [];
  const rendered = renderRows(schema, batch, CSV, 0);
  const chunks: string[] = [];
  const file = {
    write: (p: Uint8Array) => {
      events.push("write");
      chunks.push(new TextDecoder().decode(p));
      return Promise.resolve(p.length);
    },
  };
  const rows = await writeCsv(file, schema, [{
    ...rendered,
    recycle: () => events.push("recycle"),
  }], ",");
  assert.equal(rows, 3);
  assert.equal(chunks.join(""), "n\n1.0\n2.0\n3.0\n");
  assert.equal(events.lastIndexOf("write") < events.indexOf("recycle"), true);
  assert.equal(events.filter((e) => e === "recycle").length, 1);
});
