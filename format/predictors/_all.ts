/**
 * Every predictor module, by static imports: what the writer's trial loads (through
 * `registry.ts`'s `loadPredictors`, in one module load), and what `cli/lazy.ts` (for
 * `deno compile`) and `mod.ts` (for a library user's module graph) name, since the
 * registry imports each file by a computed specifier that neither can see.
 * `registry_test.ts` checks that this list and the registry's entries name the same
 * files. Exports nothing: the registry picks each predictor from its own module.
 *
 * @module
 */
import "./bool_bits.ts";
import "./category_u8.ts";
import "./decimal.ts";
import "./decimal_dms.ts";
import "./delta_zigzag.ts";
import "./float16_delta.ts";
import "./float16_planes.ts";
import "./float16_xor.ts";
import "./float32_alp.ts";
import "./float32_delta.ts";
import "./float32_planes.ts";
import "./float32_xor.ts";
import "./float64_planes.ts";
import "./float_quant.ts";
import "./float_quant_narrow.ts";
import "./frame_zigzag.ts";
import "./json_shred.ts";
import "./keyed_freq.ts";
import "./keyed_rank.ts";
import "./lag1_zigzag.ts";
import "./raw_text.ts";
import "./text_lines.ts";
import "./text_within.ts";
import "./ts_delta_s.ts";
import "./wide_zigzag.ts";
