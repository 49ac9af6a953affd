// anamnesis._amn: the Python binding over libamn's C++ API (amn/model.h),
// wrapped by anamnesis/__init__.py (docs/python.md). pybind11 rather than
// ctypes over the C ABI: the verbs (remember, forget, convert) and their
// options and reports exist only in the C++ API. Every amn::Status that is
// not OK becomes anamnesis.Error carrying Status::ToString() and its code;
// the GIL is released around every call that reads or writes model data.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "amn/model.h"

namespace py = pybind11;
namespace fs = std::filesystem;

namespace {

// Thrown for a failed amn::Status; translated to anamnesis.Error.
struct AmnFailure {
  amn::Status status;
};

PyObject* g_error_type = nullptr;  // anamnesis._amn.Error (owned by the module)

[[noreturn]] void Raise(amn::Status status) { throw AmnFailure{std::move(status)}; }

void Check(amn::Status status) {
  if (!status.ok()) Raise(std::move(status));
}

template <typename T>
T Take(amn::Result<T> result) {
  if (!result.ok()) Raise(result.status());
  return std::move(*result);
}

// "bf16"/"f16"/"f32" and the CLI's aliases (any case); None keeps each
// format's default, as the CLI without --to.
std::optional<amn::ElemType> ParseTo(const std::optional<std::string>& name) {
  if (!name) return std::nullopt;
  static const std::map<std::string, amn::ElemType> kTypes = {
      {"bf16", amn::ElemType::kBf16}, {"bfloat16", amn::ElemType::kBf16},
      {"f16", amn::ElemType::kF16},   {"float16", amn::ElemType::kF16},
      {"fp16", amn::ElemType::kF16},  {"f32", amn::ElemType::kF32},
      {"float32", amn::ElemType::kF32}, {"fp32", amn::ElemType::kF32}};
  std::string lower;
  for (char c : *name) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  const auto it = kTypes.find(lower);
  if (it == kTypes.end()) {
    throw py::value_error("to='" + *name + "': expected 'bf16', 'f16' or 'f32' (or None)");
  }
  return it->second;
}

// The numpy dtype of a written tensor (safetensors spelling). BF16 is raw
// uint16 here; __init__.py views it as ml_dtypes.bfloat16 when asked.
py::dtype NumpyDtype(const std::string& dtype) {
  static const std::map<std::string, const char*> kDtypes = {
      {"BF16", "<u2"}, {"F16", "<f2"},    {"F32", "<f4"},    {"F64", "<f8"},
      {"I8", "i1"},    {"U8", "u1"},      {"I16", "<i2"},    {"U16", "<u2"},
      {"I32", "<i4"},  {"U32", "<u4"},    {"I64", "<i8"},    {"U64", "<u8"},
      {"BOOL", "?"},   {"F8_E4M3", "u1"}, {"F8_E5M2", "u1"}};
  const auto it = kDtypes.find(dtype);
  if (it == kDtypes.end()) {
    Raise(amn::Status(amn::StatusCode::kUnsupported, "no numpy dtype for " + dtype));
  }
  return py::dtype(it->second);
}

py::dict TensorInfoDict(const amn::TensorInfo& t) {
  py::dict d;
  d["name"] = t.name;
  d["dtype"] = t.dtype;
  d["shape"] = py::tuple(py::cast(t.shape));
  d["bytes"] = t.bytes;
  d["source_dtype"] = t.source_dtype;
  d["scheme"] = t.scheme;
  d["quantized"] = t.quantized;
  d["converts"] = t.converts;
  d["shard"] = t.shard;
  return d;
}

py::dict InspectDict(const amn::InspectInfo& i) {
  py::dict d;
  d["format"] = i.format;
  d["scheme"] = i.scheme;
  d["quantized"] = i.quantized;
  d["unsupported"] = i.unsupported;
  d["shards"] = i.shards;
  d["sharded"] = i.sharded;
  d["quantized_tensors"] = i.quantized_tensors;
  d["companion_tensors"] = i.companion_tensors;
  d["passthrough_tensors"] = i.passthrough_tensors;
  d["converted_tensors"] = i.converted_tensors;
  d["dropped_tensors"] = i.dropped_tensors;
  d["companion_dtypes"] = i.companion_dtypes;
  d["current_bytes"] = i.current_bytes;
  d["remembered_bytes"] = i.remembered_bytes;
  d["to"] = i.to ? py::object(py::str(std::string(amn::ElemTypeName(*i.to)))) : py::object(py::none());
  d["keep_passthrough"] = i.keep_passthrough;
  py::list dtypes;
  for (const amn::DtypeStat& s : i.dtypes) {
    dtypes.append(py::dict(py::arg("dtype") = s.dtype, py::arg("tensors") = s.tensors,
                           py::arg("bytes") = s.bytes));
  }
  d["dtypes"] = dtypes;
  d["architecture"] = i.architecture;
  d["model_type"] = i.model_type;
  if (i.format == "gguf") {
    d["gguf_version"] = i.gguf_version;
    d["alignment"] = i.alignment;
    d["metadata_keys"] = i.metadata_keys;
  }
  return d;
}

py::dict QuantErrorDict(const amn::QuantError& e) {
  py::dict d;
  d["elements"] = e.elements;
  d["mean_abs"] = e.elements ? e.sum_abs / static_cast<double>(e.elements) : 0.0;
  d["max_abs"] = e.max_abs;
  d["sum_sq_err"] = e.sum_sq_err;
  d["sum_sq_ref"] = e.sum_sq_ref;
  return d;
}

py::list TensorReports(const std::vector<amn::ForgetTensorReport>& reports) {
  py::list list;
  for (const amn::ForgetTensorReport& r : reports) {
    list.append(py::dict(py::arg("name") = r.name, py::arg("scheme") = r.scheme,
                         py::arg("error") = QuantErrorDict(r.error)));
  }
  return list;
}

amn::ForgetScheme ParseForgetScheme(const std::string& name) {
  static const std::map<std::string, amn::ForgetScheme> kSchemes = {
      {"fp8", amn::ForgetScheme::kFp8},
      {"fp8-per-channel", amn::ForgetScheme::kFp8PerChannel},
      {"fp8-fine-grained", amn::ForgetScheme::kFp8FineGrained},
      {"nf4", amn::ForgetScheme::kNf4},   {"nf4-dq", amn::ForgetScheme::kNf4Dq},
      {"fp4", amn::ForgetScheme::kFp4},   {"fp4-dq", amn::ForgetScheme::kFp4Dq},
      {"int8", amn::ForgetScheme::kInt8}};
  const auto it = kSchemes.find(name);
  if (it == kSchemes.end()) {
    throw py::value_error("scheme='" + name +
                          "': expected fp8, fp8-per-channel, fp8-fine-grained, nf4, nf4-dq, fp4, "
                          "fp4-dq or int8");
  }
  return it->second;
}

const char* ConvertFormatName(amn::ConvertFormat format) {
  switch (format) {
    case amn::ConvertFormat::kSafetensors: return "safetensors";
    case amn::ConvertFormat::kGguf: return "gguf";
    case amn::ConvertFormat::kNpz: return "npz";
  }
  return "unknown";
}

amn::Model Open(const fs::path& path, bool verify) {
  amn::OpenOptions options;
  options.verify = verify;
  py::gil_scoped_release release;
  return Take(amn::Model::Open(path, amn::ParseLimits{}, options));
}

// One output tensor into a new numpy array of its dtype and shape, decoded
// straight into the array's memory (no second copy).
py::array Dequantize(const amn::Model& model, const std::string& name,
                     const std::optional<std::string>& to, unsigned threads, bool use_mmap) {
  const std::optional<amn::ElemType> type = ParseTo(to);
  std::vector<amn::TensorInfo> list;
  {
    py::gil_scoped_release release;
    list = Take(model.OutputTensors(type));
  }
  const amn::TensorInfo* info = nullptr;
  for (const amn::TensorInfo& t : list) {
    if (t.name == name) info = &t;
  }
  if (info == nullptr) {
    // The library's own message (it names companions as such).
    py::gil_scoped_release release;
    Check(model.DequantizeTensor(name, type, {}, {}));
    Raise(amn::Status(amn::StatusCode::kInvalidArgument, "no tensor '" + name + "'"));
  }
  const py::dtype dtype = NumpyDtype(info->dtype);
  std::vector<py::ssize_t> shape(info->shape.begin(), info->shape.end());
  py::array array(dtype, shape);
  if (static_cast<uint64_t>(array.nbytes()) != info->bytes) {
    Raise(amn::Status(amn::StatusCode::kInvalid,
                      "tensor '" + name + "': " + std::to_string(info->bytes) +
                          " bytes do not fill its shape as " + info->dtype));
  }
  std::span<std::byte> out(static_cast<std::byte*>(array.mutable_data()), info->bytes);
  amn::DequantizeOptions options;
  options.threads = threads;
  options.use_mmap = use_mmap;
  {
    py::gil_scoped_release release;
    Check(model.DequantizeTensor(name, type, out, options));
  }
  return array;
}

void Remember(const amn::Model& model, const fs::path& output, const std::optional<std::string>& to,
              bool keep_passthrough, unsigned threads, bool overwrite, bool use_mmap) {
  amn::RememberOptions options;
  options.to = ParseTo(to);
  options.keep_passthrough = keep_passthrough;
  options.threads = threads;
  options.overwrite = overwrite;
  options.use_mmap = use_mmap;
  py::gil_scoped_release release;
  Check(model.Remember(output, options));
}

py::dict Forget(const amn::Model& model, const fs::path& output,
                const std::optional<std::string>& scheme, const std::string& fp8_format,
                uint64_t block_size, const std::string& only, const std::string& skip,
                const std::optional<fs::path>& like, unsigned threads, bool overwrite,
                bool use_mmap) {
  amn::ForgetOptions options;
  if (scheme) options.scheme = ParseForgetScheme(*scheme);
  if (fp8_format == "e4m3") {
    options.fp8_format = amn::Fp8Format::kE4m3;
  } else if (fp8_format == "e5m2") {
    options.fp8_format = amn::Fp8Format::kE5m2;
  } else {
    throw py::value_error("fp8_format='" + fp8_format + "': expected 'e4m3' or 'e5m2'");
  }
  options.block_size = block_size;
  options.only = only;
  options.skip = skip;
  if (like) options.like = *like;
  if (!scheme && !like) throw py::value_error("forget needs scheme= or like=");
  options.threads = threads;
  options.overwrite = overwrite;
  options.use_mmap = use_mmap;
  amn::ForgetReport report;
  {
    py::gil_scoped_release release;
    report = Take(model.Forget(output, options));
  }
  py::dict d;
  d["scheme"] = report.scheme;
  d["tensors"] = TensorReports(report.tensors);
  d["total"] = QuantErrorDict(report.total);
  d["total_bytes"] = report.total_bytes;
  d["total_tensors"] = report.total_tensors;
  return d;
}

py::dict Convert(const amn::Model& model, const fs::path& output, const std::string& scheme,
                 const std::optional<std::string>& format, const std::vector<std::string>& gguf_kv,
                 const std::optional<fs::path>& gguf_metadata,
                 const std::optional<fs::path>& imatrix,
                 const std::vector<std::string>& tensor_types, unsigned threads, bool overwrite,
                 bool use_mmap) {
  amn::ConvertOptions options;
  if (!format) {
    options.format = amn::Model::ConvertFormatFor(output);
  } else if (*format == "safetensors") {
    options.format = amn::ConvertFormat::kSafetensors;
  } else if (*format == "gguf") {
    options.format = amn::ConvertFormat::kGguf;
  } else if (*format == "npz") {
    options.format = amn::ConvertFormat::kNpz;
  } else {
    throw py::value_error("format='" + *format + "': expected 'safetensors', 'gguf' or 'npz'");
  }
  options.scheme = scheme;
  options.gguf_kv = gguf_kv;
  if (gguf_metadata) options.gguf_metadata = *gguf_metadata;
  if (imatrix) options.imatrix = *imatrix;
  options.tensor_types = tensor_types;
  options.threads = threads;
  options.overwrite = overwrite;
  options.use_mmap = use_mmap;
  amn::ConvertReport report;
  {
    py::gil_scoped_release release;
    report = Take(model.Convert(output, options));
  }
  py::dict d;
  d["format"] = ConvertFormatName(report.format);
  d["scheme"] = report.scheme;
  py::list types;
  for (const amn::DtypeStat& s : report.types) {
    types.append(py::dict(py::arg("dtype") = s.dtype, py::arg("tensors") = s.tensors,
                          py::arg("bytes") = s.bytes));
  }
  d["types"] = types;
  d["total_tensors"] = report.total_tensors;
  d["total_bytes"] = report.total_bytes;
  d["metadata_keys"] = report.metadata_keys;
  d["renamed_tensors"] = report.renamed_tensors;
  d["architecture"] = report.architecture;
  d["quantized"] = TensorReports(report.quantized);
  d["quant_total"] = QuantErrorDict(report.quant_total);
  py::list fallbacks;
  for (const amn::ConvertFallback& f : report.fallbacks) {
    fallbacks.append(py::dict(py::arg("name") = f.name, py::arg("type") = f.type,
                              py::arg("reason") = f.reason));
  }
  d["fallbacks"] = fallbacks;
  d["imatrix_tensors"] = report.imatrix_tensors;
  return d;
}

}  // namespace

