// Format detection and opening of the array formats.
#include "formats/file_format.h"

#include <cstring>

#include "formats/byte_source.h"
#include "formats/npy.h"
#include "formats/pytorch.h"
#include "formats/zip_archive.h"

namespace amn::formats {
namespace fs = std::filesystem;

namespace {

constexpr char kNpyMagic[] = "\x93NUMPY";

bool StartsWith(ByteSource& source, std::string_view magic) {
  if (source.size() < magic.size()) return false;
  std::string head(magic.size(), '\0');
  if (!source.ReadAt(0, std::as_writable_bytes(std::span(head))).ok()) return false;
  return head == magic;
}

Status LegacyTorchError(const fs::path& path) {
  return Status(StatusCode::kUnsupported,
                MessageSafe(path.string(), kMessagePathBytes) +
                    ": a legacy PyTorch file (raw pickle, torch.save before 1.6 or "
                    "_use_new_zipfile_serialization=False); these are not read because they "
                    "cannot be parsed without running arbitrary pickle code paths. Re-save it "
                    "with a current torch.save (the zip format) and try again");
}

// "x/data.pkl" with a single top-level folder.
bool HasDataPkl(const ZipArchive& archive) {
  for (const ZipEntry& e : archive.entries()) {
    const size_t slash = e.name.find('/');
    if (slash != std::string::npos && e.name.compare(slash, std::string::npos, "/data.pkl") == 0) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::string_view FileFormatName(FileFormat format) {
  switch (format) {
    case FileFormat::kSafetensors: return "safetensors";
    case FileFormat::kGguf: return "gguf";
    case FileFormat::kNpy: return "npy";
    case FileFormat::kNpz: return "npz";
    case FileFormat::kPytorch: return "pytorch";
  }
  return "unknown";
}

Result<FileFormat> DetectFileFormat(const fs::path& path, const ParseLimits& limits) {
  std::error_code error;
  if (fs::is_directory(path, error)) return FileFormat::kSafetensors;
  AMN_ASSIGN_OR_RETURN(auto source, FileSource::Open(path));
  if (LooksLikeLegacyTorch(*source)) return LegacyTorchError(path);
  const std::string ext = path.extension().string();
  if (ext == ".safetensors") return FileFormat::kSafetensors;
  if (ext == ".gguf") return FileFormat::kGguf;
  if (ext == ".npy") return FileFormat::kNpy;
  if (ext == ".npz") return FileFormat::kNpz;
  if (ext == ".pth" || ext == ".pt") return FileFormat::kPytorch;
  if (StartsWith(*source, "GGUF")) return FileFormat::kGguf;
  if (StartsWith(*source, std::string_view(kNpyMagic, 6))) return FileFormat::kNpy;
  if (LooksLikeZip(*source)) {
    AMN_ASSIGN_OR_RETURN(auto archive, ZipArchive::Open(std::move(source), limits));
    return HasDataPkl(*archive) ? FileFormat::kPytorch : FileFormat::kNpz;
  }
  return FileFormat::kSafetensors;
}

Result<ArrayFile> ReadArrayFile(const fs::path& path, FileFormat format, const ParseLimits& limits) {
  if (format == FileFormat::kNpy) {
    AMN_ASSIGN_OR_RETURN(auto source, FileSource::Open(path));
    return ReadNpy(*source, path.stem().string(), limits);
  }
  AMN_ASSIGN_OR_RETURN(auto archive, ZipArchive::OpenFile(path, limits));
  return format == FileFormat::kPytorch ? ReadPytorch(*archive, limits) : ReadNpz(*archive, limits);
}

}  // namespace amn::formats
