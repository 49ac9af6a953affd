// amn::Model: parse once (headers and scheme), then inspect or remember.
#include "amn/model.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "amn/ggml_dequant.h"
#include "formats/file_format.h"
#include "formats/gguf.h"
#include "formats/model_config.h"
#include "formats/model_files.h"
#include "formats/ollama.h"
#include "formats/quant_scheme.h"
#include "formats/remember_engine.h"
#include "formats/remember_plan.h"

namespace amn {
namespace fs = std::filesystem;
using formats::Dtype;
using formats::TensorRole;

struct Model::Impl {
  bool gguf = false;
  // safetensors
  formats::ModelFiles files;
  formats::ModelScheme scheme;
  // GGUF
  fs::path gguf_path;
  formats::GgufHeader gguf_header;
  // NPY, NPZ, PyTorch
  bool arrays = false;
  fs::path array_path;
  formats::ArrayFile array_file;
};

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

std::string TorchDtype(ElemType to) {
  return to == ElemType::kF32 ? "float32" : to == ElemType::kF16 ? "float16" : "bfloat16";
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

Status IoError(const std::string& what, const fs::path& path) {
  return Status(StatusCode::kIo, path.string() + ": " + what + ": " + std::strerror(errno));
}

// A file or directory next to `target` that disappears unless Keep() is
// called: failures never leave a partial output that looks finished.
class TempPath {
 public:
  explicit TempPath(const fs::path& target)
      : path_(target.parent_path() /
              ("." + target.filename().string() + ".amn-partial-" + std::to_string(getpid()))) {}
  ~TempPath() {
    if (!kept_) {
      std::error_code ignored;
      fs::remove_all(path_, ignored);
    }
  }
  const fs::path& path() const { return path_; }
  // Moves the temporary into place, replacing `target` when allowed.
  Status Commit(const fs::path& target, bool overwrite) {
    std::error_code error;
    if (overwrite && fs::is_directory(target) && !fs::is_directory(path_)) {
      return Status(StatusCode::kInvalidArgument,
                    target.string() + " is a directory; the output is a file");
    }
    if (overwrite && fs::is_directory(target)) fs::remove_all(target, error);
    if (error) return Status(StatusCode::kIo, target.string() + ": cannot replace: " + error.message());
    fs::rename(path_, target, error);
    if (error) return Status(StatusCode::kIo, target.string() + ": cannot rename into place: " + error.message());
    kept_ = true;
    return Status::Ok();
  }

 private:
  fs::path path_;
  bool kept_ = false;
};

Status WriteShardFile(const formats::RememberPlan& plan, const formats::OutputShard& shard,
                      const fs::path& path, const formats::EngineOptions& engine) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("cannot create", path);
  Status status = formats::WriteShard(plan, shard, fd, path.string(), engine);
  if (::close(fd) != 0 && status.ok()) status = IoError("cannot close", path);
  return status;
}

Status WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) return IoError("cannot write", path);
  return Status::Ok();
}

// config.json without quantization_config and with torch_dtype = the output
// type, so transformers loads the result as a plain model. Key order kept.
Result<std::string> RewriteConfig(const std::string& text, ElemType to) {
  nlohmann::ordered_json config;
  try {
    config = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return Status(StatusCode::kInvalid, "config.json is not valid JSON: " + std::string(e.what()));
  }
  if (!config.is_object()) return Status(StatusCode::kInvalid, "config.json is not an object");
  config.erase("quantization_config");
  config["torch_dtype"] = TorchDtype(to);
  return config.dump(2) + "\n";
}

Result<std::string> IndexJson(const formats::ModelFiles& files, const formats::RememberPlan& plan) {
  nlohmann::ordered_json index = nlohmann::ordered_json::object();
  nlohmann::ordered_json metadata;
  try {
    metadata = nlohmann::ordered_json::parse(files.index_metadata_json);
  } catch (const nlohmann::json::exception& e) {
    return Status(StatusCode::kInvalid, "index metadata is not valid JSON: " + std::string(e.what()));
  }
  if (!metadata.is_object()) metadata = nlohmann::ordered_json::object();
  uint64_t total = 0;
  std::map<std::string, std::string> weight_map;
  for (const formats::OutputShard& shard : plan.shards) {
    total += shard.data_bytes;
    for (const formats::OutputTensor& t : shard.tensors) weight_map[t.name] = shard.file_name;
  }
  metadata["total_size"] = total;
  index["metadata"] = std::move(metadata);
  index["weight_map"] = weight_map;
  return index.dump(2) + "\n";
}

