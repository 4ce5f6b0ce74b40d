/**
 * One cell as the text the CSV writer would write for it: the public face of
 * `_format.ts` for callers outside `io/` (peek's table, partition directory names,
 * messages). Every form reads back to the same value (see `_format.ts`).
 *
 * Pure: no I/O.
 *
 * @module
 */
import { cellValue, type Column, type Field } from "../format/column.ts";
import { numberToFloat16 } from "../format/float16.ts";
import { formatDecimal } from "../format/decimal_value.ts";
import {
  formatDate,
  formatDuration,
  formatFloat,
  formatFloat16,
  formatFloat32,
  formatTime,
  TimestampFormatter,
} from "./_format.ts";

/**
 * The text of one non-null value of `field`'s type, as the CSV writer writes it:
 * `2024-01-31 10:20:30.123456`, `12.30`, `PT1H`, `{"a":1}`, …
 *
 * @param v A value as `cellValue` returns it (not null).
 * @param field Its field.
 * @returns The text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { valueText } from "./cell_text.ts";
 * assert.equal(valueText(1230n, { name: "p", type: "decimal", nullable: true, precision: 9, scale: 2 }), "12.30");
 * assert.equal(valueText(19753n, { name: "d", type: "date", nullable: true }), "2024-01-31");
 * ```
 */
export function valueText(v: bigint | number | boolean | string, field: Field): string {
  const unit = field.unit ?? "us";
  switch (field.type) {
    case "date":
      return formatDate(Number(v));
    case "timestamp":
      return new TimestampFormatter(unit, false, field.timezone !== undefined).format(v as bigint);
    case "time":
      return formatTime(v as bigint, unit);
    case "duration":
      return formatDuration(v as bigint, unit);
    case "decimal":
      return formatDecimal(v as bigint, field.scale ?? 0);
    case "float64":
      return formatFloat(v as number, false);
    case "float32":
      return formatFloat32(v as number, false);
    case "float16":
      return formatFloat16(v as number, numberToFloat16(v as number), false);
    default:
      return String(v);
  }
}

/**
 * The text of row `row` of a column, or null for a null slot.
 *
 * @param column The column.
 * @param row The row.
 * @param field Its field.
 * @returns The text, or null.
 */
export function cellText(column: Column, row: number, field: Field): string | null {
  const v = cellValue(column, row);
  return v === null ? null : valueText(v, field);
}
