// The library's model API (DESIGN.md §2): parse once, then inspect or act
// without re-reading headers. Today: safetensors files and sharded
// directories (quantized schemes dequantized), GGUF files and ollama: names
// (ggml types dequantized where this build has their kernels), written as
// BF16/F16/F32 safetensors; NumPy .npy/.npz and PyTorch .pth/.pt files,
// written as safetensors with their dtypes kept (or floats converted);
// any of them converted to one GGUF file (Convert). Single tensors are
// decoded into the caller's memory without any file (DequantizeTensor).
#ifndef AMN_MODEL_H_
#define AMN_MODEL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "amn/elem_type.h"
#include "amn/export.h"
#include "amn/limits.h"
#include "amn/quantize.h"
#include "amn/result.h"

namespace amn {

struct DtypeStat {
  std::string dtype;  // as stored: "F8_E4M3", "Q4_K", ...
  size_t tensors = 0;
  uint64_t bytes = 0;
};

struct InspectInfo {
  std::string format;        // "safetensors", "gguf", "npy", "npz" or "pytorch"
  std::string scheme;        // "Fine-grained FP8, 128x128 blocks (E4M3)", "Unquantized"
  bool quantized = false;
  std::string unsupported;   // why remember would refuse (empty: it can run)
  size_t shards = 1;
  bool sharded = false;      // a directory
  size_t quantized_tensors = 0;
  size_t companion_tensors = 0;  // scales, zero points, g_idx, absmax, quant_state, ...
  size_t passthrough_tensors = 0;
  // Of the passthrough tensors: the floats (F64/F32/F16/BF16) remember
  // converts to `to` (none with keep_passthrough).
  size_t converted_tensors = 0;
  size_t dropped_tensors = 0;  // activation / KV-cache scales
  std::vector<std::string> companion_dtypes;  // in order of first appearance
  uint64_t current_bytes = 0;     // tensor data as stored
  uint64_t remembered_bytes = 0;  // tensor data after remember --to <type>
  // The output type of quantized and (unless keep_passthrough) other float
  // tensors; empty when remember keeps every dtype (NPY/NPZ/PyTorch without
  // --to, or with keep_passthrough).
  std::optional<ElemType> to;
  bool keep_passthrough = false;
  std::vector<DtypeStat> dtypes;  // stored dtypes, most bytes first
  // What the model is, where the files say: GGUF general.architecture
  // ("llama"); safetensors config.json architectures[0]
  // ("Qwen3ForCausalLM") and model_type ("qwen3"). Empty when unknown.
  std::string architecture;
  std::string model_type;
  // GGUF only.
  uint32_t gguf_version = 0;
  uint64_t alignment = 0;
  size_t metadata_keys = 0;
};

// One metadata entry: GGUF key/values (arrays summarized as
// {"type", "count", "first": [...]}) or safetensors __metadata__ strings.
// Keys, names and strings that are not UTF-8 are given with each stray byte
// written \xNN, the rule remember uses for its keys (docs/formats.md).
struct MetadataEntry {
  std::string key;
  std::string type;   // "string", "u32", "array", ...
  std::string json;   // the value as JSON text
};

struct TensorSummary {
  std::string name;   // as remember writes it (\xNN for bytes that are not UTF-8)
  std::string dtype;  // safetensors spelling, "F8_E4M3"
  std::vector<uint64_t> shape;
  uint64_t bytes = 0;
  std::string role;   // "quantized", "companion", "passthrough", "dropped"
  std::string scheme; // for quantized weights: "FP8 E4M3, 128x128 blocks"
  std::string shard;  // file name
};

// One tensor as remember writes it: what Model::DequantizeTensor decodes
// and an engine loads. Quantized companions (scales, zero points, g_idx,
// absmax, quant_state, SCB, ...) are no entries of their own: they are read
// as part of their weight, whose entry names the scheme. Tensors remember
// drops (activation / KV-cache scales) are not listed either.
struct TensorInfo {
  std::string name;          // as remember writes it: GPTQ "x.qweight" is "x.weight"
  std::string source_dtype;  // as stored: "F8_E4M3", "I32" (GPTQ qweight), "Q4_K", "F16"
  std::string scheme;        // quantized weights: "GPTQ 4-bit, group 128, ..."; else ""
  bool quantized = false;
  std::string dtype;         // what is written: "BF16", "F32", or a kept "I64"
  std::vector<uint64_t> shape;  // row-major, as written (GGUF dimensions reversed)
  uint64_t bytes = 0;        // of the written tensor: the buffer DequantizeTensor needs
  // Whether the requested output type applies: quantized weights and float
  // tensors (F64/F32/F16/BF16) become it; integer, bool and FP8 tensors that
  // are no quantized weight keep their dtype and bytes, as remember does.
  bool converts = false;
  std::string shard;         // the input file holding it
};

// Bytes of the decoded tensor, in order: `offset` is where `bytes` start in
// it. A failed status stops the decode and is returned by it.
using TensorSink = std::function<Status(uint64_t offset, std::span<const std::byte> bytes)>;

struct DequantizeOptions {
  // 1: decode on the calling thread, creating none; n > 1: n threads (the
  // calling one included for DequantizeTensor); 0: one per core.
  unsigned threads = 1;
  // As RememberOptions::use_mmap (packed schemes and strided arrays).
  bool use_mmap = true;
  // DequantizeTensorChunks: output bytes per sink call (at most; a chunk
  // holds whole rows or blocks where the scheme needs them, so one may be
  // larger when a single row or block is).
  size_t chunk_bytes = size_t{4} << 20;
  const std::atomic<bool>* cancel = nullptr;  // checked between chunks (kCancelled)
};

struct RememberProgress {
  uint64_t bytes_done = 0;
  uint64_t bytes_total = 0;
  size_t tensors_done = 0;
  size_t tensors_total = 0;
};

struct RememberOptions {
  // kF32, kF16 or kBf16: every float tensor (F64/F32/F16/BF16, quantized or
  // not) is written as `to`; integer, bool and FP8 tensors that are no
  // quantized weight keep their dtype. Unset: BF16 for quantized formats
  // (safetensors, GGUF); dtypes kept for NPY/NPZ/PyTorch.
  std::optional<ElemType> to;
  // Only quantized weights become `to`; every other tensor keeps its dtype
  // and bytes (NPY/NPZ/PyTorch: nothing is converted).
  bool keep_passthrough = false;
  // 0: every core. 1: the whole run stays on the calling thread (no thread
  // is created); the output bytes are the same for any value.
  unsigned threads = 0;
  // Replace an existing output: a file is replaced; an existing directory
  // keeps every file amn does not write (only its shards, index, config and
  // copied side files are replaced, and stale shards of the same naming
  // removed).
  bool overwrite = false;
  // Packed schemes (GPTQ, AWQ, bitsandbytes, ...) and strided arrays read a
  // memory map of the input, guarded so that a file truncated under it gives
  // an error, not SIGBUS (the guard installs a SIGBUS handler while Remember
  // runs, chaining to the previous one). false: never map; read with pread,
  // holding one tensor's input bytes at a time in memory (for untrusted or
  // changing files, or hosts that own SIGBUS).
  bool use_mmap = true;
  std::function<void(const RememberProgress&)> progress;  // from the writing thread
  // Checked between chunks: when it becomes true, Remember stops, removes its
  // temporary output and returns kCancelled (e.g. set from a SIGINT handler).
  const std::atomic<bool>* cancel = nullptr;
};

// What `forget` writes (docs/cli.md, docs/schemes/forget.md).
enum class ForgetScheme : uint8_t {
  kFp8,             // FP8, one F32 scale per tensor (compressed-tensors "tensor")
  kFp8PerChannel,   // FP8, one F32 scale per output row (compressed-tensors "channel")
  kFp8FineGrained,  // FP8, F32 weight_scale_inv per 128x128 block (transformers "fp8")
  kNf4, kNf4Dq, kFp4, kFp4Dq,  // bitsandbytes 4-bit, plain or double quant
  kInt8,            // bitsandbytes LLM.int8(), row-wise SCB
};

struct ForgetOptions {
  // Unset only with `like`, which takes the scheme of that model.
  std::optional<ForgetScheme> scheme;
  Fp8Format fp8_format = Fp8Format::kE4m3;
  uint64_t block_size = 64;  // bitsandbytes 4-bit: even, >= 2
  // ECMAScript regexes searched in tensor names: `only` replaces the default
  // choice (2-D weights of linear layers), `skip` removes from it.
  std::string only, skip;
  // A quantized safetensors model: re-encode each of the input's tensors
  // that it quantizes with its scheme and its side tensors (absmax, nested
  // state, SCB, FP8 scales), copied as they are.
  std::filesystem::path like;
  unsigned threads = 0;  // as RememberOptions::threads
  bool overwrite = false;
  bool use_mmap = true;
  std::function<void(const RememberProgress&)> progress;
  const std::atomic<bool>* cancel = nullptr;
};

// What quantization took from one weight (or all of them).
struct ForgetTensorReport {
  std::string name;    // the weight's name in the output
  std::string scheme;  // "bitsandbytes NF4, block 64"
  QuantError error;
};

struct ForgetReport {
  std::string scheme;  // ForgetScheme name, "fp8-fine-grained"
  std::vector<ForgetTensorReport> tensors;  // in output order
  QuantError total;  // over every quantized element, in the same order
  uint64_t total_bytes = 0;  // written: headers and data of every shard
  size_t total_tensors = 0;
  std::vector<DtypeStat> types;  // written tensors by dtype, most bytes first
};

// What `convert` writes (docs/cli.md "amn convert").
enum class ConvertFormat : uint8_t { kSafetensors, kGguf, kNpz };

struct ConvertOptions {
  ConvertFormat format = ConvertFormat::kSafetensors;
  // "f32", "f16" or "bf16" (empty: bf16 for safetensors, f16 for GGUF), or
  // for GGUF output a ggml type that has an encoder ("q8_0", "q4_k", ...:
  // amn::CanQuantizeGgml) or a llama-quantize mixture ("q4_k_m",
  // "mostly_q2_k": formats/gguf_quant_mixture.h); the other ggml types are
  // refused (kUnsupported).
  std::string scheme;
  // GGUF only, applied in this order over the source's metadata: the keys
  // of a JSON object file, then "key=value" texts (typed as docs/cli.md
  // says; "key=type:value" forces a type).
  std::filesystem::path gguf_metadata;
  std::vector<std::string> gguf_kv;
  // Quantized GGUF only: llama.cpp's importance matrix (legacy .dat or GGUF
  // imatrix), looked up by output tensor name as llama-quantize does
  // (formats/gguf_output_plan.h GgufOutputOptions::imatrix). Empty: none.
  std::filesystem::path imatrix;
  // Quantized GGUF only: llama-quantize's --tensor-type REGEX=TYPE
  // overrides, the first whose regex matches a tensor's GGUF name wins.
  std::vector<std::string> tensor_types;
  unsigned threads = 0;  // as RememberOptions::threads
  bool overwrite = false;
  bool use_mmap = true;
  std::function<void(const RememberProgress&)> progress;
  const std::atomic<bool>* cancel = nullptr;
};

// A tensor a quantized GGUF output wrote in another type than the scheme's.
struct ConvertFallback {
  std::string name;    // as written ("blk.0.ffn_down.weight")
  std::string type;    // what it got ("Q5_0", "F16")
  std::string reason;  // "rows of 96 are not a multiple of Q4_K's block of 256"
};

struct ConvertReport {
  ConvertFormat format = ConvertFormat::kSafetensors;
  std::string scheme;                 // "f16", "q4_k"
  std::vector<DtypeStat> types;       // written tensor types, most bytes first
  size_t total_tensors = 0;
  uint64_t total_bytes = 0;           // headers and data of every file written
  size_t metadata_keys = 0;           // GGUF: key/values written
  bool renamed_tensors = false;       // GGUF: Hugging Face names mapped to llama.cpp's
  std::string architecture;           // GGUF: general.architecture written ("" when none)
  // Quantized GGUF: each quantized tensor (scheme = its ggml type) and what
  // quantization took, in file order; the total over all of them; and the
  // tensors given a fallback type.
  std::vector<ForgetTensorReport> quantized;
  QuantError quant_total;
  std::vector<ConvertFallback> fallbacks;
  // --imatrix: the quantized tensors that got importance values from it.
  size_t imatrix_tensors = 0;
};

// How Model::Open finds its input.
struct OpenOptions {
  // For ollama: and hf: names, recompute the SHA-256 of each blob named by
  // its digest (the Ollama model blob; the Hugging Face LFS blobs) and refuse
  // a mismatch (kInvalid naming the blob). kInvalidArgument for other paths.
  bool verify = false;
};

class AMN_API Model {
 public:
  // A .safetensors file, a directory of shards, a Hugging Face PyTorch
  // directory (pytorch_model.bin or pytorch_model-*-of-*.bin shards with
  // pytorch_model.bin.index.json), a GGUF file,
  // "ollama:[host/][namespace/]model[:tag]", "hf:ORG/NAME[@REV]" (the local
  // Hugging Face cache), a .npy/.npz file or a PyTorch .pth/.pt zip
  // checkpoint (by magic; a known extension must agree with it, see
  // formats/file_format.h). Reads headers only, every declared size and count
  // bounded by `limits` (tightened only: fields above the built-in caps are
  // lowered to them).
  static Result<Model> Open(const std::filesystem::path& path, const ParseLimits& limits = {});
  static Result<Model> Open(const std::filesystem::path& path, const ParseLimits& limits,
                            const OpenOptions& options);
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;
  ~Model();

