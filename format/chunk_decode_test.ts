/**
 * Columns crossing between threads (`packColumns`, `unpackColumns`): the same rows
 * come out, a string column with dictionary codes travels as its codes when every row
 * is its code's entry, and as packed text otherwise.
 */
import assert from "node:assert/strict";
import { packColumns, unpackColumns } from "./chunk_decode.ts";
import { codesOf, withCodes } from "./coded_strings.ts";
import type { Column } from "./column.ts";

function coded(dictionary: string[], codes: number[]): string[] {
  return withCodes(
    codes.map((c) => dictionary[c]!),
    Uint32Array.from(codes),
    dictionary,
  );
}

Deno.test("packColumns() posts a coded string column as its codes, and unpackColumns() gives its rows and codes back", () => {
  const dictionary = ["SFO", "LAX", "a, b", ""];
  const codes = [0, 1, 1, 2, 3, 0, 2];
  const values = coded(dictionary, codes);
  const validity = Uint8Array.from([1, 1, 1, 1, 1, 1, 0]);
  const ints: Column = { type: "int64", values: BigInt64Array.from([1n, -2n, 3n]), validity: null };
  const expected = { validity: validity.slice(), ints: structuredClone(ints) };
  const { columns, transfer } = packColumns([{ type: "string", values, validity }, ints]);
  assert.ok("coded" in columns[0]!);
  assert.ok(!("packed" in columns[0]!));
  assert.ok(transfer.length >= 2);
  const cloned = structuredClone(columns, { transfer });
  const [strings, back] = unpackColumns(cloned);
  assert.deepEqual(strings!.values, values);
  assert.deepEqual(strings!.validity, expected.validity);
  const again = codesOf(strings!.values as string[]);
  assert.deepEqual([...again!.codes], codes);
  assert.deepEqual(again!.dictionary, dictionary);
  assert.deepEqual(back, expected.ints);
});

Deno.test("packColumns() packs the text of a coded column whose rows no longer match their codes", () => {
  const values = coded(["x", "y"], [0, 1, 0]);
  values[2] = "changed";
  const { columns } = packColumns([{ type: "string", values, validity: null }]);
  assert.ok("packed" in columns[0]!);
  assert.deepEqual(unpackColumns(columns)[0]!.values, ["x", "y", "changed"]);
});

Deno.test("packColumns() packs the text of a string column without codes, json columns included", () => {
  const text: Column = { type: "string", values: ["a", "\u{1F600}", ""], validity: null };
  const json: Column = { type: "json", values: ['{"a":1}', "[]", "null"], validity: null };
  const { columns } = packColumns([text, json]);
  assert.ok(columns.every((c) => "packed" in c));
  assert.deepEqual(unpackColumns(columns), [text, json]);
});
