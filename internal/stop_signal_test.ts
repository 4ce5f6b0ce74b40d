import assert from "node:assert/strict";
import { stopSignal } from "./stop_signal.ts";

Deno.test("stopSignal() follows the given signal, and stop() aborts it at once", () => {
  const parent = new AbortController();
  const a = stopSignal(parent.signal);
  assert.equal(a.signal.aborted, false);
  parent.abort();
  assert.equal(a.signal.aborted, true);
  a.dispose();

  const b = stopSignal(new AbortController().signal);
  b.stop();
  assert.equal(b.signal.aborted, true);
  b.dispose();
});

Deno.test("stopSignal() of an already aborted signal starts aborted", () => {
  const parent = new AbortController();
  parent.abort();
  const s = stopSignal(parent.signal);
  assert.equal(s.signal.aborted, true);
  s.dispose();
});