// Refuses outputs that would overwrite or sit inside the input.
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
  if (in == out || inside(out_text, in_text) || inside(in_text, out_text)) {
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

formats::EngineOptions EngineFor(const RememberOptions& options) {
  formats::EngineOptions engine;
  engine.threads = options.threads != 0 ? options.threads
                                        : std::max(1u, std::thread::hardware_concurrency());
  engine.cancel = options.cancel;
  return engine;
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
    case GgufValueType::kString: return v.s;
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

InspectInfo InspectGguf(const formats::GgufHeader& h, ElemType to) {
  InspectInfo info;
  info.format = "gguf";
  info.to = to;
  info.gguf_version = h.version;
  info.alignment = h.alignment;
  info.metadata_keys = h.metadata.size();
  if (const formats::GgufValue* arch = h.Find("general.architecture")) info.architecture = arch->s;
  const uint64_t out_elem = formats::DtypeBytes(formats::DtypeOf(to));
  for (const formats::GgufTensorInfo& t : h.tensors) {
    const GgmlTypeInfo* type = FindGgmlType(t.type);
    info.current_bytes += t.bytes;
    if (type->quantized) {
      ++info.quantized_tensors;
      info.remembered_bytes += t.elements * out_elem;
      if (info.unsupported.empty() && !GgmlTypeDecodable(type->type)) {
        info.unsupported = std::string(type->name) + " tensors (e.g. '" + t.name +
                           "') cannot be dequantized by this build yet";
      }
    } else {
      ++info.passthrough_tensors;
      info.remembered_bytes += t.bytes;
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
    s.name = t.name;
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

InspectInfo InspectArrays(const formats::ArrayFile& file, std::optional<ElemType> to) {
  InspectInfo info;
  info.format = file.format;
  info.to = to;
  for (const formats::ArrayEntry& a : file.arrays) {
    const uint64_t bytes = a.elements * formats::DtypeBytes(a.dtype);
    ++info.passthrough_tensors;
    info.current_bytes += bytes;
    info.remembered_bytes += to && formats::ConvertsWithTo(a.dtype)
                                 ? a.elements * formats::DtypeBytes(formats::DtypeOf(*to))
                                 : bytes;
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
    s.name = a.name;
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

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::~Model() = default;

Result<Model> Model::Open(const fs::path& path, const ParseLimits& limits) {
  auto impl = std::make_unique<Impl>();
  fs::path file = path;
  if (path.string().starts_with(formats::kOllamaPrefix)) {
    AMN_ASSIGN_OR_RETURN(file, formats::ResolveOllama(path.string()));
  }
  const ParseLimits clamped = limits.Clamped();
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

const fs::path& Model::path() const {
  if (impl_->arrays) return impl_->array_path;
  return impl_->gguf ? impl_->gguf_path : impl_->files.input;
}

InspectInfo Model::Inspect(std::optional<ElemType> requested) const {
  if (impl_->arrays) return InspectArrays(impl_->array_file, requested);
  const ElemType to = requested.value_or(ElemType::kBf16);
  if (impl_->gguf) return InspectGguf(impl_->gguf_header, to);
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
          info.remembered_bytes += t.bytes();
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
      list.push_back({key, "string", nlohmann::json(value).dump()});
    }
    return list;
  }
  if (impl_->gguf) {
    for (const formats::GgufKeyValue& kv : impl_->gguf_header.metadata) {
      list.push_back({kv.key, std::string(formats::GgufValueTypeName(kv.value.type)),
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
  const ElemType to = options.to.value_or(ElemType::kBf16);
  if (impl_->gguf || impl_->arrays) {
    formats::RememberPlan plan;
    if (impl_->gguf) {
      AMN_ASSIGN_OR_RETURN(plan, formats::PlanGgufRemember(impl_->gguf_path, impl_->gguf_header, to));
    } else {
      AMN_ASSIGN_OR_RETURN(plan, formats::PlanArrayRemember(impl_->array_path, impl_->array_file,
                                                            options.to));
    }
    AMN_RETURN_IF_ERROR(CheckOutputPath(path(), output, options.overwrite));
    formats::EngineOptions engine = EngineFor(options);
    RememberProgress progress{0, plan.total_bytes, 0, plan.total_tensors};
    engine.on_progress = [&](uint64_t bytes, size_t tensors) {
      progress.bytes_done = bytes;
      progress.tensors_done = tensors;
      if (options.progress) options.progress(progress);
    };
    TempPath temp(output);
    AMN_RETURN_IF_ERROR(WriteShardFile(plan, plan.shards.front(), temp.path(), engine));
    return temp.Commit(output, options.overwrite);
  }
  const formats::ModelFiles& files = impl_->files;
  if (!impl_->scheme.unsupported.empty()) {
    return Status(StatusCode::kUnsupported, files.input.string() + ": " + impl_->scheme.unsupported);
  }
  AMN_ASSIGN_OR_RETURN(const formats::RememberPlan plan,
                       formats::PlanRemember(files, impl_->scheme, to));
  AMN_RETURN_IF_ERROR(CheckOutputPath(files.input, output, options.overwrite));

  formats::EngineOptions engine = EngineFor(options);
  RememberProgress progress;
  progress.bytes_total = plan.total_bytes;
  progress.tensors_total = plan.total_tensors;
  uint64_t shard_base_bytes = 0;
  size_t shard_base_tensors = 0;
  engine.on_progress = [&](uint64_t bytes, size_t tensors) {
    progress.bytes_done = shard_base_bytes + bytes;
    progress.tensors_done = shard_base_tensors + tensors;
    if (options.progress) options.progress(progress);
  };
  auto write_shard = [&](const formats::OutputShard& shard, const fs::path& path) -> Status {
    AMN_RETURN_IF_ERROR(WriteShardFile(plan, shard, path, engine));
    shard_base_bytes += shard.header_bytes.size() + shard.data_bytes;
    shard_base_tensors += shard.tensors.size();
    return Status::Ok();
  };

  TempPath temp(output);
  if (!files.is_directory) {
    if (plan.shards.size() != 1) {
      return Status(StatusCode::kInvalid, files.input.string() + ": no tensor left to write");
    }
    AMN_RETURN_IF_ERROR(write_shard(plan.shards.front(), temp.path()));
    return temp.Commit(output, options.overwrite);
  }

  std::error_code error;
  fs::create_directory(temp.path(), error);
  if (error) return Status(StatusCode::kIo, temp.path().string() + ": " + error.message());
  for (const formats::OutputShard& shard : plan.shards) {
    AMN_RETURN_IF_ERROR(write_shard(shard, temp.path() / shard.file_name));
  }
  if (files.has_index || plan.shards.size() > 1) {
    AMN_ASSIGN_OR_RETURN(const std::string index, IndexJson(files, plan));
    AMN_RETURN_IF_ERROR(WriteText(temp.path() / "model.safetensors.index.json", index));
  }
  for (const fs::path& companion : files.companion_files) {
    const fs::path target = temp.path() / companion.filename();
    if (companion.filename() == "config.json") {
      AMN_ASSIGN_OR_RETURN(const std::string config, RewriteConfig(files.config_json, to));
      AMN_RETURN_IF_ERROR(WriteText(target, config));
    } else {
      fs::copy_file(companion, target, error);
      if (error) return Status(StatusCode::kIo, companion.string() + ": cannot copy: " + error.message());
    }
  }
  return temp.Commit(output, options.overwrite);
}

fs::path Model::DefaultOutputPath(const fs::path& input, std::optional<ElemType> requested) {
  const std::string ext = input.extension().string();
  if (ext == ".npz" || ext == ".npy" || ext == ".pth" || ext == ".pt" || ext == ".bin") {
    const std::string suffix = requested ? "-" + TypeSuffix(*requested) : "";
    return input.parent_path() / (input.stem().string() + suffix + ".safetensors");
  }
  const ElemType to = requested.value_or(ElemType::kBf16);
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
