/**
 * The command line as a library: {@link run} runs one `permafrost` invocation with
 * a `CliIo` (the process's, or `captureIo()` in tests); `main.ts` calls it.
 *
 * @module
 */
export { run } from "./run.ts";
export { type CapturedIo, captureIo, type CliIo, enterCallerDirectory, processIo } from "./io.ts";
