import assert from "node:assert/strict";
import { crc32c } from "./_crc32c.ts";
import { amzDate, signV4 } from "./_sigv4.ts";

const SCOPE = {
  region: "us-east-1",
  service: "service",
  credentials: {
    accessKeyId: "AKIDEXAMPLE",
    secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
  },
};
const PREFIX =
  "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=";

Deno.test("signV4() matches AWS's Signature V4 test suite", async (t) => {
  // aws-sig-v4-test-suite: get-vanilla, post-vanilla, get-vanilla-query-order-key-case.
  const headers = { Host: "example.amazonaws.com", "X-Amz-Date": "20150830T123600Z" };
  for (
    const [name, method, url, signature] of [
      [
        "get-vanilla",
        "GET",
        "https://example.amazonaws.com/",
        "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
      ],
      [
        "post-vanilla",
        "POST",
        "https://example.amazonaws.com/",
        "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b",
      ],
      [
        "get-vanilla-query-order-key-case",
        "GET",
        "https://example.amazonaws.com/?Param2=value2&Param1=value1",
        "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500",
      ],
    ] as const
  ) {
    await t.step(name, () => {
      const auth = signV4({ method, url: new URL(url), headers, body: new Uint8Array(0) }, SCOPE);
      assert.equal(auth, PREFIX + signature);
    });
  }
});

Deno.test("amzDate() formats a time as YYYYMMDDTHHMMSSZ", () => {
  assert.equal(amzDate(new Date("2015-08-30T12:36:00.123Z")), "20150830T123600Z");
});

Deno.test("crc32c() gives the Castagnoli check value", () => {
  assert.equal(crc32c(new TextEncoder().encode("123456789")), 0xe3069283);
  assert.equal(crc32c(new Uint8Array(0)), 0);
});
