/**
 * The Arrow IPC framing written without apache-arrow, for schemas whose every column
 * is int64, timestamp, float64 or string (the types `_arrow_parts.ts` builds buffers
 * for): the Schema message, each RecordBatch message header and the file Footer as
 * flatbuffers, the bodies from {@link ArrowParts}, and the file or stream framing
 * around them. Loading apache-arrow (a large npm graph plus Node compatibility) only to
 * frame buffers the Workers already built cost a thaw to Arrow ~100 ms.
 *
 * The bytes are apache-arrow 21.2.0's, byte for byte (`_arrow_ipc_test.ts` compares
 * them): {@link FlatBuilder} is a port of the `flatbuffers` 25.9.23 JS builder
 * (alignment, padding, vtable sharing), and the encoders call it in the order
 * `src/ipc/metadata/message.ts`, `file.ts` and `src/ipc/writer.ts` do (no custom
 * metadata: the handled fields have none, nor do the schema and batches). Any other
 * type keeps apache-arrow's writer ({@link ipcHandles} says which).
 *
 * @module
 */
import type { Field, Schema, TimeUnit } from "../format/column.ts";
import type { ArrowColumnParts, ArrowParts } from "./arrow_table.ts";
import { IoError } from "./errors.ts";

/** Arrow's `MetadataVersion.V5`. */
const V5 = 4;
/** `MessageHeader` values. */
const HEADER_SCHEMA = 1;
const HEADER_RECORD_BATCH = 3;
/** Flatbuffer `Type` union ids. */
const TYPE_INT = 2;
const TYPE_FLOAT = 3;
const TYPE_UTF8 = 5;
const TYPE_TIMESTAMP = 10;
const UNIT: Record<TimeUnit, number> = { s: 0, ms: 1, us: 2, ns: 3 };
const MAGIC = new Uint8Array([0x41, 0x52, 0x52, 0x4f, 0x57, 0x31]); // "ARROW1"

/** Whether every column of the schema is of a type this module writes. */
export function ipcHandles(schema: Schema): boolean {
  return schema.every((f) =>
    f.type === "int64" || f.type === "float64" || f.type === "string" || f.type === "timestamp"
  );
}

/**
 * A flatbuffer builder that writes back to front, as `flatbuffers`' `Builder` does,
 * with the methods the Arrow encoders use. Offsets count from the buffer's end.
 */
export class FlatBuilder {
  private bytes = new Uint8Array(1024);
  private view = new DataView(this.bytes.buffer);
  private space = 1024;
  private minalign = 1;
  private vtable: number[] = [];
  private vtableInUse = 0;
  private objectStart = 0;
  private vtables: number[] = [];
  private vectorNumElems = 0;
  private readonly encoder = new TextEncoder();

  offset(): number {
    return this.bytes.length - this.space;
  }

  private grow(): void {
    const old = this.bytes;
    const next = new Uint8Array(old.length * 2);
    next.set(old, next.length - old.length);
    this.space += next.length - old.length;
    this.bytes = next;
    this.view = new DataView(next.buffer);
  }

  prep(size: number, additional: number): void {
    if (size > this.minalign) this.minalign = size;
    const alignSize = (~(this.bytes.length - this.space + additional) + 1) & (size - 1);
    while (this.space < alignSize + size + additional) this.grow();
    this.pad(alignSize);
  }

  pad(n: number): void {
    // Explicit zeros: a vtable found shared leaves its bytes below `space`.
    for (let i = 0; i < n; i++) this.bytes[--this.space] = 0;
  }

  writeInt8(v: number): void {
    this.view.setInt8(this.space -= 1, v);
  }
  writeInt16(v: number): void {
    this.view.setInt16(this.space -= 2, v, true);
  }
  writeInt32(v: number): void {
    this.view.setInt32(this.space -= 4, v, true);
  }
  writeInt64(v: number): void {
    this.view.setBigInt64(this.space -= 8, BigInt(v), true);
  }

  addInt8(v: number): void {
    this.prep(1, 0);
    this.writeInt8(v);
  }
  addInt16(v: number): void {
    this.prep(2, 0);
    this.writeInt16(v);
  }
  addInt32(v: number): void {
    this.prep(4, 0);
    this.writeInt32(v);
  }
  addInt64(v: number): void {
    this.prep(8, 0);
    this.writeInt64(v);
  }

  addOffset(offset: number): void {
    this.prep(4, 0);
    this.writeInt32(this.offset() - offset + 4);
  }

