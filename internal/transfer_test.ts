import assert from "node:assert/strict";
import { movable } from "./transfer.ts";

Deno.test("movable() moves a view that owns its buffer and copies any other", () => {
  const moving = new Set<ArrayBuffer>();
  const whole = new Int32Array([1, 2, 3]);
  assert.equal(movable(whole, moving), whole);
  const part = new Uint8Array(16).subarray(4, 8);
  part.set([9, 8, 7, 6]);
  const copied = movable(part, moving);
  assert.notEqual(copied, part);
  assert.deepEqual([...copied], [9, 8, 7, 6]);
  assert.equal(copied.byteLength, copied.buffer.byteLength);
  // The same buffer twice would throw in postMessage: the second view is copied.
  const again = new Int32Array(whole.buffer);
  assert.notEqual(movable(again, moving), again);
  assert.equal(moving.size, 3);
  const channel = new MessageChannel();
  channel.port1.postMessage(null, [...moving]);
  channel.port1.close();
  channel.port2.close();
  assert.equal(whole.buffer.byteLength, 0, "moved, so detached here");
  assert.equal(part.buffer.byteLength, 16, "the larger buffer stays");
});