PYBIND11_MODULE(_amn, m) {
  m.doc() = "libamn's model API (use the anamnesis package, docs/python.md)";

  static py::exception<AmnFailure> error(m, "Error", PyExc_RuntimeError);
  g_error_type = error.ptr();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const AmnFailure& failure) {
      // Error(message) with .code ("invalid_argument", ...) and .tensor.
      py::object instance = py::reinterpret_borrow<py::object>(g_error_type)(
          failure.status.ToString());
      instance.attr("code") = std::string(amn::StatusCodeName(failure.status.code()));
      instance.attr("amn_message") = failure.status.message();
      instance.attr("tensor") = failure.status.tensor();
      PyErr_SetObject(g_error_type, instance.ptr());
    }
  });

  py::class_<amn::Model>(m, "Model")
      .def_static("open", &Open, py::arg("path"), py::arg("verify") = false)
      .def_property_readonly("path", [](const amn::Model& model) { return model.path(); })
      .def("warnings", &amn::Model::Warnings)
      .def(
          "inspect",
          [](const amn::Model& model, const std::optional<std::string>& to, bool keep_passthrough) {
            const std::optional<amn::ElemType> type = ParseTo(to);
            amn::InspectInfo info;
            {
              py::gil_scoped_release release;
              info = model.Inspect(type, keep_passthrough);
            }
            return InspectDict(info);
          },
          py::arg("to") = py::none(), py::arg("keep_passthrough") = false)
      .def(
          "tensors",
          [](const amn::Model& model, const std::optional<std::string>& to) {
            const std::optional<amn::ElemType> type = ParseTo(to);
            std::vector<amn::TensorInfo> list;
            {
              py::gil_scoped_release release;
              list = Take(model.OutputTensors(type));
            }
            py::list out;
            for (const amn::TensorInfo& t : list) out.append(TensorInfoDict(t));
            return out;
          },
          py::arg("to") = py::none())
      .def("stored_tensors",
           [](const amn::Model& model) {
             py::list out;
             for (const amn::TensorSummary& t : model.Tensors()) {
               py::dict d;
               d["name"] = t.name;
               d["dtype"] = t.dtype;
               d["shape"] = py::tuple(py::cast(t.shape));
               d["bytes"] = t.bytes;
               d["role"] = t.role;
               d["scheme"] = t.scheme;
               d["shard"] = t.shard;
               out.append(d);
             }
             return out;
           })
      .def("metadata",
           [](const amn::Model& model) {
             py::list out;
             for (const amn::MetadataEntry& e : model.Metadata()) {
               out.append(py::dict(py::arg("key") = e.key, py::arg("type") = e.type,
                                   py::arg("json") = e.json));
             }
             return out;
           })
      .def("dequantize", &Dequantize, py::arg("name"), py::arg("to") = py::none(),
           py::arg("threads") = 1, py::arg("use_mmap") = true)
      .def("remember", &Remember, py::arg("output"), py::arg("to") = py::none(),
           py::arg("keep_passthrough") = false, py::arg("threads") = 0,
           py::arg("overwrite") = false, py::arg("use_mmap") = true)
      .def("forget", &Forget, py::arg("output"), py::arg("scheme") = py::none(),
           py::arg("fp8_format") = "e4m3", py::arg("block_size") = 64, py::arg("only") = "",
           py::arg("skip") = "", py::arg("like") = py::none(), py::arg("threads") = 0,
           py::arg("overwrite") = false, py::arg("use_mmap") = true)
      .def("convert", &Convert, py::arg("output"), py::arg("scheme") = "",
           py::arg("format") = py::none(), py::arg("gguf_kv") = std::vector<std::string>{},
           py::arg("gguf_metadata") = py::none(), py::arg("imatrix") = py::none(),
           py::arg("tensor_types") = std::vector<std::string>{}, py::arg("threads") = 0,
           py::arg("overwrite") = false, py::arg("use_mmap") = true);

  m.def("default_output_path",
        [](const fs::path& input, const std::optional<std::string>& to) {
          return amn::Model::DefaultOutputPath(input, ParseTo(to));
        },
        py::arg("input"), py::arg("to") = py::none());
  m.def("default_forget_output_path", &amn::Model::DefaultForgetOutputPath, py::arg("input"),
        py::arg("scheme"));
}
