// Permafrost's in-process zpaq: libzpaq's compressBlock() and Decompresser
// behind a small C ABI, compiled to WebAssembly by build.sh (codecs/zpaq_wasm.ts
// loads it).
//
// One call per instance: the loader instantiates a fresh module for every
// encode or decode, so nothing here is reused between calls. A failure calls
// the imported pf_fail(), which throws a JavaScript exception through the wasm
// frames; the loader then drops the instance (its heap and stack are left as
// they were), which is why no C++ exceptions are needed.
//
// Encode: zpaq 7.15's block analysis (zpaq.cpp, the `add` command, one
// fragment per block as with -fragment 24) picks the method arguments, then
// libzpaq::compressBlock() writes one ZPAQ block: locator tag, "zPQ", the model,
// one segment (empty name, the input length as comment, no SHA-1), end of block.
//
// Decode trusts nothing: one block at offset 0 whose model needs no more memory
// than the encoder could have used for a block of the expected length, one
// segment whose comment is that length, at most so many bytes before and after
// postprocessing, a bounded number of ZPAQL instructions (a patched
// ZPAQL::run0, see build.sh), then the end of the block and the end of input.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include "libzpaq.h"

// Failure kinds, as the loader maps them to CodecError codes.
enum FailKind { FAIL_CORRUPT = 1, FAIL_LENGTH = 2, FAIL_MEMORY = 3 };

extern "C" {
__attribute__((import_module("env"), import_name("pf_fail"), noreturn)) void pf_fail(
    int kind, const char* message, int length);
}


static void fail(int kind, const char* message) {
  pf_fail(kind, message, int(strlen(message)));
}

namespace libzpaq {
// ZPAQL instructions left before run0 stops, or -1 for no limit (build.sh
// patches run0 to count them down).
long long step_budget = -1;

// libzpaq's one error hook; it must not return.
void error(const char* message) {
  if (strcmp(message, "Out of memory") == 0 || strcmp(message, "Array too big") == 0) {
    fail(FAIL_MEMORY, message);
  }
  fail(FAIL_CORRUPT, message);
}
}  // namespace libzpaq

// ---- buffers shared with the loader ----

static libzpaq::StringBuffer* input_buffer = 0;
static libzpaq::StringBuffer* output_buffer = 0;

// Room for the n input bytes, which the loader copies in before encoding or decoding.
extern "C" unsigned char* pf_input(uint32_t n) {
  input_buffer = new libzpaq::StringBuffer(n);
  input_buffer->write(0, int(n));
  return n > 0 ? input_buffer->data() : 0;
}

extern "C" unsigned char* pf_output() { return output_buffer ? output_buffer->data() : 0; }

extern "C" uint32_t pf_output_length() {
  return output_buffer ? uint32_t(output_buffer->size()) : 0;
}

// ---- encode ----

static std::string decimal(unsigned long long value) {
  char digits[24];
  int i = sizeof(digits);
  digits[--i] = 0;
  do digits[--i] = char('0' + value % 10); while ((value /= 10) > 0);
  return std::string(digits + i);
}

