// amn::Model::Convert: the remember plan of the model, written as
// safetensors (remember's own path) or laid out as one GGUF file
// (formats/gguf_output_plan.h) with the metadata assembled here.
#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <cctype>
#include <fstream>
#include <new>
#include <sstream>

#include "amn/ggml_dequant.h"
#include "amn/model.h"
#include "formats/byte_source.h"
#include "formats/gguf_hf_map.h"
#include "formats/gguf_kv_text.h"
#include "formats/gguf_output_plan.h"
#include "formats/gguf_quant_choice.h"
#include "formats/gguf_quant_mixture.h"
#include "formats/gguf_writer.h"
#include "formats/imatrix.h"
#include "formats/model_config.h"
#include "formats/model_dir_output.h"
#include "formats/model_impl.h"

namespace amn {
namespace fs = std::filesystem;

namespace {

// llama.cpp's LlamaFileType (gguf-py constants.py) of a float output.
uint32_t FileTypeOf(formats::Dtype to) {
  switch (to) {
    case formats::Dtype::kF16: return 1;    // MOSTLY_F16
    case formats::Dtype::kBf16: return 32;  // MOSTLY_BF16
    default: return 0;                      // ALL_F32
  }
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// What a scheme names: a float type, or (GGUF only) a ggml block type
// that amn::QuantizeGgml encodes, with F32 for what stays unquantized.
struct Scheme {
  formats::Dtype to = formats::Dtype::kF16;
  std::optional<formats::GgufQuantPreset> quantize;
};

Result<Scheme> SchemeType(const std::string& scheme, ConvertFormat format) {
  const std::string s = Lower(scheme);
  if (s.empty()) {
    return Scheme{format == ConvertFormat::kGguf ? formats::Dtype::kF16 : formats::Dtype::kBf16,
                  {}};
  }
  if (s == "f32") return Scheme{formats::Dtype::kF32, {}};
  if (s == "f16") return Scheme{formats::Dtype::kF16, {}};
  if (s == "bf16") return Scheme{formats::Dtype::kBf16, {}};
  if (const std::optional<formats::GgufQuantPreset> q = formats::FindGgufQuantPreset(s)) {
    if (format != ConvertFormat::kGguf) {
      return Status(StatusCode::kInvalidArgument,
                    "--scheme " + s +
                        " is a GGUF type; write a .gguf (or --to gguf), or use "
                        "amn forget for quantized safetensors");
    }
    return Scheme{formats::Dtype::kF32, q};
  }
  for (uint32_t id = 0; id < 64; ++id) {
    const GgmlTypeInfo* type = FindGgmlType(id);
    if (type != nullptr && type->quantized && Lower(std::string(type->name)) == s) {
      return Status(
          StatusCode::kUnsupported,
          "--scheme " + s + ": amn has no encoder for " + std::string(type->name) +
              " yet (it needs an importance matrix); see docs/cli.md for the types it has");
    }
  }
  return Status(StatusCode::kInvalidArgument,
                "--scheme '" + formats::MessageSafe(scheme) +
                    "' is not f32, f16, bf16, a ggml type amn quantizes (q8_0, q4_k, ...) or a "
                    "llama-quantize mixture (q4_k_m, ...)");
}

Result<std::string> ReadSmallFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status(StatusCode::kIo, formats::MessageSafe(path.string(), formats::kMessagePathBytes) +
                                       ": cannot read");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// llama.cpp's importance matrix: the GGUF form (by its magic) or the legacy
// .dat, as per-column values by weight name (a repeated name: the last).
Result<std::map<std::string, std::vector<float>>> LoadImatrix(const fs::path& path) {
  const std::string label = formats::MessageSafe(path.string(), formats::kMessagePathBytes);
  AMN_ASSIGN_OR_RETURN(auto source, formats::FileSource::Open(path));
  std::map<std::string, std::vector<float>> values;
  std::array<std::byte, 4> magic{};
  if (source->size() >= magic.size()) AMN_RETURN_IF_ERROR(source->ReadAt(0, magic));
  if (std::memcmp(magic.data(), "GGUF", 4) == 0) {
    auto gguf = ReadImatrixGguf(*source, ParseLimits{});
    if (!gguf.ok()) {
      return Status(gguf.status().code(), label + ": " + gguf.status().message());
    }
    for (const ImatrixGgufEntry& e : gguf->entries) values[e.name] = ImportanceValues(e);
    return values;
  }
  std::vector<uint8_t> bytes(source->size());
  AMN_RETURN_IF_ERROR(source->ReadAt(
      0, std::span(reinterpret_cast<std::byte*>(bytes.data()), bytes.size())));
  AMN_ASSIGN_OR_RETURN(const ImatrixDat dat, ParseImatrixDat(bytes, label));
  for (const ImatrixEntry& e : dat.entries) values[e.name] = ImportanceValues(e);
  return values;
}

std::string ModelName(const fs::path& input) {
  fs::path clean = input;
  if (!clean.has_filename()) clean = clean.parent_path();
  std::error_code error;
  return fs::is_directory(clean, error) ? clean.filename().string() : clean.stem().string();
}

// A GGUF input's key/values, each copied as the bytes it has in the file.
Status CopySourceMetadata(const Model::Impl& impl, formats::GgufMetadata& metadata) {
  if (impl.gguf_header.version < 2) {
    return Status(StatusCode::kUnsupported,
                  formats::MessageSafe(impl.gguf_path.string(), formats::kMessagePathBytes) +
                      ": GGUF v1 input to GGUF output is not supported (its strings have 32-bit "
                      "lengths); remember it to safetensors first");
  }
  AMN_ASSIGN_OR_RETURN(auto source, formats::FileSource::Open(impl.gguf_path));
  for (const formats::GgufKeyValue& kv : impl.gguf_header.metadata) {
    std::string encoded(kv.value_end - kv.value_begin, '\0');
    AMN_RETURN_IF_ERROR(source->ReadAt(
        kv.value_begin, std::span(reinterpret_cast<std::byte*>(encoded.data()), encoded.size())));
    metadata.SetEncoded(kv.key, std::move(encoded));
  }
  return Status::Ok();
}

std::string ConfigJson(const Model::Impl& impl) {
  if (impl.torch_dir) return impl.torch.config_json;
  if (impl.gguf || impl.arrays) return "";
  return impl.files.config_json;
}

Status AddUserMetadata(const ConvertOptions& options, formats::GgufMetadata& metadata) {
  if (!options.gguf_metadata.empty()) {
    AMN_ASSIGN_OR_RETURN(const std::string text, ReadSmallFile(options.gguf_metadata));
    auto pairs = formats::ParseGgufMetadataJson(text);
    if (!pairs.ok()) {
      return Status(pairs.status().code(),
                    formats::MessageSafe(options.gguf_metadata.string(), formats::kMessagePathBytes) +
                        ": " + pairs.status().message());
    }
    for (auto& [key, value] : *pairs) AMN_RETURN_IF_ERROR(metadata.Set(key, value));
  }
  for (const std::string& text : options.gguf_kv) {
    AMN_ASSIGN_OR_RETURN(auto pair, formats::ParseGgufKvArgument(text));
    AMN_RETURN_IF_ERROR(metadata.Set(pair.first, pair.second));
  }
  return Status::Ok();
}

// Written tensors by type. A GGUF tensor permuted row by row is several
// consecutive jobs of one name: counted once.
void CountTypes(const formats::RememberPlan& plan, ConvertReport& report) {
  for (const formats::OutputShard& shard : plan.shards) {
    const std::string* previous = nullptr;
    for (const formats::OutputTensor& t : shard.tensors) {
      const std::string name(t.decode == formats::Decode::kEncode ? FindGgmlType(t.ggml_type)->name
                                                                  : formats::DtypeName(t.dtype));
      auto it = std::find_if(report.types.begin(), report.types.end(),
                             [&](const DtypeStat& d) { return d.dtype == name; });
      if (it == report.types.end()) it = report.types.insert(report.types.end(), {name, 0, 0});
      const bool same = previous != nullptr && *previous == t.name;
      if (!same) {
        ++it->tensors;
        ++report.total_tensors;
      }
      it->bytes += t.bytes;
      previous = &t.name;
    }
  }
  std::stable_sort(report.types.begin(), report.types.end(),
                   [](const DtypeStat& a, const DtypeStat& b) { return a.bytes > b.bytes; });
  report.total_bytes = plan.total_bytes;
}

}  // namespace

ConvertFormat Model::ConvertFormatFor(const fs::path& output) {
  const std::string ext = Lower(output.extension().string());
  if (ext == ".gguf") return ConvertFormat::kGguf;
  if (ext == ".npz") return ConvertFormat::kNpz;
  return ConvertFormat::kSafetensors;
}

Result<ConvertReport> Model::Convert(const fs::path& output, const ConvertOptions& options) const {
  try {
    return ConvertUnguarded(output, options);
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kLimitExceeded,
                  formats::MessageSafe(output.string(), formats::kMessagePathBytes) +
                      ": out of memory while writing the output");
  }
}

Result<ConvertReport> Model::ConvertUnguarded(const fs::path& output,
                                              const ConvertOptions& options) const {
  if (options.format == ConvertFormat::kNpz) {
    return Status(StatusCode::kUnsupported, "NPZ output is not implemented yet (safetensors and GGUF are)");
  }
  AMN_ASSIGN_OR_RETURN(const Scheme scheme, SchemeType(options.scheme, options.format));
  const formats::Dtype to = scheme.to;
  const bool gguf = options.format == ConvertFormat::kGguf;
  if (!options.imatrix.empty() && !scheme.quantize) {
    return Status(StatusCode::kInvalidArgument,
                  "--imatrix is for a ggml --scheme (q4_k, q4_0, ...); " +
                      std::string(formats::DtypeName(to)) + " is not quantized");
  }
  if (scheme.quantize && options.imatrix.empty() &&
      formats::GgufNeedsImatrix(scheme.quantize->base, "")) {
    const GgmlTypeInfo* info = FindGgmlType(static_cast<uint32_t>(scheme.quantize->base));
    return Status(StatusCode::kInvalidArgument,
                  "--scheme " + Lower(options.scheme) + " needs --imatrix FILE: " +
                      std::string(info->name) +
                      " is quantized only with an importance matrix (llama-quantize refuses "
                      "it without one too)");
  }
  if (!options.tensor_types.empty() && !scheme.quantize) {
    return Status(StatusCode::kInvalidArgument,
                  "--tensor-type is for a quantized GGUF --scheme (q4_k_m, q8_0, ...)");
  }
  if (!gguf && (!options.gguf_kv.empty() || !options.gguf_metadata.empty())) {
    return Status(StatusCode::kInvalidArgument, "--gguf-kv and --gguf-metadata are for GGUF output");
  }
  ConvertReport report;
  report.format = options.format;
  report.scheme = scheme.quantize ? scheme.quantize->name : Lower(std::string(formats::DtypeName(to)));
  const ElemType elem = to == formats::Dtype::kF32   ? ElemType::kF32
                        : to == formats::Dtype::kF16 ? ElemType::kF16
                                                     : ElemType::kBf16;
  AMN_ASSIGN_OR_RETURN(detail::PlannedOutput out,
                       detail::PlanOutput(*impl_, elem, /*keep_passthrough=*/false, options.cancel));
  const formats::EngineOptions engine =
      detail::EngineFor(options.threads, options.cancel, options.use_mmap);
  if (!gguf) {
    // Remember's path: the same plan, config.json and index as remember --to.
    AMN_RETURN_IF_ERROR(detail::FinishExtras(out, [&](const std::string& text) {
      return formats::RewriteConfigJson(text, formats::OutputFloatDtype(out.plan));
    }));
    AMN_RETURN_IF_ERROR(
        detail::WritePlanned(*impl_, path(), out, output, options.overwrite, engine, options.progress));
    CountTypes(out.plan, report);
    return report;
  }

  formats::GgufMetadata metadata;
  formats::GgufOutputOptions layout;
  std::vector<formats::GgufFallback> fallbacks;
  layout.to = to;
  if (scheme.quantize) {
    layout.quantize = formats::GgufQuantRecipe{*scheme.quantize, {}};
    for (const std::string& text : options.tensor_types) {
      AMN_ASSIGN_OR_RETURN(auto o, formats::ParseGgufTensorType(text));
      layout.quantize->overrides.push_back(std::move(o));
    }
  }
  layout.fallbacks = &fallbacks;
  std::map<std::string, std::vector<float>> imatrix;
  if (!options.imatrix.empty()) {
    AMN_ASSIGN_OR_RETURN(imatrix, LoadImatrix(options.imatrix));
    layout.imatrix = &imatrix;
    layout.imatrix_file = options.imatrix.string();
    layout.imatrix_used = &report.imatrix_tensors;
  }
  if (impl_->gguf) {
    AMN_RETURN_IF_ERROR(CopySourceMetadata(*impl_, metadata));
    for (const formats::GgufTensorInfo& t : impl_->gguf_header.tensors) layout.order.push_back(t.name);
  } else {
    AMN_RETURN_IF_ERROR(formats::AddHfConfigMetadata(ConfigJson(*impl_), metadata));
    formats::GgufValue name;
    name.type = formats::GgufValueType::kString;
    name.s = ModelName(path());
    AMN_RETURN_IF_ERROR(metadata.Set("general.name", name));
    if (formats::GgufRenamesTensors(formats::GgufArchitecture(ConfigJson(*impl_)))) {
      layout.rename = [](const std::string& n) { return formats::GgufTensorName(n); };
      // Renamed for llama.cpp, llama's q/k rows must be in its rotary order too.
      layout.permute_heads = [config = ConfigJson(*impl_)](const formats::OutputTensor& t) {
        return formats::GgufPermuteHeads(config, t.name);
      };
      report.renamed_tensors = true;
    }
  }
  // Float weights carry no quantization version (quantized ones ggml's
  // GGML_QNT_VERSION, 2); the file type is the output's.
  metadata.Remove("general.quantization_version");
  formats::GgufValue file_type;
  file_type.type = formats::GgufValueType::kU32;
  file_type.u = scheme.quantize ? scheme.quantize->file_type : FileTypeOf(to);
  if (scheme.quantize) {
    formats::GgufValue version;
    version.type = formats::GgufValueType::kU32;
    version.u = 2;
    AMN_RETURN_IF_ERROR(metadata.Set("general.quantization_version", version));
  }
  AMN_RETURN_IF_ERROR(metadata.Set("general.file_type", file_type));
  AMN_RETURN_IF_ERROR(AddUserMetadata(options, metadata));
  if (const std::string* arch = metadata.Encoded("general.architecture");
      arch != nullptr && arch->size() > 12) {
    report.architecture = arch->substr(12);  // after the u32 type and u64 length
  }
  report.metadata_keys = metadata.entries().size();
  AMN_ASSIGN_OR_RETURN(out.plan,
                       formats::PlanGgufOutput(std::move(out.plan), std::move(metadata), layout,
                                                options.cancel));
  // One file whatever the input was; nothing beside it.
  out.directory = false;
  out.extras = {};
  AMN_RETURN_IF_ERROR(
      detail::WritePlanned(*impl_, path(), out, output, options.overwrite, engine, options.progress));
  CountTypes(out.plan, report);
  // The errors were summed per chunk in file order by the engine.
  for (const formats::OutputTensor& t : out.plan.shards.front().tensors) {
    if (t.decode != formats::Decode::kEncode) continue;
    report.quantized.push_back(
        {t.name, std::string(FindGgmlType(t.ggml_type)->name), t.encode->error});
    Accumulate(report.quant_total, t.encode->error);
  }
  for (formats::GgufFallback& f : fallbacks) {
    report.fallbacks.push_back({std::move(f.name), std::move(f.type), std::move(f.reason)});
  }
  return report;
}

}  // namespace amn
