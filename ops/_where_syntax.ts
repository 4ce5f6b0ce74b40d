/**
 * The syntax of `--where` (the grammar is in `where.ts`): the expression tree, the
 * tokenizer and the parser. Pure; a bad expression is `OpsError` BAD_OPTION saying
 * where and what to fix.
 *
 * @module
 */
import { OpsError } from "./errors.ts";

/** Comparison operators (after normalizing `==` to `=` and `<>` to `!=`). */
export type WhereOp = "=" | "!=" | "<" | "<=" | ">" | ">=";

/** A value as written in the expression, before it is read as a column's type. */
export interface WhereLiteral {
  /** The text (quotes removed). */
  text: string;
  /** Whether it was single-quoted (then it is never a keyword or number). */
  quoted: boolean;
}

/** A parsed `--where` expression (not yet checked against a schema). */
export type WhereNode =
  | { kind: "cmp"; column: string; op: WhereOp; value: WhereLiteral }
  | { kind: "in"; column: string; values: WhereLiteral[]; negated: boolean }
  | { kind: "null"; column: string; negated: boolean }
  | { kind: "and" | "or"; args: WhereNode[] }
  | { kind: "not"; arg: WhereNode };

interface Token {
  kind: "word" | "string" | "ident" | "op" | "(" | ")" | ",";
  text: string;
  pos: number;
}

/**
 * Deepest nesting of `(` and `not` an expression may have: parsing and evaluation
 * recurse once per level, so a deeper one is refused with a message, not a stack
 * overflow.
 */
export const MAX_WHERE_DEPTH = 100;

const KEYWORDS = new Set(["and", "or", "not", "in", "is", "null"]);
const WORD_STOP = new Set([..." \t\r\n()',=<>!\"`"]);

/** The error of an expression that cannot be used, pointing at `pos` when given. */
export function bad(text: string, message: string, pos?: number): OpsError {
  const where = pos === undefined ? "" : ` at character ${pos + 1}`;
  // A machine-made expression can be huge: its start names it well enough.
  const shown = text.length > 120 ? `${text.slice(0, 100)}…` : text;
  return new OpsError("BAD_OPTION", `Cannot use --where "${shown}": ${message}${where}`);
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === " " || c === "\t" || c === "\r" || c === "\n") {
      i++;
      continue;
    }
    if (c === "(" || c === ")" || c === ",") {
      tokens.push({ kind: c, text: c, pos: i });
      i++;
      continue;
    }
    if (c === "'" || c === '"' || c === "`") {
      const start = i;
      let out = "";
      i++;
      for (;;) {
        if (i >= text.length) {
          throw bad(text, `the quote ${c} opened here is never closed`, start);
        }
        if (text[i] === c) {
          if (text[i + 1] === c) {
            out += c;
            i += 2;
            continue;
          }
          i++;
          break;
        }
        out += text[i];
        i++;
      }
      tokens.push({ kind: c === "'" ? "string" : "ident", text: out, pos: start });
      continue;
    }
    const two = text.slice(i, i + 2);
    if (two === "<=" || two === ">=" || two === "!=" || two === "<>" || two === "==") {
      tokens.push({ kind: "op", text: two === "<>" ? "!=" : two === "==" ? "=" : two, pos: i });
      i += 2;
      continue;
    }
    if (c === "<" || c === ">" || c === "=") {
      tokens.push({ kind: "op", text: c, pos: i });
      i++;
      continue;
    }
    if (c === "!") throw bad(text, "'!' must be followed by '=' ('!=')", i);
    const start = i;
    while (i < text.length && !WORD_STOP.has(text[i]!)) i++;
    tokens.push({ kind: "word", text: text.slice(start, i), pos: start });
  }
  return tokens;
}

/**
 * Parses a `--where` expression.
 *
 * @param text The expression, e.g. `delay > 60 and origin in ('SFO', 'LAX')`.
 * @returns Its syntax tree.
 * @throws {OpsError} BAD_OPTION naming what is wrong and where.
 *
 * @example Parse a comparison joined with a null test
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseWhere } from "./where.ts";
 * const node = parseWhere("delay > 60 and origin is not null");
 * assert.equal(node.kind, "and");
 * assert.throws(() => parseWhere("delay >"), { code: "BAD_OPTION" });
 * ```
 */
