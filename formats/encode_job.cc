// Calls of the encode kernels (amn/quantize.h) on one chunk of a weight.
#include "formats/encode_job.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "amn/ggml_dequant.h"

namespace amn::formats {
namespace {

uint64_t CeilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// The chunk's elements as the kernels take them: rows of the weight, or
// (bnb 4-bit, which blocks the flat tensor) one row of all of them.
FloatRows RowsOf(const EncodeJob& job, uint64_t begin, uint64_t end,
                 std::span<const std::byte> floats) {
  FloatRows in;
  in.type = job.source_type;
  in.bytes = floats;
  if (job.kind == EncodeKind::kBnb4) {
    in.rows = end > begin ? 1 : 0;
    in.cols = end - begin;
  } else {
    in.cols = job.cols;
    in.rows = job.cols == 0 ? 0 : (end - begin) / job.cols;
  }
  return in;
}

// The FP8 group of a chunk: per-tensor scales are whole-tensor groups, so a
// chunk of r rows is one group of r rows.
uint64_t GroupRows(const EncodeJob& job, uint64_t chunk_rows) {
  return PerTensorFp8(job) ? std::max<uint64_t>(1, chunk_rows) : job.group_rows;
}

// ggml rows [begin / cols, ...) with the importance values of the matrix
// each row is in: the chunk is cut where one matrix's rows end.
Status EncodeGgmlRows(const EncodeJob& job, uint64_t begin, const FloatRows& in,
                      std::span<std::byte> codes, QuantError* error) {
  if (job.imatrix.empty() || in.rows == 0) {
    return QuantizeGgml(job.ggml_type, in, /*imatrix=*/{}, codes, error);
  }
  const uint64_t mats = job.cols == 0 ? 0 : job.imatrix.size() / job.cols;
  if (mats == 0 || mats * job.cols != job.imatrix.size() || job.rows % mats != 0) {
    return Status(StatusCode::kInvalidArgument, "importance values do not fit the tensor");
  }
  const uint64_t mat_rows = job.rows / mats, row_codes = EncodedBytes(job, 0, job.cols);
  const uint64_t row_floats = in.bytes.size() / in.rows;
  uint64_t row = begin / job.cols, done = 0;
  QuantError total, part_error;
  while (done < in.rows) {
    const uint64_t mat = row / mat_rows;
    const uint64_t n = std::min(in.rows - done, (mat + 1) * mat_rows - row);
    FloatRows part = in;
    part.rows = n;
    part.bytes = in.bytes.subspan(done * row_floats, n * row_floats);
    const std::span<const float> weights(job.imatrix.data() + mat * job.cols, job.cols);
    AMN_RETURN_IF_ERROR(QuantizeGgml(job.ggml_type, part, weights,
                                     codes.subspan(done * row_codes, n * row_codes),
                                     error == nullptr ? nullptr : &part_error));
    Accumulate(total, part_error);  // matrix boundaries: the same for any -j
    row += n;
    done += n;
  }
  if (error != nullptr) *error = total;
  return Status::Ok();
}

// Finite inputs whose encoding is not finite: a block's F16 scale
// overflowed (Q8_0 from about |x| > 65504 * 127), or an I-quant's squares did.
// ggml writes such blocks (Inf/NaN weights); amn refuses the tensor, so no
// output silently holds values its input did not. Known only where the
// error sums were computed (the engine always computes them).
Status FiniteEncoding(const EncodeJob& job, const QuantError* error) {
  if (error == nullptr || std::isfinite(error->sum_abs)) return Status::Ok();
  const GgmlTypeInfo* info = FindGgmlType(static_cast<uint32_t>(job.ggml_type));
  return Status(StatusCode::kInvalidArgument,
                "values too large for " + std::string(info != nullptr ? info->name : "this type") +
                    ": the encoding is not finite (a block's scale overflows, as in ggml, whose "
                    "F16 scales stop at 65504); keep this tensor as F32 (amn convert "
                    "--tensor-type REGEX=f32)");
}

Status EncodeGgml(const EncodeJob& job, uint64_t begin, const FloatRows& in,
                  std::span<std::byte> codes, QuantError* error) {
  AMN_RETURN_IF_ERROR(EncodeGgmlRows(job, begin, in, codes, error));
  return FiniteEncoding(job, error);
}

}  // namespace

uint64_t Elements(const EncodeJob& job) { return job.rows * job.cols; }

bool PerTensorFp8(const EncodeJob& job) {
  return job.kind == EncodeKind::kFp8 && job.group_rows >= job.rows && job.group_cols >= job.cols;
}

uint64_t SideCount(const EncodeJob& job) {
  switch (job.kind) {
    case EncodeKind::kFp8:
      return CeilDiv(job.rows, job.group_rows) * CeilDiv(job.cols, job.group_cols);
    case EncodeKind::kBnb4: return CeilDiv(Elements(job), job.block_size);
    case EncodeKind::kBnbInt8: return job.rows;
    case EncodeKind::kGgml: return 0;
  }
  return 0;
}

uint64_t EncodeUnitElems(const EncodeJob& job) {
  if (job.kind == EncodeKind::kBnb4) return job.block_size;
  if (job.kind == EncodeKind::kFp8 && !PerTensorFp8(job)) return job.group_rows * job.cols;
  return std::max<uint64_t>(1, job.cols);
}

uint64_t EncodedBytes(const EncodeJob& job, uint64_t begin, uint64_t end) {
  if (job.kind == EncodeKind::kGgml) {
    // Whole blocks (cols is a multiple of the block), ggml's row size each row.
    const GgmlTypeInfo* info = FindGgmlType(static_cast<uint32_t>(job.ggml_type));
    return info == nullptr ? 0 : (end - begin) / info->block_elems * info->block_bytes;
  }
  return job.kind == EncodeKind::kBnb4 ? CeilDiv(end - begin, 2) : end - begin;
}

uint64_t SideFirst(const EncodeJob& job, uint64_t begin) {
  switch (job.kind) {
    case EncodeKind::kFp8:
      if (PerTensorFp8(job)) return 0;
      return begin / job.cols / job.group_rows * CeilDiv(job.cols, job.group_cols);
    case EncodeKind::kBnb4: return begin / job.block_size;
    case EncodeKind::kBnbInt8: return begin / job.cols;
    case EncodeKind::kGgml: return 0;
  }
  return 0;
}

uint64_t SideSpan(const EncodeJob& job, uint64_t begin, uint64_t end) {
  switch (job.kind) {
    case EncodeKind::kFp8: {
      if (PerTensorFp8(job)) return 1;
      const uint64_t rows = (end - begin) / job.cols;
      return CeilDiv(rows, job.group_rows) * CeilDiv(job.cols, job.group_cols);
    }
    case EncodeKind::kBnb4: return CeilDiv(end - begin, job.block_size);
    case EncodeKind::kBnbInt8: return (end - begin) / job.cols;
    case EncodeKind::kGgml: return 0;
  }
  return 0;
}

Status AbsMaxChunk(const EncodeJob& job, uint64_t begin, uint64_t end,
                   std::span<const std::byte> floats, std::span<float> amax) {
  const FloatRows in = RowsOf(job, begin, end, floats);
  switch (job.kind) {
    case EncodeKind::kFp8:
      return AbsMaxGrid(in, GroupRows(job, in.rows), job.group_cols, amax);
    case EncodeKind::kBnb4: return AbsMaxGrid(in, 1, job.block_size, amax);
    case EncodeKind::kBnbInt8: return AbsMaxGrid(in, 1, std::max<uint64_t>(1, job.cols), amax);
    case EncodeKind::kGgml: break;  // no statistics pass: blocks scale themselves
  }
  return Status(StatusCode::kInvalidArgument, "unknown encode kind");
}

Status ChunkSideValues(const EncodeJob& job, uint64_t begin, uint64_t end,
                       std::span<const std::byte> floats, std::span<float> side) {
  const uint64_t first = SideFirst(job, begin), count = SideSpan(job, begin, end);
  if (side.size() != count) {
    return Status(StatusCode::kInvalidArgument, "side values do not fit the chunk");
  }
  if (!job.side.empty() || PerTensorFp8(job)) {
    // Given (FP8 per-tensor needs the whole tensor's amax: measured before).
    if (first + count > job.side.size()) {
      return Status(StatusCode::kInvalidArgument, "side values do not cover the chunk");
    }
    std::copy_n(job.side.begin() + static_cast<std::ptrdiff_t>(first), count, side.begin());
    return Status::Ok();
  }
  AMN_RETURN_IF_ERROR(AbsMaxChunk(job, begin, end, floats, side));
  for (float& v : side) {
    if (!std::isfinite(v)) {
      return Status(StatusCode::kInvalid, "holds NaN or an infinity; forget encodes finite values only");
    }
    if (job.kind == EncodeKind::kFp8) v = Fp8ScaleFromAmax(v, job.fp8_format);
  }
  return Status::Ok();
}

Status EncodeChunk(const EncodeJob& job, uint64_t begin, uint64_t end,
                   std::span<const std::byte> floats, std::span<std::byte> codes, QuantError* error) {
  if (job.like) return Status(StatusCode::kInvalidArgument, "--like side values are read, not measured");
  // The kernels take mutable spans (they compute side values unless told
  // they are given); a chunk's share is small.
  std::vector<float> side;
  if (job.kind != EncodeKind::kGgml) {
    side.resize(SideSpan(job, begin, end));
    AMN_RETURN_IF_ERROR(ChunkSideValues(job, begin, end, floats, side));
  }
  return EncodeChunkWithSide(job, begin, end, floats, side, codes, error);
}

Status EncodeChunkWithSide(const EncodeJob& job, uint64_t begin, uint64_t end,
                           std::span<const std::byte> floats, std::span<float> side,
                           std::span<std::byte> codes, QuantError* error) {
  const FloatRows in = RowsOf(job, begin, end, floats);
  if (job.kind != EncodeKind::kGgml && side.size() != SideSpan(job, begin, end)) {
    return Status(StatusCode::kInvalidArgument, "side values do not fit the chunk");
  }
  switch (job.kind) {
    case EncodeKind::kFp8:
      return QuantizeFp8(in, GroupRows(job, in.rows), job.group_cols, job.fp8_format, side, codes,
                         error);
    case EncodeKind::kBnb4:
      return QuantizeBnb4(in, job.block_size, job.bnb_type, /*absmax_given=*/true, side, codes,
                          error);
    case EncodeKind::kBnbInt8:
      return QuantizeBnbInt8(in, /*scb_given=*/true, side,
                             std::span(reinterpret_cast<int8_t*>(codes.data()), codes.size()),
                             error);
    case EncodeKind::kGgml: return EncodeGgml(job, begin, in, codes, error);
  }
  return Status(StatusCode::kInvalidArgument, "unknown encode kind");
}

}  // namespace amn::formats
