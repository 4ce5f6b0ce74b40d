/**
 * `schemaDiff` (every kind of change, with the compatibility rules that keep values
 * exact), `diff` reporting it for two real archives, and `audit`'s `stored_schema`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { Field } from "../format/column.ts";
import { diff, formatDiff } from "./diff.ts";
import { freeze } from "./freeze.ts";
import { audit } from "./inspect.ts";
import { schemaDiff } from "./schema_diff.ts";

const f = (name: string, type: Field["type"], extra: Partial<Field> = {}): Field => ({
  name,
  type,
  nullable: true,
  ...extra,
});

Deno.test("schemaDiff() names each change and whether old values survive it exactly", () => {
  const cases: [Field, Field, boolean][] = [
    [f("a", "int64"), f("a", "string"), true],
    [f("a", "int64"), f("a", "decimal", { precision: 20, scale: 1 }), true],
    [f("a", "int64"), f("a", "decimal", { precision: 10, scale: 2 }), false],
    [f("a", "int64"), f("a", "float64"), false],
    [
      f("a", "decimal", { precision: 10, scale: 2 }),
      f("a", "decimal", { precision: 12, scale: 2 }),
      true,
    ],
    [
      f("a", "decimal", { precision: 12, scale: 2 }),
      f("a", "decimal", { precision: 10, scale: 2 }),
      false,
    ],
    [
      f("a", "decimal", { precision: 10, scale: 2 }),
      f("a", "decimal", { precision: 12, scale: 3 }),
      false,
    ],
    [f("a", "date"), f("a", "timestamp", { unit: "us" }), true],
    [f("a", "timestamp", { unit: "ms" }), f("a", "timestamp", { unit: "ns" }), true],
    [f("a", "timestamp", { unit: "us" }), f("a", "timestamp", { unit: "s" }), false],
    [
      f("a", "timestamp", { unit: "us", timezone: "UTC" }),
      f("a", "timestamp", { unit: "us" }),
      false,
    ],
    [f("a", "time", { unit: "us" }), f("a", "time", { unit: "ns" }), true],
    [f("a", "float64"), f("a", "int64"), false],
    [f("a", "string"), f("a", "json"), false],
  ];
  for (const [from, to, ok] of cases) {
    const d = schemaDiff([from], [to]);
    assert.equal(d.changes.length, 1, `${JSON.stringify(from)} -> ${JSON.stringify(to)}`);
    assert.equal(d.changes[0]!.kind, "type_changed");
    assert.equal(d.changes[0]!.compatible, ok, `${d.changes[0]!.from} -> ${d.changes[0]!.to}`);
    assert.equal(d.compatible, ok);
  }
  const a = [f("id", "int64", { nullable: false }), f("gone", "string"), f("x", "float64")];
  const b = [
    f("x", "float64", { nullable: false }),
    f("id", "int64"),
    f("note", "string"),
    f("must", "int64", { nullable: false }),
  ];
  const d = schemaDiff(a, b);
  assert.deepEqual(d.changes.map((c) => [c.column, c.kind, c.from, c.to, c.compatible]), [
    ["id", "nullability_changed", "not null", "nullable", true],
    ["gone", "removed", "string", null, true],
    ["x", "nullability_changed", "nullable", "not null", false],
    ["note", "added", null, "string", true],
    ["must", "added", null, "int64", false],
  ]);
  assert.equal(d.reordered, true);
  assert.equal(d.compatible, false);
  assert.deepEqual(schemaDiff(a, a), { changes: [], reordered: false, compatible: true });
});

Deno.test("diff reports schema changes; audit reports the stored schema", async () => {
  const dir = await Deno.makeTempDir({ prefix: "permafrost-schema-diff-" });
  try {
    await Deno.writeTextFile(
      join(dir, "a.csv"),
      "id,price,day\n1,1.50,2024-01-02\n2,2.25,2024-01-03\n",
    );
    const types = (p: number) => ({
      price: { type: "decimal" as const, precision: p, scale: 2 },
    });
    await freeze(join(dir, "a.csv"), join(dir, "a.pf"), { threads: 0, types: types(10) });
    await freeze(join(dir, "a.csv"), join(dir, "b.pf"), { threads: 0, types: types(12) });
    const report = await diff(join(dir, "a.pf"), join(dir, "b.pf"));
    assert.deepEqual(report.schema.changes.map((c) => [c.column, c.from, c.to, c.compatible]), [
      ["price", "decimal(10,2)", "decimal(12,2)", true],
    ]);
    assert.ok(report.header_changes.includes(`column "price" type decimal(10,2) -> decimal(12,2)`));
    await freeze(join(dir, "a.csv"), join(dir, "c.pf"), {
      threads: 0,
      types: { price: { type: "string" } },
    });
    const back = await diff(join(dir, "c.pf"), join(dir, "a.pf"));
    assert.equal(back.schema.compatible, false);
    assert.match(formatDiff(back), /schema {3}column "price" type changed is not compatible/);

    const stored = JSON.parse((await audit(join(dir, "a.pf"))).stored_schema);
    assert.deepEqual(stored.fields.map((x: { name: string }) => x.name), ["id", "price", "day"]);
    const price = stored.fields[1];
    assert.equal(price.type.name, "decimal");
    assert.equal(price.type.precision, 10);
    assert.equal(price.type.scale, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
