// Loads every tensor of a model into memory with the C++ API (amn/model.h):
// what an inference engine does instead of reading a dequantized file.
//
//   load_model_cpp MODEL [bf16|f16|f32] [THREADS]
//
// MODEL is anything `amn remember` reads (a quantized or plain .safetensors
// file or directory, .gguf, .npz, .pth, ...). Each tensor is decoded into
// its own buffer, as remember would write it in its output file, and one
// line per tensor is printed with an FNV-1a hash of its bytes.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "amn/model.h"

namespace {

uint64_t Fnv1a(const std::vector<std::byte>& bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (std::byte b : bytes) h = (h ^ static_cast<uint8_t>(b)) * 0x100000001b3ull;
  return h;
}

std::string Shape(const std::vector<uint64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL [bf16|f16|f32] [THREADS]\n", argv[0]);
    return 2;
  }
  const std::string type = argc > 2 ? argv[2] : "bf16";
  const amn::ElemType to = type == "f32" ? amn::ElemType::kF32
                           : type == "f16" ? amn::ElemType::kF16 : amn::ElemType::kBf16;
  amn::DequantizeOptions options;
  options.threads = argc > 3 ? static_cast<unsigned>(std::atoi(argv[3])) : 1;

  // Headers only, within the default limits for untrusted input.
  auto model = amn::Model::Open(argv[1]);
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
    return 1;
  }
  auto tensors = model->OutputTensors(to);
  if (!tensors.ok()) {
    std::fprintf(stderr, "%s\n", tensors.status().ToString().c_str());
    return 1;
  }
  // The engine's own memory: here one vector per tensor.
  std::map<std::string, std::vector<std::byte>> weights;
  uint64_t total = 0;
  for (const amn::TensorInfo& t : *tensors) {
    std::vector<std::byte>& buffer = weights[t.name];
    buffer.resize(t.bytes);
    const amn::Status status = model->DequantizeTensor(t.name, to, buffer, options);
    if (!status.ok()) {
      std::fprintf(stderr, "%s\n", status.ToString().c_str());
      return 1;
    }
    total += t.bytes;
    std::printf("%s %s %s from %s%s%s fnv1a=%016llx\n", t.name.c_str(), t.dtype.c_str(),
                Shape(t.shape).c_str(), t.source_dtype.c_str(), t.quantized ? ", " : "",
                t.scheme.c_str(), static_cast<unsigned long long>(Fnv1a(buffer)));
  }
  std::printf("loaded %zu tensors, %llu bytes\n", weights.size(), static_cast<unsigned long long>(total));
  return 0;
}
