#!/bin/sh
# Builds codecs/zpaq_wasm/zpaq.wasm: libzpaq 7.15 (vendored in libzpaq/, public
# domain; see README.md) and the wrapper zpaq_wasm.cpp, as one standalone
# WebAssembly module with no JavaScript glue, no filesystem and no imports but
# `env.pf_fail` (codecs/zpaq_wasm.ts supplies it).
#
# Needs emcc (Debian: apt-get install -y emscripten; built with 3.1.6).
# Usage: codecs/zpaq_wasm/build.sh [OUTPUT]   (default: codecs/zpaq_wasm/zpaq.wasm)
#
# One change to libzpaq, made here on a copy: ZPAQL::run0, the interpreter loop
# (NOJIT: there is no x86 JIT in WebAssembly), counts down the wrapper's
# instruction budget, so a hostile model cannot loop forever while decoding.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-"$here/zpaq.wasm"}

# The vendored sources must be the ones the README names.
(cd "$here/libzpaq" && sha256sum -c --quiet <<'EOF'
7bac2a97064dd86e5bd1400ba9fcc302b8d80afccf25214b7712fa42c93e403c  libzpaq.cpp
e3d07eac8b24abcb93e30e8e10171a696f03c70f7a27bdf312fb0164b510d53d  libzpaq.h
EOF
)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/libzpaq/libzpaq.h" "$work/"
sed 's|^  while (execute()) ;$|  extern long long step_budget;\n  while (execute()) if (step_budget >= 0 \&\& --step_budget < 0) error("ZPAQL instruction budget exhausted");|' \
  "$here/libzpaq/libzpaq.cpp" >"$work/libzpaq.cpp"
if [ "$(grep -c 'step_budget < 0' "$work/libzpaq.cpp")" != 1 ]; then
  echo "build.sh: the run0 patch did not apply once" >&2
  exit 1
fi

# -fno-exceptions: errors unwind through a JavaScript exception (pf_fail), and
# the loader throws the instance away. --no-entry: a library, no main().
em++ -O3 -DNDEBUG -DNOJIT -fno-exceptions -fno-rtti \
  -I"$work" "$work/libzpaq.cpp" "$here/zpaq_wasm.cpp" \
  -sSTANDALONE_WASM=1 --no-entry -sFILESYSTEM=0 \
  -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=16MB -sMAXIMUM_MEMORY=4GB \
  -sTOTAL_STACK=1MB -sERROR_ON_UNDEFINED_SYMBOLS=0 \
  -sEXPORTED_FUNCTIONS=_pf_input,_pf_output,_pf_output_length,_pf_compress,_pf_decompress \
  -o "$work/zpaq.wasm"
cp "$work/zpaq.wasm" "$out"
chmod 644 "$out"
echo "built $out ($(wc -c <"$out") bytes)"
