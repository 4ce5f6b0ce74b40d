/**
 * `Field` and `Schema` values: checked construction (every refusal is BAD_OPTION
 * naming the column), JSON round trips for random schemas of every type, an
 * archive's schema read back, and a built schema driving `thaw({ schema })`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tableFromArrays } from "apache-arrow";
import { COLUMN_TYPES, type ColumnType } from "../format/column.ts";
import { OpsError } from "./errors.ts";
import { freeze } from "./freeze.ts";
import { Field, Schema } from "./schema.ts";
import { thawTable } from "./thaw.ts";

const dir = await Deno.makeTempDir({ prefix: "permafrost-schema-" });

function refused(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof OpsError, String(err));
    assert.equal(err.code, "BAD_OPTION");
    assert.match(err.message, pattern);
    return true;
  });
}

Deno.test("Field.of() builds frozen fields with the type's defaults", () => {
  const at = Field.of("at", "timestamp");
  assert.deepEqual(at, { name: "at", type: "timestamp", nullable: true, unit: "us" });
  assert.ok(Object.isFrozen(at));
  assert.deepEqual(Field.of("id", "int64", { nullable: false }), {
    name: "id",
    type: "int64",
    nullable: false,
  });
  assert.equal(Field.text(Field.of("p", "decimal", { precision: 10, scale: 2 })), "decimal(10,2)");
  assert.equal(
    Field.text(Field.of("t", "timestamp", { unit: "ms", timezone: "UTC" })),
    "timestamp[ms, UTC]",
  );
});

Deno.test("Field.of() refuses what no column can be, naming the field", () => {
  refused(() => Field.of("", "int64"), /needs a name/);
  refused(() => Field.of("x", "integer" as ColumnType), /'x' has type 'integer': use int64/);
  refused(() => Field.of("x", "int64", { unit: "ms" }), /'x' is a int64: only timestamp/);
  refused(() => Field.of("x", "time", { unit: "m" as "ms" }), /'x' has unit 'm'/);
  refused(() => Field.of("x", "date", { timezone: "UTC" }), /only a timestamp takes a timezone/);
  refused(() => Field.of("x", "decimal"), /'x' is a decimal: give precision/);
  refused(() => Field.of("x", "decimal", { precision: 77, scale: 0 }), /precision 1..76/);
  refused(() => Field.of("x", "decimal", { precision: 5, scale: 6 }), /scale 0..precision/);
  refused(() => Field.of("x", "string", { scale: 2 }), /only a decimal takes precision/);
});

Deno.test("Schema.of() refuses a name used twice", () => {
  refused(
    () => Schema.of([Field.of("a", "int64"), Field.of("a", "string")]),
    /names column 'a' twice/,
  );
});

Deno.test("Schema.toJson() and Schema.parse() round-trip random schemas of every type", () => {
  let x = 7;
  const next = (n: number) => (x = (x * 1103515245 + 12345) % 2147483648) % n;
  for (let round = 0; round < 200; round++) {
    const fields = Array.from({ length: 1 + next(8) }, (_, i) => {
      const type = COLUMN_TYPES[next(COLUMN_TYPES.length)]!;
      const nullable = next(2) === 0;
      if (type === "decimal") {
        const precision = 1 + next(76);
        return Field.of(`c${i}`, type, { nullable, precision, scale: next(precision + 1) });
      }
      if (type === "timestamp") {
        const timezone = ["UTC", "+05:30", "Europe/Oslo", undefined][next(4)];
        return Field.of(`c${i}`, type, { nullable, unit: "ns", timezone });
      }
      if (type === "time" || type === "duration") {
        return Field.of(`c${i} ü`, type, {
          nullable,
          unit: (["s", "ms", "us", "ns"] as const)[next(4)],
        });
      }
      return Field.of(`c${i}`, type, { nullable });
    });
    const schema = Schema.of(fields);
    assert.deepEqual(Schema.parse(Schema.toJson(schema)), schema);
  }
});

Deno.test("Schema.fromArchive() reads what freeze recorded; a built schema drives thaw", async () => {
  const path = join(dir, "t.pf");
  const table = tableFromArrays({
    id: BigInt64Array.of(1n, 2n, 3n),
    city: ["Oslo", "Lima", "Pune"],
  });
  await freeze(table, path, { threads: 0 });
  const stored = await Schema.fromArchive(path);
  assert.deepEqual(stored.map((f) => [f.name, f.type]), [["id", "int64"], ["city", "string"]]);
  assert.equal(Schema.field(stored, "city")?.type, "string");
  assert.equal(Schema.field(stored, "nope"), undefined);
  const target = Schema.of([
    Field.of("city", "string"),
    Field.of("id", "decimal", { precision: 20, scale: 0 }),
    Field.of("note", "string"),
  ]);
  const diff = Schema.diff(stored, target);
  assert.ok(diff.compatible);
  const rows = (await thawTable(path, { schema: target })).toArray().map((r) => r.toJSON());
  assert.deepEqual(rows.map((r) => [r.city, String(r.id), r.note]), [
    ["Oslo", "1", null],
    ["Lima", "2", null],
    ["Pune", "3", null],
  ]);
  await Deno.remove(dir, { recursive: true });
});