  private slot(voffset: number): void {
    this.vtable[voffset] = this.offset();
  }
  fieldInt8(voffset: number, v: number, dflt: number): void {
    if (v !== dflt) (this.addInt8(v), this.slot(voffset));
  }
  fieldInt16(voffset: number, v: number, dflt: number): void {
    if (v !== dflt) (this.addInt16(v), this.slot(voffset));
  }
  fieldInt32(voffset: number, v: number, dflt: number): void {
    if (v !== dflt) (this.addInt32(v), this.slot(voffset));
  }
  fieldInt64(voffset: number, v: number): void {
    if (v !== 0) (this.addInt64(v), this.slot(voffset));
  }
  fieldOffset(voffset: number, v: number): void {
    if (v !== 0) (this.addOffset(v), this.slot(voffset));
  }

  startObject(fields: number): void {
    this.vtableInUse = fields;
    for (let i = 0; i < fields; i++) this.vtable[i] = 0;
    this.objectStart = this.offset();
  }

  endObject(): number {
    this.addInt32(0);
    const vtableloc = this.offset();
    let i = this.vtableInUse - 1;
    while (i >= 0 && this.vtable[i] === 0) i--;
    const trimmed = i + 1;
    for (; i >= 0; i--) this.addInt16(this.vtable[i] !== 0 ? vtableloc - this.vtable[i]! : 0);
    this.addInt16(vtableloc - this.objectStart);
    const len = (trimmed + 2) * 2;
    this.addInt16(len);
    // Share an identical vtable written before, as flatbuffers does.
    let existing = 0;
    const vt1 = this.space;
    outer: for (const vt of this.vtables) {
      const vt2 = this.bytes.length - vt;
      if (len !== this.view.getInt16(vt2, true)) continue;
      for (let j = 2; j < len; j += 2) {
        if (this.view.getInt16(vt1 + j, true) !== this.view.getInt16(vt2 + j, true)) continue outer;
      }
      existing = vt;
      break;
    }
    if (existing !== 0) {
      this.space = this.bytes.length - vtableloc;
      this.view.setInt32(this.space, existing - vtableloc, true);
    } else {
      this.vtables.push(this.offset());
      this.view.setInt32(this.bytes.length - vtableloc, this.offset() - vtableloc, true);
    }
    return vtableloc;
  }

  startVector(elemSize: number, count: number, alignment: number): void {
    this.vectorNumElems = count;
    this.prep(4, elemSize * count);
    this.prep(alignment, elemSize * count);
  }

  endVector(): number {
    this.writeInt32(this.vectorNumElems);
    return this.offset();
  }

  createString(s: string): number {
    const utf8 = this.encoder.encode(s);
    this.addInt8(0);
    this.startVector(1, utf8.length, 1);
    this.space -= utf8.length;
    this.bytes.set(utf8, this.space);
    return this.endVector();
  }

  /** Finishes the buffer at `root` and returns its bytes. */
  finish(root: number): Uint8Array {
    this.prep(this.minalign, 4);
    this.addOffset(root);
    return this.bytes.subarray(this.space);
  }
}

function encodeType(b: FlatBuilder, f: Field): number {
  switch (f.type) {
    case "int64":
      b.startObject(2);
      b.fieldInt32(0, 64, 0);
      b.fieldInt8(1, 1, 0);
      return b.endObject();
    case "float64":
      b.startObject(1);
      b.fieldInt16(0, 2, 0); // Precision.DOUBLE
      return b.endObject();
    case "string":
      b.startObject(0);
      return b.endObject();
    case "timestamp": {
      const tz = f.timezone ? b.createString(f.timezone) : 0;
      b.startObject(2);
      b.fieldInt16(0, UNIT[f.unit ?? "us"], 0);
      if (tz !== 0) b.fieldOffset(1, tz);
      return b.endObject();
    }
    default:
      throw new IoError("UNSUPPORTED_TYPE", `Cannot frame a ${f.type} column as Arrow here`);
  }
}

const TYPE_ID: Partial<Record<Field["type"], number>> = {
  int64: TYPE_INT,
  float64: TYPE_FLOAT,
  string: TYPE_UTF8,
  timestamp: TYPE_TIMESTAMP,
};

