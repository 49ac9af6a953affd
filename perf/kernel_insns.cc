// Runs registry kernels a fixed number of times, with the inputs of `amn
// bench` (perf::FillKernelInput), for counting their instructions under an
// instruction-counting emulator (perf/emulated_insns.sh: qemu-aarch64 with
// perf/qemu_insn_plugin.c). Time on an emulator says nothing about a real
// core; the count of instructions retired does, and it is exact and the same
// on every run. The script runs each kernel twice, with --reps 1 and with
// --reps 1+R, and divides the difference by R x N: instructions per element
// of the calls alone, set-up and filling the input excluded.
//
//   kernel_insns --kernel NAME [--elems N] [--reps R]
//
// NAME is a whole registry name (e.g. f32_to_f16); N (default 65,536, the
// cache-resident size of `amn bench`) a multiple of the kernel's block. The
// target is the one dispatch picks (cap it with AMN_ISA); it is printed.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "amn/kernel_registry.h"
#include "amn/targets.h"
#include "perf/measure.h"

int main(int argc, char** argv) {
  std::string_view name;
  size_t elems = amn::perf::kCacheElems;
  long reps = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (flag == "--kernel") {
      name = argv[i + 1];
    } else if (flag == "--elems") {
      elems = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (flag == "--reps") {
      reps = std::strtol(argv[i + 1], nullptr, 10);
    } else {
      std::fprintf(stderr, "kernel_insns: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  const amn::KernelInfo* kernel = nullptr;
  for (const amn::KernelInfo& k : amn::Kernels()) {
    if (k.name == name) kernel = &k;
  }
  if (kernel == nullptr || elems == 0 || elems % kernel->block_elems != 0 || reps < 1) {
    std::fprintf(stderr,
                 "usage: kernel_insns --kernel NAME [--elems N] [--reps R] (a registry kernel, N a "
                 "multiple of its block, R >= 1)\n");
    return 2;
  }
  amn::perf::KernelBuffers buffers(*kernel, elems);
  for (long r = 0; r < reps; ++r) kernel->run(buffers.in(), elems, buffers.out());
  std::printf("%s %s %zu\n", std::string(kernel->name).c_str(),
              std::string(amn::TargetName(kernel->probe())).c_str(), elems);
  return 0;
}
