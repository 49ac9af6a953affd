// Format detection and opening of the array formats.
#include "formats/file_format.h"

#include <array>
#include <cstring>
#include <memory>
#include <optional>

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

// What the first bytes say the file is, independent of its name.
enum class Content { kUnknown, kGguf, kNpy, kZip, kSafetensors, kPickle };

Content SniffContent(ByteSource& source) {
  if (StartsWith(source, "GGUF")) return Content::kGguf;
  if (StartsWith(source, std::string_view(kNpyMagic, 6))) return Content::kNpy;
  if (LooksLikeZip(source)) return Content::kZip;
  std::array<std::byte, 9> head{};
  const size_t n_head = source.size() < head.size() ? static_cast<size_t>(source.size()) : head.size();
  if (n_head < 2 || !source.ReadAt(0, std::span(head.data(), n_head)).ok()) return Content::kUnknown;
  // A safetensors length can begin 0x80 0x02 too: it is tried first.
  if (n_head == head.size()) {
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = n << 8 | static_cast<uint8_t>(head[i]);
    if (n >= 2 && n <= source.size() - 8 && head[8] == std::byte{'{'}) return Content::kSafetensors;
  }
  // PROTO 2..5: a pickle stream (torch.save without the zip container).
  const auto protocol = static_cast<uint8_t>(head[1]);
  if (head[0] == std::byte{0x80} && protocol >= 2 && protocol <= 5) return Content::kPickle;
  return Content::kUnknown;
}

std::string ContentText(Content content, std::optional<bool> torch_zip) {
  switch (content) {
    case Content::kGguf: return "a GGUF file";
    case Content::kNpy: return "an NPY array";
    case Content::kZip:
      if (!torch_zip) return "a ZIP archive";
      return *torch_zip ? "a ZIP archive with data.pkl (a PyTorch checkpoint)"
                        : "a ZIP archive without data.pkl (an NPZ)";
    case Content::kSafetensors: return "a safetensors file";
    case Content::kPickle: return "a raw pickle stream";
    case Content::kUnknown: break;
  }
  return "none of the formats amn reads";
}

// Whether the content is what the extension's format starts with. A
// safetensors header has no magic, so .safetensors is refused only when the
// bytes are clearly another format. An .npz must not be a PyTorch zip.
bool ContentFits(FileFormat format, Content content, std::optional<bool> torch_zip) {
  switch (format) {
    case FileFormat::kGguf: return content == Content::kGguf;
    case FileFormat::kNpy: return content == Content::kNpy;
    case FileFormat::kNpz: return content == Content::kZip && torch_zip != true;
    case FileFormat::kPytorch: return content == Content::kZip;
    case FileFormat::kSafetensors:
      return content == Content::kSafetensors || content == Content::kUnknown;
  }
  return false;
}

std::optional<FileFormat> FormatOfExtension(const std::string& ext) {
  if (ext == ".safetensors") return FileFormat::kSafetensors;
  if (ext == ".gguf") return FileFormat::kGguf;
  if (ext == ".npy") return FileFormat::kNpy;
  if (ext == ".npz") return FileFormat::kNpz;
  if (ext == ".pth" || ext == ".pt") return FileFormat::kPytorch;
  return std::nullopt;
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
  const std::optional<FileFormat> named = FormatOfExtension(ext);
  const Content content = SniffContent(*source);
  // Whether a ZIP holds */data.pkl: only asked when it decides something.
  std::optional<bool> torch_zip;
  if (content == Content::kZip && named != FileFormat::kPytorch) {
    auto archive = ZipArchive::Open(std::move(source), limits);
    if (archive.ok()) {
      torch_zip = HasDataPkl(**archive);
    } else if (!named || *named == FileFormat::kNpz) {
      return archive.status();
    }
  }
  if (named) {
    if (ContentFits(*named, content, torch_zip)) return *named;
    return Status(StatusCode::kInvalid,
                  MessageSafe(path.string(), kMessagePathBytes) + ": named " + MessageSafe(ext) +
                      " but its bytes are " + ContentText(content, torch_zip) + ", not " +
                      std::string(FileFormatName(*named)) +
                      "; rename it to match its content (or to .bin to let amn detect it)");
  }
  switch (content) {
    case Content::kGguf: return FileFormat::kGguf;
    case Content::kNpy: return FileFormat::kNpy;
    case Content::kZip: return torch_zip == true ? FileFormat::kPytorch : FileFormat::kNpz;
    default: return FileFormat::kSafetensors;
  }
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