function encodeField(b: FlatBuilder, f: Field): number {
  const type = encodeType(b, f);
  b.startVector(4, 0, 4); // children: none
  const children = b.endVector();
  const name = f.name ? b.createString(f.name) : 0;
  b.startObject(7);
  b.fieldOffset(3, type);
  b.fieldInt8(2, TYPE_ID[f.type]!, 0);
  b.fieldOffset(5, children);
  b.fieldInt8(1, f.nullable ? 1 : 0, 0);
  if (name !== 0) b.fieldOffset(0, name);
  return b.endObject();
}

function encodeSchema(b: FlatBuilder, schema: Schema): number {
  const fields = schema.map((f) => encodeField(b, f));
  // apache-arrow calls startFieldsVector and then createFieldsVector (which starts again).
  b.startVector(4, fields.length, 4);
  b.startVector(4, fields.length, 4);
  for (let i = fields.length - 1; i >= 0; i--) b.addOffset(fields[i]!);
  const vector = b.endVector();
  b.startObject(4);
  b.fieldOffset(1, vector);
  b.fieldInt16(0, 0, 0); // Endianness.Little, the default
  return b.endObject();
}

function encodeMessage(b: FlatBuilder, headerType: number, header: number, bodyLength: number) {
  b.startObject(5);
  b.fieldInt16(0, V5, 0);
  b.fieldOffset(2, header);
  b.fieldInt8(1, headerType, 0);
  b.fieldInt64(3, bodyLength);
  return b.finish(b.endObject());
}

/** A record batch's body: buffers, each 8-byte aligned, with their regions. */
interface Body {
  buffers: Uint8Array[];
  regions: number[]; // offset, length pairs
  nodes: number[]; // length, null count pairs
  byteLength: number;
}

function u8(v: ArrayBufferView, byteLength = v.byteLength): Uint8Array {
  return new Uint8Array(v.buffer, v.byteOffset, Math.min(byteLength, v.byteLength));
}

function bodyOf(schema: Schema, parts: ArrowParts): Body {
  const body: Body = { buffers: [], regions: [], nodes: [], byteLength: 0 };
  const add = (bytes: Uint8Array) => {
    const padded = (bytes.byteLength + 7) & ~7;
    body.buffers.push(bytes);
    body.regions.push(body.byteLength, padded);
    body.byteLength += padded;
  };
  schema.forEach((f, i) => {
    const c: ArrowColumnParts = parts.columns[i]!;
    if (c.length > 2147483647) {
      throw new RangeError("Cannot write arrays larger than 2^31 - 1 in length");
    }
    if (c.nullCount > 0 && c.nullBitmap === null) {
      throw new IoError(
        "WRITE_FAILED",
        `Arrow parts of column '${f.name}' have nulls but no bitmap`,
      );
    }
    add(c.nullCount > 0 ? c.nullBitmap! : new Uint8Array(0));
    body.nodes.push(c.length, c.nullCount);
    if (f.type === "string") {
      const offsets = c.valueOffsets;
      if (offsets === null) {
        throw new IoError(
          "WRITE_FAILED",
          `Arrow parts of string column '${f.name}' have no offsets`,
        );
      }
      const begin = offsets[0]!;
      const end = offsets[c.length]!;
      const values = u8(c.values);
      let rebased = offsets.subarray(0, c.length + 1);
      if (begin !== 0) rebased = rebased.map((o) => o - begin);
      add(u8(rebased));
      add(values.subarray(begin, begin + Math.min(end - begin, values.byteLength - begin)));
    } else {
      add(u8(c.values, c.length * 8));
    }
  });
  return body;
}

function encodeRecordBatch(b: FlatBuilder, length: number, body: Body): number {
  const { nodes, regions } = body;
  b.startVector(16, nodes.length / 2, 8);
  for (let i = nodes.length - 2; i >= 0; i -= 2) {
    b.prep(8, 16);
    b.writeInt64(nodes[i + 1]!);
    b.writeInt64(nodes[i]!);
  }
  const nodesVector = b.endVector();
  b.startVector(16, regions.length / 2, 8);
  for (let i = regions.length - 2; i >= 0; i -= 2) {
    b.prep(8, 16);
    b.writeInt64(regions[i + 1]!);
    b.writeInt64(regions[i]!);
  }
  const buffersVector = b.endVector();
  b.startObject(5);
  b.fieldInt64(0, length);
  b.fieldOffset(1, nodesVector);
  b.fieldOffset(2, buffersVector);
  return b.endObject();
}

/** A file block: where a record batch message sits. */
interface Block {
  offset: number;
  metaDataLength: number;
  bodyLength: number;
}

