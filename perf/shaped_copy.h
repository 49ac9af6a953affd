// The streaming floor at a kernel's own byte shape (DESIGN.md §8, "a floor
// that a kernel beats is not a floor"): one thread reads in_bytes and writes
// out_bytes, in order and interleaved at their ratio, as a decoder or
// encoder walks its input and output, and does nothing else. memset and
// memcpy each have one shape (write only; read = write); a kernel that reads
// 4 bytes for every 2 it writes, or 0.56 for every 4, is bound by neither.
#ifndef AMN_PERF_SHAPED_COPY_H_
#define AMN_PERF_SHAPED_COPY_H_

#include <cstddef>

namespace amn::perf {

// Reads every byte of `in` once and writes every byte of `out` once, with
// plain (cacheable) stores of the target dispatch runs, as the kernels
// store: their chunks are read again right away by the writer, which
// non-temporal stores would send to memory first. Each output block holds
// the XOR of the input read for it, so no compiler can drop the loads.
// `out` is 64-byte aligned.
void ShapedCopy(const unsigned char* in, size_t in_bytes, unsigned char* out, size_t out_bytes);

// ShapedCopy between two fresh, faulted-in buffers, in (in + out) bytes per
// ns (GB/s), the fastest of `reps` runs on each vector width the allowed
// targets have (x86: 512, 256 and 128 bits), forced one after the other
// (ForceTarget), so the caller must have no target forced.
double MeasureShapedTrafficGbps(size_t in_bytes, size_t out_bytes, int reps);

}  // namespace amn::perf

#endif  // AMN_PERF_SHAPED_COPY_H_