  const std::filesystem::path& path() const;
  // What Open skipped, one line each (e.g. a side file whose symlink leaves
  // the model directory: docs/limits.md); shown by the CLI as warnings.
  std::vector<std::string> Warnings() const;
  // What remember with these options would write (sizes, converted tensors).
  InspectInfo Inspect(std::optional<ElemType> to = std::nullopt,
                      bool keep_passthrough = false) const;
  // Every stored tensor, companions included, with its role (inspect
  // --tensors).
  std::vector<TensorSummary> Tensors() const;

  // The tensors remember writes with `to` (unset: remember's default, BF16
  // for quantized formats, dtypes kept for NPY/NPZ/PyTorch files), shard by
  // shard, by name within a shard: the same order for every `to`. Fails as
  // remember would before writing (kUnsupported: a scheme or ggml type this
  // build cannot decode). The plan behind it is made once per `to` and kept
  // (then each call is O(tensors)).
  Result<std::vector<TensorInfo>> OutputTensors(std::optional<ElemType> to = std::nullopt) const;

  // Writes tensor `name` (as OutputTensors lists it) into `out` exactly as
  // remember with this `to` writes it in its output file: the same bytes,
  // whatever the thread count. `out` must hold at least the tensor's bytes
  // (only those are written). Memory besides `out`: one chunk's input per
  // thread. kInvalidArgument for an unknown name (companions included), a
  // `to` other than F32/F16/BF16 or a short buffer; kLimitExceeded for a
  // tensor over limits.max_total_bytes; the input's errors (truncated or
  // changed files) as remember gives them. On failure `out` may hold part
  // of the tensor. Thread-safe: any number of calls may run at once on one
  // Model, on the same tensor or different ones.
  Status DequantizeTensor(std::string_view name, std::optional<ElemType> to,
                          std::span<std::byte> out, const DequantizeOptions& options = {}) const;
  // The same bytes handed to `sink` in order, chunk by chunk, from the
  // calling thread, for tensors too big for one buffer: at most 2 x threads
  // chunks are held (about options.chunk_bytes each).
  Status DequantizeTensorChunks(std::string_view name, std::optional<ElemType> to,
                                const TensorSink& sink, const DequantizeOptions& options = {}) const;
  std::vector<MetadataEntry> Metadata() const;

