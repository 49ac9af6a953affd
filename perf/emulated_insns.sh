#!/usr/bin/env bash
# Instructions per element of registry kernels on targets run under qemu
# user-mode emulation, for the Arm targets this machine cannot time (an
# emulator's time says nothing about a real core; its count of executed
# instructions does): a build's perf/kernel_insns, run once with --reps 1
# and once with --reps 1+REPS under a CPU model per target, the difference
# divided by REPS x N. Repeated runs agree within about 2 % (docs/
# performance/arm.md).
#
#   perf/emulated_insns.sh BUILD_DIR KERNEL... [-- TARGET...]
#
# BUILD_DIR is an aarch64 build (cmake --preset aarch64: build/aarch64) for
# the targets NEON (default), SVE, SVE2, SVE_256, SVE2_128, or an x86-64 build
# (build/gcc) for SSSE3, SSE4, AVX2 (the CPU models of TOOLCHAIN.md's
# emulated fleet; QEMU 7.2 has no AVX-512). Environment: ELEMS (default
# 65536), REPS (default 4), SYSROOT (default /usr/aarch64-linux-gnu), CC
# (default cc, builds perf/qemu_insn_plugin.c).
set -euo pipefail
if [[ $# -lt 2 ]]; then
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
build=$1
shift
kernels=()
while [[ $# -gt 0 && $1 != -- ]]; do kernels+=("$1"); shift; done
[[ ${1:-} == -- ]] && shift
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=(NEON)
elems=${ELEMS:-65536}
reps=${REPS:-4}
sysroot=${SYSROOT:-/usr/aarch64-linux-gnu}
tool=$build/perf/kernel_insns
here=$(cd "$(dirname "$0")" && pwd)
[[ -x $tool ]] || { echo "emulated_insns: $tool not built (cmake --build --preset PRESET --target kernel_insns)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"${CC:-cc}" -shared -fPIC -O2 "$here/qemu_insn_plugin.c" -o "$work/insn.so"

# The emulator and its CPU model for target $1.
emulator_for() {
  case $1 in
    NEON) emulator=(qemu-aarch64 -L "$sysroot" -cpu cortex-a72) ;;
    SVE) emulator=(qemu-aarch64 -L "$sysroot" -cpu a64fx) ;;
    SVE2) emulator=(qemu-aarch64 -L "$sysroot" -cpu max) ;;
    SVE_256)
      # shellcheck disable=SC2054  # the commas belong to the -cpu value
      emulator=(qemu-aarch64 -L "$sysroot" -cpu max,sve-default-vector-length=32) ;;
    SVE2_128)
      # shellcheck disable=SC2054
      emulator=(qemu-aarch64 -L "$sysroot" -cpu max,sve-default-vector-length=16) ;;
    SSSE3) emulator=(qemu-x86_64 -cpu core2duo) ;;
    SSE4) emulator=(qemu-x86_64 -cpu Westmere) ;;
    AVX2) emulator=(qemu-x86_64 -cpu Haswell) ;;
    *) echo "emulated_insns: unknown target $1 (NEON, SVE, SVE2, SVE_256, SVE2_128, SSSE3, SSE4, AVX2)" >&2; exit 2 ;;
  esac
}

# Instructions executed by one run of the tool with --reps $2 (kernel $1).
count() {
  # (qemu-x86_64 warns about every CPUID feature TCG lacks: shown on failure only)
  # (AMN_ISA: at 128-bit SVE vectors dispatch would pick NEON without it)
  if ! AMN_ISA=$target QEMU_INSN_OUT=$work/count "${emulator[@]}" -plugin "$work/insn.so" \
    "$tool" --kernel "$1" --elems "$elems" --reps "$2" > "$work/line" 2> "$work/err"; then
    cat "$work/err" >&2
    exit 1
  fi
  cat "$work/count"
}

printf '| kernel | target | instructions / element |\n|---|---|---:|\n'
for target in "${targets[@]}"; do
  emulator_for "$target"
  for kernel in "${kernels[@]}"; do
    one=$(count "$kernel" 1)
    many=$(count "$kernel" $((1 + reps)))
    ran=$(awk '{print $2}' "$work/line")
    [[ $ran == "$target" ]] || { echo "emulated_insns: $kernel ran on $ran under ${emulator[*]}, not $target" >&2; exit 1; }
    awk -v a="$one" -v b="$many" -v r="$reps" -v n="$elems" -v k="$kernel" -v t="$target" \
      'BEGIN { printf "| %s | %s | %.3f |\n", k, t, (b - a) / (r * n) }'
  done
done