// The method zpaq 7.15's `add` passes to compressBlock() for a block holding
// one fragment (zpaq.cpp, "Analyze fragment for redundancy, x86, text"):
// "L,R,T" with R the estimated redundancy out of 255 and T = 2 (x86) + 1 (text).
static std::string analysedMethod(const unsigned char* p, uint32_t n, int level) {
  const int64_t sz = n;
  unsigned hits = 0;
  unsigned char o1[256] = {0};
  int c1 = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const int c = p[i];
    if (c == o1[c1]) ++hits;
    o1[c1] = c;
    c1 = c;
  }
  int text1 = 0, exe1 = 0;
  int64_t h1 = sz;
  unsigned char o1ct[256] = {0};
  static const unsigned char dt[256] = {  // 32768/((i+1)*204)
      160, 80, 53, 40, 32, 26, 22, 20, 17, 16, 14, 13, 12, 11, 10, 10, 9, 8, 8, 8, 7, 7, 6, 6,
      6,   6,  5,  5,  5,  5,  5,  5,  4,  4,  4,  4,  4,  4,  4,  4,  3, 3, 3, 3, 3, 3, 3, 3,
      3,   3,  3,  3,  3,  2,  2,  2,  2,  2,  2,  2,  2,  2,  2,  2,  2, 2, 2, 2, 2, 2, 2, 2,
      2,   2,  2,  2,  2,  2,  2,  2,  1,  1,  1,  1,  1,  1,  1,  1,  1, 1, 1, 1, 1, 1, 1, 1,
      1,   1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1, 1, 1, 1, 1, 1, 1, 1,
      1,   1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1, 1, 1, 1, 1, 1, 1, 1,
      1,   1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1};
  for (int i = 0; i < 256; ++i) {
    if (o1ct[o1[i]] < 255) h1 -= (sz * dt[o1ct[o1[i]]++]) >> 15;
    if (o1[i] == ' ' && ((i >= '0' && i <= '9') || (i >= 'A' && i <= 'Z') ||
                         (i >= 'a' && i <= 'z') || i == '.' || i == ',')) {
      ++text1;
    }
    if (o1[i] && (i < 9 || i == 11 || i == 12 || (i >= 14 && i <= 31) || i >= 240)) --text1;
    if (i >= 192 && i < 240 && o1[i] && (o1[i] < 128 || o1[i] >= 192)) --text1;
    if (o1[i] == 139) ++exe1;
  }
  text1 = (text1 >= 3);
  exe1 = (exe1 >= 5);
  if (sz > 0) h1 = h1 * h1 / sz;  // Test 2: near 0 if random.
  unsigned h2 = unsigned(h1);
  if (h2 > hits) hits = h2;
  h2 = unsigned(o1ct[0] * sz / 256);  // Test 3: bytes never seen or that predict 0.
  if (h2 > hits) hits = h2;
  // Test 4 compares o1 with the previous fragments' (none: all zero).
  const int ON = 4;
  h2 = 0;
  for (int i = 0; i < 256 * ON; ++i) h2 += (o1[i & 255] == 0);
  h2 = unsigned(h2 * sz / (256 * ON));
  if (h2 > hits) hits = h2;
  if (hits > sz) hits = unsigned(sz);
  // zpaq's block also holds 12 bytes of fragment list after the data.
  const uint64_t block_size = uint64_t(n) + 12;
  const unsigned redundancy = unsigned(hits / (block_size / 256 + 1));
  const int type = (exe1 * 4 > 1) * 2 + (text1 * 2 > 1);
  return decimal(level) + "," + decimal(redundancy) + "," + decimal(type);
}

// Compresses the n input bytes at level 1..5; the block is then at pf_output().
extern "C" void pf_compress(uint32_t n, int level) {
  if (level < 1 || level > 5) fail(FAIL_CORRUPT, "level is not 1..5");
  if (!input_buffer || input_buffer->size() != n) fail(FAIL_CORRUPT, "input not set");
  const std::string method = analysedMethod(input_buffer->data(), n, level);
  output_buffer = new libzpaq::StringBuffer(n / 2 + 1024);
  libzpaq::step_budget = -1;  // our own model on our own input: no limit
  libzpaq::compressBlock(input_buffer, output_buffer, method.c_str(), 0, 0, false);
}

// ---- decode ----

// Hands the decoder one byte per read(), so the bytes consumed are known exactly.
class ExactReader : public libzpaq::Reader {
 public:
  ExactReader(const unsigned char* bytes, uint32_t length) : p(bytes), n(length), pos(0) {}
  int get() { return pos < n ? p[pos++] : -1; }
  int read(char* buf, int k) {
    if (k < 1 || pos >= n) return 0;
    buf[0] = char(p[pos++]);
    return 1;
  }
  const unsigned char* p;
  uint32_t n;
  uint32_t pos;
};