  // Writes the dequantized model to `output` (a file for a file input, a
  // directory for a directory input). The output is complete and fsynced,
  // or absent: an unnamed file (O_TMPFILE) or hidden partial
  // ".NAME.amn-partial-PID" beside the target, placed by one rename only on
  // success; partials of dead earlier runs in that directory are removed.
  // Fails before writing when the file system lacks the space, when the
  // output is, holds or sits inside the input, and when an input changes
  // while it is read. Never modifies the input. Output bytes are identical
  // for any thread count.
  // Every file is laid out as the safetensors reference writer does (widest
  // dtype first, then by name) with __metadata__ "format": "pt"; a directory
  // gets config.json whose torch_dtype names the dtype of its float tensors
  // (the dequantized tensors' type when keep_passthrough leaves several), the
  // index, and the input's other files (docs/safetensors.md).
  Status Remember(const std::filesystem::path& output, const RememberOptions& options) const;

  // model-FP8.safetensors -> model-bf16.safetensors; Qwen3-8B-FP8/ ->
  // Qwen3-8B-bf16/; model-Q4_K_M.gguf -> model-Q4_K_M-bf16.safetensors;
  // ollama:llama3.2:1b -> llama3.2-1b-bf16.safetensors (current directory);
  // hf:Qwen/Qwen3-8B-FP8@main -> Qwen3-8B-bf16/ (current directory);
  // params.npz / model.pth / pytorch_model.bin -> the same stem
  // .safetensors, with -bf16 etc. when `to` is set. Unset `to` means BF16
  // except for those array formats.
  static std::filesystem::path DefaultOutputPath(const std::filesystem::path& input,
                                                 std::optional<ElemType> to);

