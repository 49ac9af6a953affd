// amn::Model: parse once (headers and scheme), then inspect or remember.
#include "amn/model.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstring>
#include <new>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "amn/ggml_dequant.h"
#include "formats/byte_source.h"
#include "formats/file_format.h"
#include "formats/hf_cache.h"
#include "formats/gguf.h"
#include "formats/model_dir_output.h"
#include "formats/model_config.h"
#include "formats/model_files.h"
#include "formats/model_impl.h"
#include "formats/ollama.h"
#include "formats/pytorch_dir.h"
#include "formats/quant_scheme.h"
#include "formats/remember_engine.h"
#include "formats/remember_output.h"
#include "formats/remember_plan.h"
#include "formats/utf8.h"

namespace amn {
namespace fs = std::filesystem;
using formats::Dtype;
using formats::TensorRole;

namespace {

// Name suffixes that say "quantized", dropped from default output names
// (longest first so "-FP8-dynamic" wins over "-FP8").
constexpr std::string_view kQuantSuffixes[] = {
    "-FP8-Dynamic", "-FP8-dynamic", "-fp8-dynamic", "-FP8-Static", "-FP8-static",
    "-fp8-static",  "-GPTQ-Int4",   "-GPTQ-Int8",   "-gptq-int4",  "-gptq-int8",
    "-bnb-4bit",    "-bnb-int8",    "-gptq4",       "-gptq8",      "-GPTQ",
    "-gptq",        "_gptq",        "-AWQ",         "-awq",        "_awq",
    "-bnb",         "_bnb",         "-4bit",        "-int4",       "-int8",
    "-FP8",         "-fp8",         "_fp8",         "_FP8"};

std::string TypeSuffix(ElemType to) {
  return to == ElemType::kF32 ? "f32" : to == ElemType::kF16 ? "f16" : "bf16";
}

std::string LayoutText(const formats::Fp8Weight& w, Dtype code) {
  std::string text = code == Dtype::kF8E5m2 ? "FP8 E5M2" : "FP8 E4M3";
  switch (w.layout) {
    case formats::Fp8Layout::kPerTensor: return text + ", per-tensor";
    case formats::Fp8Layout::kPerChannel: return text + ", per-channel";
    case formats::Fp8Layout::kBlock:
      return text + ", " + std::to_string(w.block_rows) + "x" + std::to_string(w.block_cols) +
             " blocks";
  }
  return text;
}

void AddDtypeStat(std::vector<DtypeStat>& stats, const std::string& dtype, uint64_t bytes) {
  for (DtypeStat& s : stats) {
    if (s.dtype == dtype) {
      ++s.tensors;
      s.bytes += bytes;
      return;
    }
  }
  stats.push_back({dtype, 1, bytes});
}

void SortDtypeStats(std::vector<DtypeStat>& stats) {
  std::stable_sort(stats.begin(), stats.end(),
                   [](const DtypeStat& a, const DtypeStat& b) { return a.bytes > b.bytes; });
}

// A GGUF value as JSON; arrays as {"type", "count", "first": [kept items]}.
nlohmann::json GgufValueJson(const formats::GgufValue& v) {
  using formats::GgufValueType;
  switch (v.type) {
    case GgufValueType::kU8: case GgufValueType::kU16: case GgufValueType::kU32:
    case GgufValueType::kU64: return v.u;
    case GgufValueType::kI8: case GgufValueType::kI16: case GgufValueType::kI32:
    case GgufValueType::kI64: return v.i;
    case GgufValueType::kF32: case GgufValueType::kF64:
      return std::isfinite(v.f) ? nlohmann::json(v.f) : nlohmann::json(std::to_string(v.f));
    case GgufValueType::kBool: return v.b;
    case GgufValueType::kString: return formats::EscapeInvalidUtf8(v.s);
    case GgufValueType::kArray: {
      nlohmann::json first = nlohmann::json::array();
      for (const formats::GgufValue& item : v.items) first.push_back(GgufValueJson(item));
      return {{"type", std::string(formats::GgufValueTypeName(v.elem_type))},
              {"count", v.count},
              {"first", std::move(first)}};
    }
  }
  return nullptr;
}

// What a passthrough tensor of `dtype` and `bytes` becomes: its size in the
// output, and whether remember converts it to `to`.
uint64_t PassthroughBytes(std::optional<formats::Dtype> dtype, uint64_t bytes, ElemType to,
                          bool keep_passthrough, InspectInfo& info) {
  const formats::Dtype out = formats::DtypeOf(to);
  if (keep_passthrough || !dtype || !formats::IsFloat(*dtype) || *dtype == out) return bytes;
  ++info.converted_tensors;
  return bytes / formats::DtypeBytes(*dtype) * formats::DtypeBytes(out);
}

InspectInfo InspectGguf(const formats::GgufHeader& h, ElemType to, bool keep_passthrough) {
  InspectInfo info;
  info.format = "gguf";
  info.to = to;
  info.keep_passthrough = keep_passthrough;
  info.gguf_version = h.version;
  info.alignment = h.alignment;
  info.metadata_keys = h.metadata.size();
  if (const formats::GgufValue* arch = h.Find("general.architecture")) {
    info.architecture = formats::EscapeInvalidUtf8(arch->s);
  }
  const uint64_t out_elem = formats::DtypeBytes(formats::DtypeOf(to));
  for (const formats::GgufTensorInfo& t : h.tensors) {
    const GgmlTypeInfo* type = FindGgmlType(t.type);
    info.current_bytes += t.bytes;
    if (type->quantized) {
      ++info.quantized_tensors;
      info.remembered_bytes += t.elements * out_elem;
      if (info.unsupported.empty() && !GgmlTypeDecodable(type->type)) {
        info.unsupported = std::string(type->name) + " tensors (e.g. '" + formats::MessageSafe(t.name) +
                           "') cannot be dequantized by this build yet";
      }
    } else {
      ++info.passthrough_tensors;
      info.remembered_bytes += PassthroughBytes(formats::DtypeFromName(type->name), t.bytes, to,
                                                keep_passthrough, info);
    }
    AddDtypeStat(info.dtypes, std::string(type->name), t.bytes);
  }
  SortDtypeStats(info.dtypes);
  info.quantized = info.quantized_tensors > 0;
  std::string mix;
  for (const DtypeStat& s : info.dtypes) {
    mix += (mix.empty() ? "" : ", ") + s.dtype + " x" + std::to_string(s.tensors);
  }
  info.scheme = "GGUF v" + std::to_string(h.version) +
                (info.architecture.empty() ? "" : " (" + info.architecture + ")") + ": " + mix;
  return info;
}

std::vector<TensorSummary> GgufTensors(const formats::GgufHeader& h, const fs::path& path) {
  std::vector<TensorSummary> list;
  for (const formats::GgufTensorInfo& t : h.tensors) {
    const GgmlTypeInfo* type = FindGgmlType(t.type);
    TensorSummary s;
    s.name = formats::EscapeInvalidUtf8(t.name);
    s.dtype = std::string(type->name);
    s.shape.assign(t.dims.rbegin(), t.dims.rend());
    s.bytes = t.bytes;
    s.role = type->quantized ? "quantized" : "passthrough";
    s.scheme = type->quantized ? "ggml " + std::string(type->name) : "";
    s.shard = path.filename().string();
    list.push_back(std::move(s));
  }
  return list;
}

// NPY/NPZ/PyTorch: `to` already cleared when keep_passthrough is set.
InspectInfo InspectArrays(const formats::ArrayFile& file, std::optional<ElemType> to,
                          bool keep_passthrough) {
  InspectInfo info;
  info.format = file.format;
  info.to = to;
  info.keep_passthrough = keep_passthrough;
  for (const formats::ArrayEntry& a : file.arrays) {
    const uint64_t bytes = a.elements * formats::DtypeBytes(a.dtype);
    ++info.passthrough_tensors;
    info.current_bytes += bytes;
    info.remembered_bytes += to ? PassthroughBytes(a.dtype, bytes, *to, false, info) : bytes;
    AddDtypeStat(info.dtypes, std::string(formats::DtypeName(a.dtype)), bytes);
  }
  SortDtypeStats(info.dtypes);
  std::string mix;
  for (const DtypeStat& s : info.dtypes) {
    mix += (mix.empty() ? "" : ", ") + s.dtype + " x" + std::to_string(s.tensors);
  }
  info.scheme = "Unquantized" + (mix.empty() ? std::string() : " (" + mix + ")");
  return info;
}

std::vector<TensorSummary> ArrayTensors(const formats::ArrayFile& file, const fs::path& path) {
  std::vector<TensorSummary> list;
  for (const formats::ArrayEntry& a : file.arrays) {
    TensorSummary s;
    s.name = formats::EscapeInvalidUtf8(a.name);
    s.dtype = std::string(formats::DtypeName(a.dtype));
    s.shape = a.shape;
    s.bytes = a.elements * formats::DtypeBytes(a.dtype);
    s.role = "passthrough";
    s.shard = path.filename().string();
    list.push_back(std::move(s));
  }
  return list;
}

}  // namespace

namespace detail {

// Whether `path` or one of its existing ancestors is `ancestor` itself (same
// device and inode, so through bind mounts, symlinks and hard links too).
namespace {

bool IsOrInside(const fs::path& path, const fs::path& ancestor) {
  struct stat a {};
  if (::stat(ancestor.c_str(), &a) != 0) return false;
  for (fs::path p = path; !p.empty(); p = p.parent_path()) {
    struct stat s {};
    if (::stat(p.c_str(), &s) == 0 && s.st_dev == a.st_dev && s.st_ino == a.st_ino) return true;
    if (p == p.parent_path()) break;
  }
  return false;
}

}  // namespace

Status CheckOutputPath(const fs::path& input, const fs::path& output, bool overwrite) {
  std::error_code error;
  // absolute() first: weakly_canonical leaves a relative path that does not
  // exist yet relative, with an empty parent.
  const fs::path in = fs::weakly_canonical(fs::absolute(input, error), error);
  const fs::path out = fs::weakly_canonical(fs::absolute(output, error), error);
  const std::string in_text = in.string(), out_text = out.string();
  auto inside = [](const std::string& child, const std::string& parent) {
    return child.size() > parent.size() && child.compare(0, parent.size(), parent) == 0 &&
           child[parent.size()] == '/';
  };
  if (in == out || inside(out_text, in_text) || inside(in_text, out_text) ||
      IsOrInside(out, in) || IsOrInside(in, out)) {
    return Status(StatusCode::kInvalidArgument,
                  "output " + output.string() + " would overwrite or nest inside the input " +
                      input.string());
  }
  if (fs::exists(output, error) && !overwrite) {
    return Status(StatusCode::kInvalidArgument,
                  output.string() + " already exists (use --force to replace it)");
  }
  const fs::path parent = out.parent_path();
  if (!fs::is_directory(parent, error)) {
    return Status(StatusCode::kIo, "output directory " + parent.string() + " does not exist");
  }
  return Status::Ok();
}

formats::EngineOptions EngineFor(unsigned threads, const std::atomic<bool>* cancel, bool use_mmap) {
  formats::EngineOptions engine;
  engine.threads = threads != 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
  engine.cancel = cancel;
  engine.use_mmap = use_mmap;
  return engine;
}

}  // namespace detail

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::~Model() = default;

Result<Model> Model::Open(const fs::path& path, const ParseLimits& limits) {
  return Open(path, limits, OpenOptions{});
}

Result<Model> Model::Open(const fs::path& path, const ParseLimits& limits, const OpenOptions& options) {
  // Limits bound every allocation a file declares; what can still fail is
  // the host running short, reported as such instead of a bare bad_alloc.
  try {
    return OpenUnguarded(path, limits, options);
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kLimitExceeded,
                  formats::MessageSafe(path.string(), formats::kMessagePathBytes) +
                      ": out of memory while reading the model");
  }
}

