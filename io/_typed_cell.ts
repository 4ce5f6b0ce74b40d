/**
 * Reads one text cell into a column of a type added in format 1.5 (time, duration,
 * decimal, json), for the CSV and JSON-lines readers when such a type is forced (an
 * append to an archive that holds one, or a caller's `types`). Each accepts exactly
 * the forms `_format.ts` writes, so a thawed file reads back to the same values.
 *
 * Pure: no I/O.
 *
 * @module
 */
import type { Field } from "../format/column.ts";
import { fitsPrecision, parseDecimal } from "../format/decimal_value.ts";
import type { ColumnBuilder } from "./_builder.ts";
import { parseDuration, parseTimeOfDay } from "./_parse.ts";

/**
 * Parses `text` as a value of `field`'s type into `col` at `row`.
 *
 * @param col The column builder.
 * @param row The row.
 * @param text The cell's text (a JSON value's source text for json).
 * @param field The field (`time`, `duration`, `decimal` or `json`).
 * @returns False when the text is not a value of the type; the caller reports it.
 */
export function readTypedCell(
  col: ColumnBuilder,
  row: number,
  text: string,
  field: Field,
): boolean {
  switch (field.type) {
    case "time":
    case "duration": {
      const unit = field.unit ?? "us";
      const v = field.type === "time" ? parseTimeOfDay(text, unit) : parseDuration(text, unit);
      if (v === null) return false;
      col.big[row] = v;
      return true;
    }
    case "decimal": {
      const v = parseDecimal(text, field.scale ?? 0);
      if (v === null || !fitsPrecision(v, field.precision ?? 0)) return false;
      col.setDecimal(row, v);
      return true;
    }
    case "json":
      try {
        JSON.parse(text);
      } catch {
        return false;
      }
      col.str[row] = text;
      return true;
    default:
      return false;
  }
}
