#!/usr/bin/env bash
# The Arm targets convert F16 with the hardware's instructions
# (AMN_F16_HARDWARE_DEMOTE, kernels/float_convert-inl.h): f32_to_f16 and
# f16_to_f32 counted under qemu by perf/emulated_insns.sh. The software
# conversions take 5.5 and 5.8 instructions per element on NEON, 1.8 and
# 1.6 on SVE (512-bit); the hardware's 1.0 and 1.7, 0.4 and 0.5
# (docs/performance/arm.md). The limits sit between, with room for the
# counting noise (about 3 %, up to 12 % under one instruction per element).
# An instruction count, not a time.
#   arm_f16_insns_check.sh AARCH64_BUILD_DIR
set -euo pipefail
table=$("$(dirname "$0")/../perf/emulated_insns.sh" "$1" f32_to_f16 f16_to_f32 -- NEON SVE)
echo "$table"
awk -F'|' '
  NR > 2 {
    kernel = $2; target = $3; count = $4 + 0
    gsub(/ /, "", kernel); gsub(/ /, "", target)
    limit = target == "NEON" ? 2.5 : 1.0
    rows++
    if (count <= 0 || count > limit) {
      printf "%s on %s: %.3f instructions per element, more than %.1f (the software conversion?)\n",
             kernel, target, count, limit
      bad = 1
    }
  }
  END { if (rows != 4) { print "expected 4 rows, got " rows; bad = 1 } exit bad }' <<< "$table"