Result<Model> Model::OpenUnguarded(const fs::path& path, const ParseLimits& limits,
                                   const OpenOptions& options) {
  auto impl = std::make_unique<Impl>();
  fs::path file = path;
  if (path.string().starts_with(formats::kOllamaPrefix)) {
    AMN_ASSIGN_OR_RETURN(file, formats::ResolveOllama(path.string()));
    if (options.verify) AMN_RETURN_IF_ERROR(formats::VerifyOllamaBlob(file));
  } else if (path.string().starts_with(formats::kHfPrefix)) {
    AMN_ASSIGN_OR_RETURN(file, formats::ResolveHfCache(path.string()));
    if (options.verify) AMN_RETURN_IF_ERROR(formats::VerifyHfSnapshot(file));
  } else if (options.verify) {
    return Status(StatusCode::kInvalidArgument,
                  "--verify checks the blobs of ollama: and hf: names, which are named by their "
                  "sha256; " + formats::MessageSafe(path.string(), formats::kMessagePathBytes) +
                      " is neither");
  }
  const ParseLimits clamped = limits.Clamped();
  impl->limits = clamped;
  std::error_code error;
  if (fs::is_directory(file, error) && formats::IsPytorchDir(file)) {
    AMN_ASSIGN_OR_RETURN(impl->torch, formats::OpenPytorchDir(file, clamped));
    impl->array_file = formats::MergedArrays(impl->torch);
    impl->arrays = true;
    impl->torch_dir = true;
    impl->array_path = file;
    return Model(std::move(impl));
  }
  AMN_ASSIGN_OR_RETURN(const formats::FileFormat format, formats::DetectFileFormat(file, clamped));
  switch (format) {
    case formats::FileFormat::kGguf: {
      AMN_ASSIGN_OR_RETURN(auto source, formats::FileSource::Open(file));
      AMN_ASSIGN_OR_RETURN(impl->gguf_header, formats::ReadGgufHeader(*source, clamped));
      impl->gguf = true;
      impl->gguf_path = file;
      return Model(std::move(impl));
    }
    case formats::FileFormat::kNpy:
    case formats::FileFormat::kNpz:
    case formats::FileFormat::kPytorch: {
      AMN_ASSIGN_OR_RETURN(impl->array_file, formats::ReadArrayFile(file, format, clamped));
      impl->arrays = true;
      impl->array_path = file;
      return Model(std::move(impl));
    }
    case formats::FileFormat::kSafetensors: break;
  }
  AMN_ASSIGN_OR_RETURN(impl->files, formats::OpenModelFiles(file, clamped));
  AMN_ASSIGN_OR_RETURN(impl->scheme, formats::DetectScheme(impl->files));
  return Model(std::move(impl));
}

