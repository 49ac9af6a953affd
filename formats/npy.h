// NumPy .npy arrays and .npz archives (DESIGN.md §5): the NPY header's
// literal dict is parsed by a small strict parser, never evaluated.
#ifndef AMN_FORMATS_NPY_H_
#define AMN_FORMATS_NPY_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "amn/limits.h"
#include "amn/result.h"
#include "formats/array_file.h"
#include "formats/byte_source.h"
#include "formats/zip_archive.h"

namespace amn::formats {

struct NpyHeader {
  uint8_t major = 1, minor = 0;   // versions 1.0, 2.0, 3.0
  Dtype dtype = Dtype::kF32;
  bool big_endian = false;
  bool fortran_order = false;
  std::vector<uint64_t> shape;
  uint64_t elements = 0;          // product of shape (checked)
  uint64_t data_offset = 0;       // magic + version + length + header text
};

// Parses an NPY header from the first bytes of an array (`prefix` holds at
// least the magic, version and length; when it is shorter than the header,
// kTruncated says how many bytes are needed via the message). The dict must
// have exactly 'descr', 'fortran_order' and 'shape'; descr '<f4' '>f8' '|b1'
// '|u1' '<i2' ... (bool, int8..uint64, F16, F32, F64) or JAX's bfloat16 as
// '<V2' / '|V2'; anything else (structured dtypes, objects, complex,
// strings) is kUnsupported. `name` is used in messages.
Result<NpyHeader> ParseNpyHeader(std::span<const std::byte> prefix, std::string_view name,
                                 const ParseLimits& limits);

// The bytes of the header a prefix of at least 10 bytes declares
// (magic + version + length + text), for reading exactly that much.
Result<uint64_t> NpyHeaderBytes(std::span<const std::byte> prefix, std::string_view name);

// A .npy file: one array named after the file's stem.
Result<ArrayFile> ReadNpy(ByteSource& source, std::string_view array_name,
                          const ParseLimits& limits);

// A .npz archive: one array per "*.npy" member, named without ".npy", in
// archive order; members not ending in .npy are kInvalid. Reads only the
// NPY headers (inflating the first bytes of deflated members).
Result<ArrayFile> ReadNpz(ZipArchive& archive, const ParseLimits& limits);

}  // namespace amn::formats

#endif  // AMN_FORMATS_NPY_H_