function encodeFooter(schema: Schema, blocks: readonly Block[]): Uint8Array {
  const b = new FlatBuilder();
  const schemaOffset = encodeSchema(b, schema);
  b.startVector(24, blocks.length, 8);
  for (let i = blocks.length - 1; i >= 0; i--) {
    const block = blocks[i]!;
    b.prep(8, 24);
    b.writeInt64(block.bodyLength);
    b.pad(4);
    b.writeInt32(block.metaDataLength);
    b.writeInt64(block.offset);
  }
  const batches = b.endVector();
  b.startVector(24, 0, 8);
  const dictionaries = b.endVector();
  b.startObject(5);
  b.fieldOffset(1, schemaOffset);
  b.fieldInt16(0, V5, 0);
  b.fieldOffset(3, batches);
  b.fieldOffset(2, dictionaries);
  return b.finish(b.endObject());
}

const ZEROS = new Uint8Array(8);

/**
 * Arrow IPC, file or stream format, as apache-arrow's `RecordBatchFileWriter` /
 * `RecordBatchStreamWriter` write it: each call returns the chunks to write next.
 */
export class ArrowIpcWriter {
  private position = 0;
  private readonly blocks: Block[] = [];

  /**
   * @param schema The schema ({@link ipcHandles} must accept it).
   * @param stream Stream format instead of file format.
   */
  constructor(private readonly schema: Schema, private readonly stream: boolean) {
    if (!ipcHandles(schema)) {
      throw new IoError("UNSUPPORTED_TYPE", "ArrowIpcWriter: a column type it does not write");
    }
  }

  private push(out: Uint8Array[], bytes: Uint8Array): void {
    if (bytes.byteLength === 0) return;
    out.push(bytes);
    this.position += bytes.byteLength;
  }

  private message(out: Uint8Array[], fb: Uint8Array, bodyLength: number | null): void {
    const aligned = (fb.byteLength + 8 + 7) & ~7;
    if (bodyLength !== null) {
      this.blocks.push({ offset: this.position, metaDataLength: aligned, bodyLength });
    }
    const prefix = new Uint8Array(8);
    new DataView(prefix.buffer).setInt32(0, -1, true);
    new DataView(prefix.buffer).setInt32(4, aligned - 8, true);
    this.push(out, prefix);
    this.push(out, fb);
    this.push(out, ZEROS.subarray(0, aligned - 8 - fb.byteLength));
  }

  /** The opening: the file magic, or the stream's schema message. */
  start(): Uint8Array[] {
    const out: Uint8Array[] = [];
    if (this.stream) {
      const b = new FlatBuilder();
      this.message(out, encodeMessage(b, HEADER_SCHEMA, encodeSchema(b, this.schema), 0), null);
    } else {
      this.push(out, MAGIC);
      this.push(out, ZEROS.subarray(0, 2));
    }
    return out;
  }

  /** One record batch: its message and body. */
  batch(parts: ArrowParts): Uint8Array[] {
    if (parts.columns.length !== this.schema.length) {
      throw new IoError(
        "SCHEMA_MISMATCH",
        `Cannot write Arrow parts of ${parts.columns.length} columns: the output schema has ${this.schema.length}`,
      );
    }
    const body = bodyOf(this.schema, parts);
    const b = new FlatBuilder();
    const header = encodeRecordBatch(b, parts.length, body);
    const out: Uint8Array[] = [];
    this.message(
      out,
      encodeMessage(b, HEADER_RECORD_BATCH, header, body.byteLength),
      body.byteLength,
    );
    for (const buf of body.buffers) {
      if (buf.byteLength === 0) continue;
      this.push(out, buf);
      this.push(out, ZEROS.subarray(0, ((buf.byteLength + 7) & ~7) - buf.byteLength));
    }
    return out;
  }

  /** The end: end-of-stream marker, and in a file the footer, its length and the magic. */
  finish(): Uint8Array[] {
    const out: Uint8Array[] = [];
    const eos = new Uint8Array(8);
    new DataView(eos.buffer).setInt32(0, -1, true);
    this.push(out, eos);
    if (!this.stream) {
      const footer = encodeFooter(this.schema, this.blocks);
      this.push(out, footer);
      const len = new Uint8Array(4);
      new DataView(len.buffer).setInt32(0, footer.byteLength, true);
      this.push(out, len);
      this.push(out, MAGIC);
    }
    return out;
  }
}