std::vector<std::string> Model::Warnings() const {
  if (impl_->torch_dir) return impl_->torch.warnings;
  return impl_->gguf || impl_->arrays ? std::vector<std::string>() : impl_->files.warnings;
}

const fs::path& Model::path() const {
  if (impl_->arrays) return impl_->array_path;
  return impl_->gguf ? impl_->gguf_path : impl_->files.input;
}

InspectInfo Model::Inspect(std::optional<ElemType> requested, bool keep_passthrough) const {
  if (impl_->arrays) {
    // A PyTorch directory converts like a safetensors one (BF16 by default).
    const std::optional<ElemType> to =
        impl_->torch_dir ? std::optional(requested.value_or(ElemType::kBf16)) : requested;
    return InspectArrays(impl_->array_file, keep_passthrough ? std::nullopt : to, keep_passthrough);
  }
  const ElemType to = requested.value_or(ElemType::kBf16);
  if (impl_->gguf) return InspectGguf(impl_->gguf_header, to, keep_passthrough);
  InspectInfo info;
  info.format = "safetensors";
  info.scheme = impl_->scheme.description;
  info.quantized = impl_->scheme.quantized;
  info.unsupported = impl_->scheme.unsupported;
  info.shards = impl_->files.shards.size();
  info.sharded = impl_->files.is_directory;
  const formats::ModelIdentity identity = formats::ReadModelIdentity(impl_->files.config_json);
  info.architecture = identity.architecture;
  info.model_type = identity.model_type;
  info.to = to;
  info.keep_passthrough = keep_passthrough;
  const uint64_t out_elem = formats::DtypeBytes(formats::DtypeOf(to));
  for (size_t s = 0; s < impl_->files.shards.size(); ++s) {
    const auto& tensors = impl_->files.shards[s].header.tensors;
    for (size_t i = 0; i < tensors.size(); ++i) {
      const formats::TensorEntry& t = tensors[i];
      info.current_bytes += t.bytes();
      switch (impl_->scheme.roles[s][i]) {
        case TensorRole::kQuantized: {
          ++info.quantized_tensors;
          const int64_t w = impl_->scheme.weight_index[s][i];
          info.remembered_bytes += impl_->scheme.weights[static_cast<size_t>(w)].output_elements * out_elem;
          break;
        }
        case TensorRole::kCompanion: {
          ++info.companion_tensors;
          const std::string dtype(formats::DtypeName(t.dtype));
          if (std::find(info.companion_dtypes.begin(), info.companion_dtypes.end(), dtype) ==
              info.companion_dtypes.end()) {
            info.companion_dtypes.push_back(dtype);
          }
          break;
        }
        case TensorRole::kDropped: ++info.dropped_tensors; break;
        case TensorRole::kPassthrough:
          ++info.passthrough_tensors;
          info.remembered_bytes += PassthroughBytes(t.dtype, t.bytes(), to, keep_passthrough, info);
          break;
      }
      AddDtypeStat(info.dtypes, std::string(formats::DtypeName(t.dtype)), t.bytes());
    }
  }
  SortDtypeStats(info.dtypes);
  return info;
}

