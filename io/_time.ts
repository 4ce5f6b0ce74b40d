/**
 * Time units' scales and the day count → calendar date conversion, shared by the
 * text scanners (`_parse.ts`) and the text writers (`_format.ts`, `_write_text.ts`).
 * A module of its own so that a thaw, which only writes, does not load the 16 kB of
 * scanners for these few lines.
 *
 * Pure: no I/O.
 *
 * @module
 */
import type { TimeUnit } from "../format/column.ts";

/** The tick multipliers per second of each unit. */
export const TICKS_PER_SECOND: Readonly<Record<TimeUnit, number>> = {
  s: 1,
  ms: 1e3,
  us: 1e6,
  ns: 1e9,
};

/** Maximum number of fraction digits each unit holds. */
export const UNIT_DIGITS: Readonly<Record<TimeUnit, number>> = { s: 0, ms: 3, us: 6, ns: 9 };

/** The calendar date `[year, month, day]` of a day count since 1970-01-01. */
export function civilFromDays(days: number): [number, number, number] {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}
