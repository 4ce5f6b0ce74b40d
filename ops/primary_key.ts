/**
 * The primary-key check of `freeze`, `append` and the partitioned freeze: a key
 * column's values must be non-null and unique across every row written, and the
 * first offender is named with its row number.
 *
 * @module
 */
import type { Batch, Column, Schema } from "../format/column.ts";
import { cellValue } from "../format/column.ts";
import { OpsError } from "./errors.ts";

/** Refuses null and duplicate primary keys, naming the first offender. */
export class PrimaryKeyCheck {
  #index: number;
  #name: string;
  #seen = new Set<unknown>();

  /**
   * @param schema The rows' schema.
   * @param name The key column.
   */
  constructor(schema: Schema, name: string) {
    this.#index = schema.findIndex((f) => f.name === name);
    this.#name = name;
  }

  /**
   * Checks the keys of a batch against every key seen so far.
   *
   * @param batch Rows.
   * @param firstRow Row number of the batch's first row (for messages).
   * @throws {OpsError} PRIMARY_KEY on a null or repeated key.
   */
  add(batch: Batch, firstRow: number): void {
    const column = batch.columns[this.#index] as Column;
    for (let i = 0; i < batch.length; i++) {
      const v = cellValue(column, i);
      if (v === null) {
        throw new OpsError(
          "PRIMARY_KEY",
          `Primary key "${this.#name}" is null at row ${firstRow + i}`,
        );
      }
      if (this.#seen.has(v)) {
        throw new OpsError(
          "PRIMARY_KEY",
          `Primary key "${this.#name}" repeats value ${JSON.stringify(String(v))} at row ${
            firstRow + i
          }`,
        );
      }
      this.#seen.add(v);
    }
  }
}