std::vector<TensorSummary> Model::Tensors() const {
  if (impl_->arrays) return ArrayTensors(impl_->array_file, impl_->array_path);
  if (impl_->gguf) return GgufTensors(impl_->gguf_header, impl_->gguf_path);
  std::vector<TensorSummary> list;
  for (size_t s = 0; s < impl_->files.shards.size(); ++s) {
    const auto& shard = impl_->files.shards[s];
    for (size_t i = 0; i < shard.header.tensors.size(); ++i) {
      const formats::TensorEntry& t = shard.header.tensors[i];
      TensorSummary summary;
      summary.name = t.name;
      summary.dtype = std::string(formats::DtypeName(t.dtype));
      summary.shape = t.shape;
      summary.bytes = t.bytes();
      summary.shard = shard.path.filename().string();
      switch (impl_->scheme.roles[s][i]) {
        case TensorRole::kQuantized: {
          summary.role = "quantized";
          const formats::QuantWeight& w =
              impl_->scheme.weights[static_cast<size_t>(impl_->scheme.weight_index[s][i])];
          summary.scheme = w.kind == formats::QuantKind::kFp8 ? LayoutText(w.fp8, t.dtype) : w.description;
          break;
        }
        case TensorRole::kCompanion: summary.role = "companion"; break;
        case TensorRole::kDropped: summary.role = "dropped"; break;
        case TensorRole::kPassthrough: summary.role = "passthrough"; break;
      }
      list.push_back(std::move(summary));
    }
  }
  return list;
}