  // Writes the model quantized (`forget`, the other way of Remember): the
  // chosen weights encoded as options.scheme in the layout the ecosystem's
  // loaders read (docs/cli.md), every other tensor copied as it is; a
  // directory gets config.json with the loader's quantization_config, the
  // index and the input's other files. Same engine, atomic durable output
  // and checks as Remember; the side values (scales, absmax, SCB) come from
  // a first pass over the input. A quantized input (FP8, GPTQ, AWQ,
  // bitsandbytes, GGUF blocks, ...) is dequantized to F32 in both passes, so
  // its chosen weights get the bytes forget gives the model `remember --to
  // f32` writes; its other tensors keep their dtype. kInvalidArgument for a
  // scheme a tensor cannot take, NaN/Inf in a chosen tensor (naming it);
  // nothing is written then.
  Result<ForgetReport> Forget(const std::filesystem::path& output,
                              const ForgetOptions& options) const;

  // Writes the model in another container (`convert`): safetensors goes
  // through Remember's path (scheme = its `to`), or with a forget scheme
  // (nf4, fp8, int8, ...) through Forget's run with its defaults, the same
  // bytes; GGUF is one v3 file
  // (docs/gguf.md "Writing GGUF") whose float weights are `scheme`, with
  // the metadata of a GGUF input kept (general.file_type replaced,
  // general.quantization_version dropped) or, from other inputs, the
  // architecture and hyperparameters of config.json, and tensors named for
  // llama.cpp where docs/gguf.md says. Quantized inputs are dequantized in
  // the same streaming pass (to F32 for a ggml --scheme, then encoded: the
  // bytes of converting the model `remember --to f32` writes); llama's q/k
  // rows permuted as llama.cpp's converter does, quantized or not. Same
  // engine, atomic durable output, -j determinism and checks as Remember.
  // kUnsupported (not yet) for NPZ output, GGUF v1 inputs to GGUF and the
  // ggml types without an encoder.
  Result<ConvertReport> Convert(const std::filesystem::path& output,
                                const ConvertOptions& options) const;