// Keeps at most `cap` bytes: one more is a length mismatch.
class CappedWriter : public libzpaq::Writer {
 public:
  CappedWriter(libzpaq::StringBuffer* out, double cap) : sb(out), limit(cap) {}
  void put(int c) {
    if (double(sb->size()) + 1 > limit) fail(FAIL_LENGTH, "it expands past the expected length");
    sb->put(c);
  }
  void write(const char* buf, int k) {
    if (double(sb->size()) + k > limit) fail(FAIL_LENGTH, "it expands past the expected length");
    sb->write(buf, k);
  }
  libzpaq::StringBuffer* sb;
  double limit;
};

// Collects a short string (a segment's name or comment); longer is corrupt.
class ShortText : public libzpaq::Writer {
 public:
  ShortText() : length(0) {}
  void put(int c) {
    if (length >= sizeof(text) - 1) fail(FAIL_CORRUPT, "a segment name or comment is too long");
    text[length++] = char(c);
    text[length] = 0;
  }
  char text[32] = {0};
  unsigned length;
};

// Decompresses the n input bytes, which must expand to exactly raw_length bytes.
// The limits come from the loader: model memory, bytes the model may decode
// (before postprocessing) and ZPAQL instructions.
extern "C" void pf_decompress(uint32_t n, double raw_length, double memory_limit,
                              double decoded_limit, double step_budget) {
  if (!input_buffer || input_buffer->size() != n) fail(FAIL_CORRUPT, "input not set");
  // The locator tag and "zPQ": findBlock() would skip anything before them.
  static const unsigned char BLOCK_START[16] = {0x37, 0x6b, 0x53, 0x74, 0xa0, 0x31, 0x83, 0xd3,
                                                0x8c, 0xb2, 0x28, 0xb0, 0xd3, 0x7a, 0x50, 0x51};
  if (n < 16 || memcmp(input_buffer->data(), BLOCK_START, 16) != 0) {
    fail(FAIL_CORRUPT, "it does not start with a ZPAQ block");
  }
  ExactReader reader(input_buffer->data(), n);
  libzpaq::Decompresser d;
  d.setInput(&reader);
  double memory = 0;
  if (!d.findBlock(&memory)) fail(FAIL_CORRUPT, "it holds no ZPAQ block");
  if (memory > memory_limit) fail(FAIL_CORRUPT, "its model needs more memory than any level");
  ShortText name, comment;
  if (!d.findFilename(&name)) fail(FAIL_CORRUPT, "its block holds no segment");
  if (name.length != 0) fail(FAIL_CORRUPT, "its segment has a name");
  d.readComment(&comment);
  const std::string expected = decimal((unsigned long long)raw_length);
  if (expected != comment.text) {
    fail(comment.length > 0 && comment.text[0] >= '0' && comment.text[0] <= '9' ? FAIL_LENGTH
                                                                               : FAIL_CORRUPT,
         "its segment declares another length");
  }
  output_buffer = new libzpaq::StringBuffer(raw_length > (1 << 20) ? 1 << 20 : size_t(raw_length));
  CappedWriter out(output_buffer, raw_length);
  libzpaq::SHA1 sha1;
  d.setOutput(&out);
  d.setSHA1(&sha1);
  libzpaq::step_budget = (long long)step_budget;
  const int STEP = 1 << 16;
  double decoded = 0;
  while (d.decompress(STEP)) {
    decoded += STEP;
    if (decoded > decoded_limit) fail(FAIL_CORRUPT, "its model decodes too many bytes");
  }
  if (double(output_buffer->size()) != raw_length) {
    fail(FAIL_LENGTH, "it expands to fewer bytes than expected");
  }
  char sha1_saved[21];
  d.readSegmentEnd(sha1_saved);
  if (sha1_saved[0] == 1 && memcmp(sha1_saved + 1, sha1.result(), 20) != 0) {
    fail(FAIL_CORRUPT, "its SHA-1 does not match");
  }
  if (d.findFilename(0)) fail(FAIL_CORRUPT, "its block holds more than one segment");
  if (reader.pos != n) fail(FAIL_CORRUPT, "bytes follow the end of its block");
}
