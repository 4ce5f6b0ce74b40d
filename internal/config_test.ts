import assert from "node:assert/strict";
import {
  boolParser,
  ConfigError,
  configMarkdown,
  enumParser,
  intParser,
  loadConfig,
  numberParser,
  parseArgs,
  pathParser,
  portParser,
  processEnv,
  setting,
  stringParser,
  urlParser,
} from "./config.ts";
import { PermafrostError } from "./errors.ts";

const TABLE = {
  host: setting({
    flag: "--host",
    env: "PERMAFROST_T_HOST",
    default: "127.0.0.1",
    parse: stringParser(),
    description: "Interface to listen on",
  }),
  port: setting({
    flag: "--port",
    env: "PERMAFROST_T_PORT",
    default: 8800,
    parse: portParser(),
    description: "Port",
  }),
  level: setting({
    flag: "--log-level",
    env: "PERMAFROST_T_LOG_LEVEL",
    default: "info" as const,
    parse: enumParser(["debug", "info", "warn", "error"]),
    description: "Log level",
  }),
  verbose: setting({
    flag: "--verbose",
    env: "PERMAFROST_T_VERBOSE",
    default: false,
    parse: boolParser(),
    description: "Chatty",
  }),
  db: setting({
    flag: "--db",
    env: "PERMAFROST_T_DB",
    parse: pathParser(),
    description: "Database file",
  }),
};

function assertConfigError(fn: () => unknown, code: string, ...parts: string[]): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ConfigError);
    assert.ok(err instanceof PermafrostError);
    assert.equal(err.code, code);
    for (const p of parts) assert.ok(err.message.includes(p), `"${err.message}" lacks "${p}"`);
    return true;
  });
}

Deno.test("parseArgs() reads --k v, --k=v, booleans, --no-k, aliases and --", () => {
  const opts = { boolean: ["wait", "color"], string: ["port", "codec"], alias: { h: "wait" } };
  assert.deepEqual(parseArgs(["a", "--port", "1", "--codec=zstd", "b"], opts), {
    _: ["a", "b"],
    flags: { port: "1", codec: "zstd" },
  });
  assert.deepEqual(parseArgs(["--wait", "--no-color", "-h"], opts).flags, {
    wait: true,
    color: false,
  });
  assert.deepEqual(parseArgs(["--wait=false"], opts).flags, { wait: false });
  assert.deepEqual(parseArgs(["--port", "1", "--port=2"], opts).flags, { port: "2" });
  assert.deepEqual(parseArgs(["--port", "-5"], opts).flags, { port: "-5" });
  assert.deepEqual(parseArgs(["--", "--port", "x"], opts), { _: ["--port", "x"], flags: {} });
  assert.deepEqual(parseArgs(["-"], opts), { _: ["-"], flags: {} });
  assert.deepEqual(parseArgs(["--codec="], opts).flags, { codec: "" });
});

Deno.test("parseArgs() refuses unknown flags and missing values", async (t) => {
  const opts = { boolean: ["wait"], string: ["port"] };
  await t.step("unknown long flag", () => {
    assertConfigError(() => parseArgs(["--prot", "1"], opts), "UNKNOWN_FLAG", "--prot", "--port");
  });
  await t.step("unknown short flag", () => {
    assertConfigError(() => parseArgs(["-x"], opts), "UNKNOWN_FLAG", "-x");
  });
  await t.step("string flag at the end", () => {
    assertConfigError(() => parseArgs(["--port"], opts), "BAD_CONFIG", "--port");
  });
  await t.step("string flag followed by another flag", () => {
    assertConfigError(() => parseArgs(["--port", "--wait"], opts), "BAD_CONFIG", "--port");
  });
  await t.step("boolean with a non-boolean value", () => {
    assertConfigError(() => parseArgs(["--wait=maybe"], opts), "BAD_CONFIG", "maybe");
  });
  await t.step("--no- on a string flag", () => {
    assertConfigError(() => parseArgs(["--no-port"], opts), "UNKNOWN_FLAG", "--no-port");
  });
});

Deno.test("loadConfig() takes flag over env over default", () => {
  const env = { PERMAFROST_T_PORT: "9100", PERMAFROST_T_HOST: "0.0.0.0", PERMAFROST_T_DB: "e.db" };
  const config = loadConfig(TABLE, { args: ["--port", "9000", "--db=f.db"], env });
  assert.deepEqual(config, {
    host: "0.0.0.0",
    port: 9000,
    level: "info",
    verbose: false,
    db: "f.db",
  });
  assert.ok(Object.isFrozen(config));
  assert.equal(loadConfig(TABLE, { env }).port, 9100);
  assert.equal(loadConfig(TABLE, { args: ["--db", "x"] }).port, 8800);
  assert.equal(
    loadConfig(TABLE, { args: ["--db", "x"], env: { PERMAFROST_T_PORT: "" } }).port,
    8800,
  );
});

