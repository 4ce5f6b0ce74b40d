/**
 * The environment variables the object stores read, by name, for the permission
 * lists of the processes that reach object storage (`--allow-env=…`; never a bare
 * `--allow-env`). Leaf module.
 *
 * @module
 */

/** `--allow-env` entries for the stores' settings and credentials. */
export const STORAGE_ENV: readonly string[] = Object.freeze([
  "AWS_*",
  "AZURE_*",
  "GOOGLE_APPLICATION_CREDENTIALS",
  "STORAGE_EMULATOR_HOST",
  "GCE_METADATA_HOST",
  // Where the upload journal lives (`journal.ts`), when PERMAFROST_STATE_DIR is unset.
  "XDG_STATE_HOME",
  "HOME",
]);