std::vector<MetadataEntry> Model::Metadata() const {
  std::vector<MetadataEntry> list;
  if (impl_->arrays) {
    for (const auto& [key, value] : impl_->array_file.metadata) {
      list.push_back({formats::EscapeInvalidUtf8(key), "string",
                      nlohmann::json(formats::EscapeInvalidUtf8(value)).dump()});
    }
    return list;
  }
  if (impl_->gguf) {
    for (const formats::GgufKeyValue& kv : impl_->gguf_header.metadata) {
      list.push_back({formats::EscapeInvalidUtf8(kv.key), std::string(formats::GgufValueTypeName(kv.value.type)),
                      GgufValueJson(kv.value).dump()});
    }
    return list;
  }
  for (const formats::Shard& shard : impl_->files.shards) {
    for (const auto& [key, value] : shard.header.metadata) {
      list.push_back({key, "string", nlohmann::json(value).dump()});
    }
  }
  return list;
}

Status Model::Remember(const fs::path& output, const RememberOptions& options) const {
  try {
    return RememberUnguarded(output, options);
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kLimitExceeded, formats::MessageSafe(output.string(), formats::kMessagePathBytes) +
                                                  ": out of memory while writing the output");
  }
}

namespace detail {

Result<PlannedOutput> PlanOutput(const Model::Impl& impl, std::optional<ElemType> requested,
                                 bool keep_passthrough, const std::atomic<bool>* cancel) {
  const ElemType to = requested.value_or(ElemType::kBf16);
  PlannedOutput out;
  if (impl.gguf) {
    AMN_ASSIGN_OR_RETURN(out.plan, formats::PlanGgufRemember(impl.gguf_path, impl.gguf_header, to,
                                                             keep_passthrough, cancel));
  } else if (impl.torch_dir) {
    // Floats become `to` (BF16 unless set), as for a safetensors directory.
    AMN_ASSIGN_OR_RETURN(out.plan, formats::PlanPytorchDirRemember(
                                   impl.torch, keep_passthrough ? std::nullopt : std::optional(to),
                                   cancel));
    out.directory = true;
    for (const fs::path& companion : impl.torch.companion_files) {
      if (companion.filename() == "config.json") {
        out.config_path = companion;
        out.config_json = impl.torch.config_json;
      } else {
        out.extras.copies.push_back(companion);
      }
    }
    out.extras.index_name = "model.safetensors.index.json";
    out.has_index = impl.torch.has_index;
    out.index_metadata_json = impl.torch.index_metadata_json;
  } else if (impl.arrays) {
    AMN_ASSIGN_OR_RETURN(out.plan, formats::PlanArrayRemember(
                                   impl.array_path, impl.array_file,
                                   keep_passthrough ? std::nullopt : requested, cancel));
  } else {
    const formats::ModelFiles& files = impl.files;
    if (!impl.scheme.unsupported.empty()) {
      return Status(StatusCode::kUnsupported, files.input.string() + ": " + impl.scheme.unsupported);
    }
    AMN_ASSIGN_OR_RETURN(out.plan, formats::PlanRemember(files, impl.scheme, to, keep_passthrough,
                                                         cancel));
    out.directory = files.is_directory;
    if (!out.directory && out.plan.shards.size() != 1) {
      return Status(StatusCode::kInvalid, files.input.string() + ": no tensor left to write");
    }
    if (out.directory) {
      for (const fs::path& companion : files.companion_files) {
        if (!formats::CopiedToOutput(companion, impl.scheme.quantized)) continue;
        if (companion.filename() == "config.json") {
          out.config_path = companion;
          out.config_json = files.config_json;
        } else {
          out.extras.copies.push_back(companion);
        }
      }
      out.extras.index_name = "model.safetensors.index.json";
      out.has_index = files.has_index;
      out.index_metadata_json = files.index_metadata_json;
    }
  }
  return out;
}

Status FinishExtras(PlannedOutput& out,
                    const std::function<Result<std::string>(const std::string&)>& config) {
  if (!out.config_path.empty()) {
    auto text = config(out.config_json);
    if (!text.ok()) {
      return Status(text.status().code(),
                    formats::MessageSafe(out.config_path.string(), formats::kMessagePathBytes) +
                        ": " + text.status().message());
    }
    out.extras.texts.emplace_back("config.json", *text);
  }
  if (out.directory && (out.has_index || out.plan.shards.size() > 1)) {
    AMN_ASSIGN_OR_RETURN(const std::string index,
                         formats::IndexJson(out.index_metadata_json, out.plan));
    out.extras.texts.emplace_back(out.extras.index_name, index);
  }
  return Status::Ok();
}

Status WritePlanned(const Model::Impl& impl, const fs::path& input, const PlannedOutput& out,
                    const fs::path& output, bool overwrite, const formats::EngineOptions& engine,
                    const std::function<void(const RememberProgress&)>& on_progress) {
  // The limit on what a model declares bounds what it makes, too: a view
  // repeated, a 4-bit weight dequantized or F16 widened to F32 can plan far
  // more output than the input holds. Refused before anything is written.
  if (out.plan.total_bytes > impl.limits.max_total_bytes) {
    return Status(StatusCode::kLimitExceeded,
                  input.string() + ": the output would be " + std::to_string(out.plan.total_bytes) +
                      " bytes, over the limit of " + std::to_string(impl.limits.max_total_bytes) +
                      " (limits.max_total_bytes, --max-bytes)");
  }
  AMN_RETURN_IF_ERROR(CheckOutputPath(input, output, overwrite));
  RememberProgress progress{0, out.plan.total_bytes, 0, out.plan.total_tensors};
  auto report = [&](uint64_t bytes, size_t tensors) {
    progress.bytes_done = bytes;
    progress.tensors_done = tensors;
    if (on_progress) on_progress(progress);
  };
  if (out.directory) {
    return formats::WriteDirectoryOutput(out.plan, out.extras, output, overwrite, engine, report);
  }
  return formats::WriteFileOutput(out.plan, output, overwrite, engine, report);
}

}  // namespace detail