Deno.test("loadConfig() parses booleans from flags and env", () => {
  const base = ["--db", "x"];
  assert.equal(loadConfig(TABLE, { args: [...base, "--verbose"] }).verbose, true);
  assert.equal(
    loadConfig(TABLE, { args: [...base, "--no-verbose"], env: { PERMAFROST_T_VERBOSE: "1" } })
      .verbose,
    false,
  );
  assert.equal(
    loadConfig(TABLE, { args: base, env: { PERMAFROST_T_VERBOSE: "yes" } }).verbose,
    true,
  );
  assert.equal(
    loadConfig(TABLE, { args: base, env: { PERMAFROST_T_VERBOSE: "off" } }).verbose,
    false,
  );
});

Deno.test("loadConfig() names flag and env var on a bad value", async (t) => {
  await t.step("bad flag value", () => {
    assertConfigError(
      () => loadConfig(TABLE, { args: ["--db", "x", "--port", "70000"] }),
      "BAD_CONFIG",
      "70000",
      "--port",
      "PERMAFROST_T_PORT",
    );
  });
  await t.step("bad env value", () => {
    assertConfigError(
      () => loadConfig(TABLE, { args: ["--db", "x"], env: { PERMAFROST_T_LOG_LEVEL: "loud" } }),
      "BAD_CONFIG",
      "loud",
      "--log-level",
      "PERMAFROST_T_LOG_LEVEL",
      "debug, info, warn, error",
    );
  });
  await t.step("missing required setting", () => {
    assertConfigError(() => loadConfig(TABLE, {}), "BAD_CONFIG", "--db", "PERMAFROST_T_DB");
  });
  await t.step("unknown flag", () => {
    assertConfigError(() => loadConfig(TABLE, { args: ["--dbb", "x"] }), "UNKNOWN_FLAG", "--dbb");
  });
  await t.step("positional argument", () => {
    assertConfigError(
      () => loadConfig(TABLE, { args: ["--db", "x", "extra"] }),
      "BAD_CONFIG",
      "extra",
    );
  });
});

Deno.test("parsers accept their values and refuse others", async (t) => {
  await t.step("intParser", () => {
    const p = intParser({ min: 1, max: 10 });
    assert.equal(p.parse(" 7 "), 7);
    assert.equal(intParser().parse("1_000"), 1000);
    for (const bad of ["0", "11", "1.5", "abc", "", "1e3"]) assert.throws(() => p.parse(bad));
  });
  await t.step("numberParser", () => {
    assert.equal(numberParser({ min: 0 }).parse("0.023"), 0.023);
    for (const bad of ["-1", "x", "", "Infinity"]) {
      assert.throws(() => numberParser({ min: 0 }).parse(bad));
    }
  });
  await t.step("portParser", () => {
    assert.equal(portParser().parse("0"), 0);
    assert.equal(portParser().parse("65535"), 65535);
    assert.throws(() => portParser().parse("65536"));
  });
  await t.step("urlParser", () => {
    assert.equal(urlParser().parse("http://127.0.0.1:8700/"), "http://127.0.0.1:8700");
    assert.throws(() => urlParser().parse("ftp://x"));
    assert.throws(() => urlParser().parse("localhost:8700"));
  });
  await t.step("enumParser", () => {
    assert.equal(enumParser(["a", "b"]).parse("b"), "b");
    assert.throws(() => enumParser(["a", "b"]).parse("c"));
  });
  await t.step("stringParser and pathParser", () => {
    assert.throws(() => stringParser().parse(" "));
    assert.equal(stringParser({ nonEmpty: false }).parse(""), "");
    assert.equal(pathParser().parse("data/x.db"), "data/x.db");
    assert.throws(() => pathParser().parse(""));
  });
  await t.step("boolParser", () => {
    assert.equal(boolParser().parse("TRUE"), true);
    assert.equal(boolParser().parse("no"), false);
    assert.throws(() => boolParser().parse("maybe"));
  });
});

Deno.test("processEnv() reads only the table's PERMAFROST_* variables", () => {
  // Runs with or without env permission: unreadable variables count as unset.
  const env = processEnv(TABLE);
  for (const k of Object.keys(env)) assert.ok(k.startsWith("PERMAFROST_T_"));
});

Deno.test("configMarkdown() lists every setting", () => {
  const md = configMarkdown(TABLE);
  for (const s of Object.values(TABLE)) {
    assert.ok(md.includes(`\`${s.flag}\``));
    assert.ok(md.includes(`\`${s.env}\``));
  }
  assert.ok(md.includes("(required)"));
});
