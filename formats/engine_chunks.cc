// Chunk planning for the streaming engine (formats/engine_chunks.h).
#include "formats/engine_chunks.h"

#include <algorithm>

#include "amn/ggml_dequant.h"
#include "dispatch/packed_chunk_rows.h"
#include "formats/encode_job.h"
#include "formats/source_reads.h"

namespace amn::formats {
namespace {

// Splits `total` input bytes into pieces of `unit` bytes, `per_chunk` units
// at a time, each unit giving `out_per_unit` output bytes.
void AddRangeChunks(size_t t, uint64_t total, uint64_t unit, uint64_t per_chunk,
                    uint64_t out_per_unit, std::vector<Chunk>& chunks) {
  for (uint64_t b = 0; b < total; b += unit * per_chunk) {
    Chunk c;
    c.tensor = t;
    c.in_begin = b;
    c.in_bytes = std::min(unit * per_chunk, total - b);
    c.out_bytes = c.in_bytes / unit * out_per_unit;
    chunks.push_back(c);
  }
}

void AddFp8Chunks(size_t t, const OutputTensor& out, size_t chunk_bytes,
                  std::vector<Chunk>& chunks) {
  const Fp8Weight& w = out.fp8_layout;
  const uint64_t elem = DtypeBytes(out.dtype);
  const uint64_t row_bytes = w.cols * elem;
  if (row_bytes == 0) return;
  if (row_bytes <= chunk_bytes) {
    const uint64_t rows_per_chunk = chunk_bytes / row_bytes;
    for (uint64_t r = 0; r < w.rows; r += rows_per_chunk) {
      Chunk c;
      c.tensor = t;
      c.row_begin = r;
      c.row_end = std::min(w.rows, r + rows_per_chunk);
      c.col_end = w.cols;
      c.in_begin = r * w.cols;
      c.in_bytes = (c.row_end - r) * w.cols;
      c.out_bytes = c.in_bytes * elem;
      chunks.push_back(c);
    }
    return;
  }
  // Rows longer than a chunk: split each row at block boundaries.
  uint64_t width = std::max<uint64_t>(1, chunk_bytes / elem);
  if (w.layout == Fp8Layout::kBlock) {
    width = std::max(w.block_cols, width / w.block_cols * w.block_cols);
  }
  for (uint64_t r = 0; r < w.rows; ++r) {
    for (uint64_t col = 0; col < w.cols; col += width) {
      Chunk c;
      c.tensor = t;
      c.row_begin = r;
      c.row_end = r + 1;
      c.col_begin = col;
      c.col_end = std::min(w.cols, col + width);
      c.in_begin = r * w.cols + col;
      c.in_bytes = c.col_end - col;
      c.out_bytes = c.in_bytes * elem;
      chunks.push_back(c);
    }
  }
}

// The chunks of forget's weight `out` by element spans: whole `unit`s of
// elements, as many as fit `chunk_bytes` at the input's width (F32 at
// least, what the encoders widen to), with tensor, span and input bytes set.
std::vector<Chunk> ElementSpanChunks(size_t t, const OutputTensor& out, uint64_t unit,
                                     size_t chunk_bytes) {
  const uint64_t n = Elements(*out.encode);
  const uint64_t in_elem = DtypeBytes(out.source->dtype);
  const uint64_t units = std::max<uint64_t>(1, chunk_bytes / std::max<uint64_t>(in_elem, 4) / unit);
  std::vector<Chunk> spans;
  for (uint64_t e = 0; e < n; e += units * unit) {
    Chunk c;
    c.tensor = t;
    c.row_begin = e;
    c.row_end = std::min(n, e + units * unit);
    c.in_bytes = (c.row_end - e) * in_elem;
    spans.push_back(c);
  }
  return spans;
}

// forget: source elements [row_begin, row_end) in whole encode units
// (formats/encode_job.h), about chunk_bytes of source floats each; in_bytes
// is the scratch a converted or gathered source needs.
void AddEncodeChunks(size_t t, const OutputTensor& out, size_t chunk_bytes,
                     std::vector<Chunk>& chunks) {
  const EncodeJob& job = *out.encode;
  for (Chunk c : ElementSpanChunks(t, out, EncodeUnitElems(job), chunk_bytes)) {
    const uint64_t e = c.row_begin;
    if (out.source->permute_heads == 0) {
      c.scratch_bytes = SourceScratchBytes(*out.source, e, c.row_end - e);
    } else {
      // Read row by row from where the permutation takes each.
      for (uint64_t r = e / job.cols; r < c.row_end / job.cols; ++r) {
        const uint64_t from = LlamaPermutedRow(r, job.rows, out.source->permute_heads);
        c.scratch_bytes =
            std::max(c.scratch_bytes, SourceScratchBytes(*out.source, from * job.cols, job.cols));
      }
    }
    c.out_bytes = EncodedBytes(job, e, c.row_end);
    chunks.push_back(c);
  }
}

// forget's side tensor `out` of a weight, measured from the weight's floats
// chunk by chunk: F32 side values by the weight's encode chunks; double
// quant's nested codes by whole nested blocks (kBnbNestedBlock bnb blocks),
// with the offset the statistics pass measured, and its nested absmax in
// the same chunks, copied from what that pass made.
void AddSideChunks(size_t t, const OutputTensor& out, size_t chunk_bytes,
                   std::vector<Chunk>& chunks) {
  const EncodeJob& job = *out.encode;
  const size_t first = chunks.size();
  if (out.side_part == SidePart::kValues) {
    AddEncodeChunks(t, out, chunk_bytes, chunks);
    for (size_t c = first; c < chunks.size(); ++c) {
      chunks[c].out_bytes = SideSpan(job, chunks[c].row_begin, chunks[c].row_end) * sizeof(float);
    }
    return;
  }
  for (Chunk c :
       ElementSpanChunks(t, out, uint64_t{kBnbNestedBlock} * job.block_size, chunk_bytes)) {
    const uint64_t e = c.row_begin;
    const uint64_t blocks = SideSpan(job, e, c.row_end);
    if (out.side_part == SidePart::kNestedCodes) {
      c.scratch_bytes = SourceScratchBytes(*out.source, e, c.row_end - e);
      c.out_bytes = blocks;
    } else {  // the nested absmax, copied from EncodeJob::nested_absmax: nothing read
      c.in_bytes = 0;
      c.out_bytes = (blocks + kBnbNestedBlock - 1) / kBnbNestedBlock * sizeof(float);
    }
    chunks.push_back(c);
  }
}

// A row-permuted tensor by whole output rows: each chunk reads its rows
// one by one (formats/source_reads.h) from wherever the permutation takes
// them, into the output.
void AddPermutedChunks(size_t t, const OutputTensor& out, size_t chunk_bytes,
                       std::vector<Chunk>& chunks) {
  const uint64_t rows = out.shape.empty() ? 1 : out.shape[0];
  const uint64_t out_row = out.bytes / rows, cols = out_row / DtypeBytes(out.dtype);
  const uint64_t per_chunk = std::max<uint64_t>(1, chunk_bytes / std::max<uint64_t>(1, out_row));
  for (uint64_t r = 0; r < rows; r += per_chunk) {
    Chunk c;
    c.tensor = t;
    c.row_begin = r;
    c.row_end = std::min(rows, r + per_chunk);
    c.out_bytes = (c.row_end - r) * out_row;
    for (uint64_t row = r; row < c.row_end; ++row) {
      const uint64_t from = LlamaPermutedRow(row, rows, out.permute_heads);
      c.scratch_bytes = std::max(c.scratch_bytes, SourceScratchBytes(out, from * cols, cols));
    }
    chunks.push_back(c);
  }
}

}  // namespace

std::vector<Chunk> MakeChunks(const OutputShard& shard, size_t chunk_bytes) {
  std::vector<Chunk> chunks;
  for (size_t t = 0; t < shard.tensors.size(); ++t) {
    const OutputTensor& out = shard.tensors[t];
    const size_t first = chunks.size();
    if (out.permute_heads != 0) {
      AddPermutedChunks(t, out, chunk_bytes, chunks);
      chunks.back().last_of_tensor = true;
      continue;
    }
    switch (out.decode) {
      case Decode::kCopy:
        AddRangeChunks(t, out.input_bytes, 1, chunk_bytes, 1, chunks);
        break;
      case Decode::kFp8:
        AddFp8Chunks(t, out, chunk_bytes, chunks);
        break;
      case Decode::kPacked: {
        const uint64_t row_bytes = out.packed.row_elems * DtypeBytes(out.dtype);
        if (row_bytes == 0) break;
        const uint64_t per_chunk = internal::PackedChunkRows(row_bytes, chunk_bytes);
        for (uint64_t r = 0; r < out.packed.rows; r += per_chunk) {
          Chunk c;
          c.tensor = t;
          c.row_begin = r;
          c.row_end = std::min(out.packed.rows, r + per_chunk);
          c.out_bytes = (c.row_end - r) * row_bytes;
          chunks.push_back(c);
        }
        break;
      }
      case Decode::kArray: {
        const uint64_t out_elem = DtypeBytes(out.dtype);
        const uint64_t in_elem = DtypeBytes(out.array.entry.dtype);
        const uint64_t per_chunk = std::max<uint64_t>(1, chunk_bytes / std::max(out_elem, in_elem));
        const uint64_t n = out.array.entry.elements;
        for (uint64_t e = 0; e < n; e += per_chunk) {
          Chunk c;
          c.tensor = t;
          c.row_begin = e;
          c.row_end = std::min(n, e + per_chunk);
          c.out_bytes = (c.row_end - e) * out_elem;
          if (out.dtype != out.array.entry.dtype) c.in_bytes = (c.row_end - e) * in_elem;
          chunks.push_back(c);
        }
        break;
      }
      case Decode::kConvert: {
        const uint64_t out_elem = DtypeBytes(out.dtype);
        const uint64_t in_elem = DtypeBytes(out.source_dtype);
        const uint64_t per_chunk = std::max<uint64_t>(1, chunk_bytes / std::max(out_elem, in_elem));
        const uint64_t n = out.input_bytes / in_elem;
        for (uint64_t e = 0; e < n; e += per_chunk) {
          Chunk c;
          c.tensor = t;
          c.in_begin = e * in_elem;
          c.in_bytes = (std::min(n, e + per_chunk) - e) * in_elem;
          c.out_bytes = c.in_bytes / in_elem * out_elem;
          chunks.push_back(c);
        }
        break;
      }
      case Decode::kEncode:
        AddEncodeChunks(t, out, chunk_bytes, chunks);
        break;
      case Decode::kInline:
        AddRangeChunks(t, out.bytes, 1, chunk_bytes, 1, chunks);
        break;
      case Decode::kSide:
        AddSideChunks(t, out, chunk_bytes, chunks);
        break;
      case Decode::kGgml: {
        const GgmlTypeInfo* info = FindGgmlType(out.ggml_type);
        const uint64_t out_per_block = uint64_t{info->block_elems} * DtypeBytes(out.dtype);
        AddRangeChunks(t, out.input_bytes, info->block_bytes,
                       std::max<uint64_t>(1, chunk_bytes / out_per_block), out_per_block, chunks);
        break;
      }
    }
    if (chunks.size() == first) {  // an empty tensor still completes
      Chunk c;
      c.tensor = t;
      chunks.push_back(c);
    }
    chunks.back().last_of_tensor = true;
  }
  return chunks;
}

}  // namespace amn::formats