export function parseWhere(text: string): WhereNode {
  if (typeof text !== "string" || text.trim() === "") {
    throw new OpsError(
      "BAD_OPTION",
      `Cannot use an empty --where: write a condition such as "delay > 60"`,
    );
  }
  const tokens = tokenize(text);
  let at = 0;
  const peek = () => tokens[at];
  const isKw = (t: Token | undefined, kw: string) =>
    t?.kind === "word" && t.text.toLowerCase() === kw;
  const endPos = text.length;
  const describe = (t: Token | undefined) => (t ? `'${t.text}'` : "the end");
  let depth = 0;
  const nest = (t: Token) => {
    if (++depth > MAX_WHERE_DEPTH) {
      throw bad(
        text,
        `it nests '(' and 'not' more than ${MAX_WHERE_DEPTH} deep; write it flatter (e.g. with 'in' lists)`,
        t.pos,
      );
    }
  };

  const parseOr = (): WhereNode => {
    const args = [parseAnd()];
    while (isKw(peek(), "or")) {
      at++;
      args.push(parseAnd());
    }
    return args.length === 1 ? args[0]! : { kind: "or", args };
  };
  const parseAnd = (): WhereNode => {
    const args = [parseUnary()];
    while (isKw(peek(), "and")) {
      at++;
      args.push(parseUnary());
    }
    return args.length === 1 ? args[0]! : { kind: "and", args };
  };
  const parseUnary = (): WhereNode => {
    const t = peek();
    if (isKw(t, "not")) {
      at++;
      nest(t!);
      const arg = parseUnary();
      depth--;
      return { kind: "not", arg };
    }
    if (t?.kind === "(") {
      at++;
      nest(t);
      const inner = parseOr();
      depth--;
      const close = peek();
      if (close?.kind !== ")") {
        throw bad(
          text,
          `expected ')' to close the '(' at character ${t.pos + 1}, found ${describe(close)}`,
          close?.pos ?? endPos,
        );
      }
      at++;
      return inner;
    }
    return parsePredicate();
  };
  const parseValue = (): WhereLiteral => {
    const t = peek();
    if (t?.kind === "string") {
      at++;
      return { text: t.text, quoted: true };
    }
    if (t?.kind === "word" && !KEYWORDS.has(t.text.toLowerCase())) {
      at++;
      return { text: t.text, quoted: false };
    }
    if (isKw(t, "null")) {
      throw bad(
        text,
        "a comparison with null is never true: use 'is null' or 'is not null'",
        t!.pos,
      );
    }
    throw bad(
      text,
      `expected a value, found ${describe(t)} (quote text with single quotes: 'like this')`,
      t?.pos ?? endPos,
    );
  };
  const parsePredicate = (): WhereNode => {
    const t = peek();
    if (!t || !(t.kind === "ident" || (t.kind === "word" && !KEYWORDS.has(t.text.toLowerCase())))) {
      throw bad(text, `expected a column name, found ${describe(t)}`, t?.pos ?? endPos);
    }
    at++;
    const column = t.text;
    const next = peek();
    if (next?.kind === "op") {
      at++;
      return { kind: "cmp", column, op: next.text as WhereOp, value: parseValue() };
    }
    if (isKw(next, "is")) {
      at++;
      let negated = false;
      if (isKw(peek(), "not")) {
        at++;
        negated = true;
      }
      const n = peek();
      if (!isKw(n, "null")) {
        throw bad(
          text,
          `expected 'null' after 'is${negated ? " not" : ""}', found ${describe(n)}`,
          n?.pos ?? endPos,
        );
      }
      at++;
      return { kind: "null", column, negated };
    }
    let negated = false;
    if (isKw(next, "not") && isKw(tokens[at + 1], "in")) {
      at++;
      negated = true;
    }
    if (isKw(peek(), "in")) {
      at++;
      const open = peek();
      if (open?.kind !== "(") {
        throw bad(text, `expected '(' after 'in', found ${describe(open)}`, open?.pos ?? endPos);
      }
      at++;
      const values = [parseValue()];
      while (peek()?.kind === ",") {
        at++;
        values.push(parseValue());
      }
      const close = peek();
      if (close?.kind !== ")") {
        throw bad(
          text,
          `expected ',' or ')' in the 'in' list, found ${describe(close)}`,
          close?.pos ?? endPos,
        );
      }
      at++;
      return { kind: "in", column, values, negated };
    }
    throw bad(
      text,
      `expected an operator (= != < <= > >=), 'in', 'not in' or 'is' after column "${column}", found ${
        describe(next)
      }`,
      next?.pos ?? endPos,
    );
  };

  const node = parseOr();
  if (at < tokens.length) {
    const t = tokens[at]!;
    throw bad(text, `unexpected ${describe(t)}; join conditions with 'and' or 'or'`, t.pos);
  }
  return node;
}
