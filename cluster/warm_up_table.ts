/**
 * The built-in table a fresh master and worker warm up on (`master/_warm_up.ts`,
 * `worker/_warm_up.ts`): the column kinds a CSV source most often has (an id, a decimal
 * number with gaps, a label, a time), made up row by row, so neither needs a file of
 * its own nor its own copy of the rows.
 *
 * @module
 */

/** The table's header line, naming its columns in order. */
export const WARM_UP_HEADER = "id,amount,label,at";

/**
 * The table's data rows as CSV text, each ended by a line feed (no header).
 *
 * @param rows How many rows.
 * @returns The rows' text.
 */
export function warmUpRows(rows: number): string {
  const lines: string[] = [];
  for (let i = 0; i < rows; i++) {
    const amount = i % 17 === 0 ? "" : ((i * 37) % 1000 / 8).toString();
    const at = new Date(Date.UTC(2026, 0, 1, 0, i % 60, (i * 7) % 60)).toISOString()
      .replace("T", " ").replace(".000Z", "");
    lines.push(`${i},${amount},name-${(i * 13) % 11},${at}\n`);
  }
  return lines.join("");
}