  // The container an output path names: ".gguf" -> GGUF, ".npz" -> NPZ,
  // anything else (".safetensors", a directory) -> safetensors.
  static ConvertFormat ConvertFormatFor(const std::filesystem::path& output);

  // model.safetensors -> model-nf4.safetensors; Llama-3.2-1B/ -> Llama-3.2-1B-nf4/.
  static std::filesystem::path DefaultForgetOutputPath(const std::filesystem::path& input,
                                                       const std::string& scheme_name);

  // The parsed state (opaque; formats/model_impl.h), named here so the
  // library's own files that implement Model can take it.
  struct Impl;

 private:
  explicit Model(std::unique_ptr<Impl> impl);
  // Open and Remember without their out-of-memory guard.
  static Result<Model> OpenUnguarded(const std::filesystem::path& path, const ParseLimits& limits,
                                     const OpenOptions& options);
  Status RememberUnguarded(const std::filesystem::path& output, const RememberOptions& options) const;
  Result<ForgetReport> ForgetUnguarded(const std::filesystem::path& output,
                                       const ForgetOptions& options) const;
  Result<ConvertReport> ConvertUnguarded(const std::filesystem::path& output,
                                         const ConvertOptions& options) const;
  Result<ConvertReport> ConvertToNpz(const std::filesystem::path& output,
                                     const ConvertOptions& options) const;
  Result<ConvertReport> ConvertByForget(const std::filesystem::path& output,
                                        const ConvertOptions& options, ForgetScheme scheme) const;
  std::unique_ptr<Impl> impl_;
};

}  // namespace amn

#endif  // AMN_MODEL_H_
