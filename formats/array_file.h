// Files of plain arrays (NPY, NPZ, PyTorch zip checkpoints): for each array
// its dtype, logical shape and where its elements are: a byte range of one
// member (a ZIP entry, or the whole file for .npy) read with element strides.
// The parsers (npy.h, pytorch.h) fill this in from headers alone; the
// remember plan turns each array into one output tensor.
#ifndef AMN_FORMATS_ARRAY_FILE_H_
#define AMN_FORMATS_ARRAY_FILE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "amn/result.h"
#include "formats/dtype.h"

namespace amn::formats {

// Where a member's bytes are in the file.
struct ArrayMember {
  std::string name;             // the ZIP entry name ("W_dec.npy", "archive/data/0"), or the file name
  bool deflated = false;        // DEFLATE-compressed (NPZ from savez_compressed)
  uint64_t file_offset = 0;     // absolute offset of the member's (compressed) data
  uint64_t stored_bytes = 0;    // bytes at file_offset (compressed size when deflated)
  uint64_t bytes = 0;           // uncompressed size
  uint64_t zip_index = 0;       // the entry's index in the archive (deflated members)
};

struct ArrayEntry {
  std::string name;              // "W_dec", "rnn.weight_hh_l0"
  Dtype dtype = Dtype::kF32;
  std::vector<uint64_t> shape;   // logical, row-major; [] is a scalar
  uint64_t elements = 0;         // product of shape (checked)
  // Element (i0, ..., in-1) is at member byte
  //   data_offset + (storage_offset + sum_k i_k * strides[k]) * DtypeBytes(dtype).
  // strides has one entry per dimension, in elements (Fortran-order NPY
  // arrays and non-contiguous PyTorch views are strided).
  size_t member = 0;             // index into ArrayFile::members
  uint64_t data_offset = 0;      // bytes into the member's uncompressed data
  uint64_t storage_offset = 0;   // elements
  std::vector<uint64_t> strides;
  uint64_t storage_elements = 0; // elements available from data_offset (bounds every index)
  bool big_endian = false;       // bytes of each element swapped on read
  // Row-major contiguous from storage_offset (strides are the C strides of
  // shape, or the array has at most one element).
  bool contiguous() const;
};

struct ArrayFile {
  std::string format;                 // "npy", "npz" or "pytorch"
  std::vector<ArrayMember> members;
  std::vector<ArrayEntry> arrays;     // in file order (NPZ: archive order; PyTorch: state-dict order)
  std::map<std::string, std::string> metadata;  // e.g. {"pytorch.version": "3"}
};

// The C-order strides of `shape`, in elements (no overflow: the caller has
// already checked the element count).
std::vector<uint64_t> RowMajorStrides(const std::vector<uint64_t>& shape);

// Checks an entry against its member: storage_elements * element size fits
// in the member from data_offset, and the largest index
// storage_offset + sum (shape_k - 1) * strides_k is below storage_elements,
// with checked arithmetic (kInvalid naming the array otherwise). Zero-element
// arrays always pass.
Status CheckArrayBounds(const ArrayEntry& entry, const ArrayMember& member);

}  // namespace amn::formats

#endif  // AMN_FORMATS_ARRAY_FILE_H_
