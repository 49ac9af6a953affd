// Which parser a path goes to (DESIGN.md §5): by extension where it names a
// format, otherwise (.bin, no or unknown extension) by the first bytes.
#ifndef AMN_FORMATS_FILE_FORMAT_H_
#define AMN_FORMATS_FILE_FORMAT_H_

#include <filesystem>
#include <string_view>

#include "amn/limits.h"
#include "amn/result.h"
#include "formats/array_file.h"

namespace amn::formats {

enum class FileFormat { kSafetensors, kGguf, kNpy, kNpz, kPytorch };

std::string_view FileFormatName(FileFormat format);  // "safetensors", "gguf", "npy", "npz", "pytorch"

// A directory is safetensors shards. The magic decides: "GGUF" -> GGUF,
// "\x93NUMPY" -> NPY, a ZIP -> PyTorch when it has a */data.pkl member, else
// NPZ; anything else is read as safetensors. A known extension (.safetensors,
// .gguf, .npy, .npz, .pth/.pt) must agree with the magic: a .gguf that is a
// ZIP, a .safetensors that is GGUF, a .pth that is no ZIP is kInvalid naming
// the file and what its bytes look like (never parsed as the wrong format). A legacy (pre-1.6, raw pickle) torch.save
// file is kUnsupported with a message saying how to re-save it, whatever
// its extension. A missing path is kIo.
Result<FileFormat> DetectFileFormat(const std::filesystem::path& path, const ParseLimits& limits);

// Reads the headers of an NPY, NPZ or PyTorch file (only the bytes it needs:
// the ZIP directory, NPY headers, data.pkl), bounded by `limits`.
Result<ArrayFile> ReadArrayFile(const std::filesystem::path& path, FileFormat format,
                                const ParseLimits& limits);

}  // namespace amn::formats

#endif  // AMN_FORMATS_FILE_FORMAT_H_