Status Model::RememberUnguarded(const fs::path& output, const RememberOptions& options) const {
  AMN_ASSIGN_OR_RETURN(
      detail::PlannedOutput out,
      detail::PlanOutput(*impl_, options.to, options.keep_passthrough, options.cancel));
  AMN_RETURN_IF_ERROR(detail::FinishExtras(out, [&](const std::string& text) {
    return formats::RewriteConfigJson(text, formats::OutputFloatDtype(out.plan));
  }));
  return detail::WritePlanned(*impl_, path(), out, output, options.overwrite,
                              detail::EngineFor(options.threads, options.cancel, options.use_mmap),
                              options.progress);
}

fs::path Model::DefaultOutputPath(const fs::path& input, std::optional<ElemType> requested) {
  const std::string ext = input.extension().string();
  if (ext == ".npz" || ext == ".npy" || ext == ".pth" || ext == ".pt" || ext == ".bin") {
    const std::string suffix = requested ? "-" + TypeSuffix(*requested) : "";
    return input.parent_path() / (input.stem().string() + suffix + ".safetensors");
  }
  const ElemType to = requested.value_or(ElemType::kBf16);
  if (input.string().starts_with(formats::kHfPrefix)) {
    std::string stem = formats::HfRepoName(input.string());
    for (std::string_view suffix : kQuantSuffixes) {
      if (stem.size() > suffix.size() && stem.ends_with(suffix)) {
        stem.resize(stem.size() - suffix.size());
        break;
      }
    }
    return fs::path(stem + "-" + TypeSuffix(to));
  }
  if (input.string().starts_with(formats::kOllamaPrefix)) {
    std::string name = input.string().substr(formats::kOllamaPrefix.size());
    std::replace(name.begin(), name.end(), ':', '-');
    std::replace(name.begin(), name.end(), '/', '-');
    return fs::path(name + "-" + TypeSuffix(to) + ".safetensors");
  }
  if (input.extension() == ".gguf") {
    return input.parent_path() / (input.stem().string() + "-" + TypeSuffix(to) + ".safetensors");
  }
  fs::path clean = input;
  if (!clean.has_filename()) clean = clean.parent_path();  // "dir/" -> "dir"
  const bool is_file = clean.extension() == ".safetensors";
  std::string stem = is_file ? clean.stem().string() : clean.filename().string();
  for (std::string_view suffix : kQuantSuffixes) {
    if (stem.size() > suffix.size() && stem.ends_with(suffix)) {
      stem.resize(stem.size() - suffix.size());
      break;
    }
  }
  stem += "-" + TypeSuffix(to);
  return clean.parent_path() / (is_file ? stem + ".safetensors" : stem);
}

}  // namespace amn
