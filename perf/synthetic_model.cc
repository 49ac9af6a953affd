// Writes a Llama-shaped BF16 safetensors model of about the requested size:
// the same shapes, tensor names and config.json as perf/plain_model.py (the
// numpy version), with nothing but the C++ standard library, so it runs on a
// bare machine (perf/bundle.sh, perf/thread_scaling.sh).
//
//   synthetic_model OUT_DIR [--gib 4] [--hidden 2048] [--seed 0] [-j N]
//                   [--shard-bytes 5000000000]
//
// Weights are Gaussian-like with sigma 0.02: the sum of four uniform 16-bit
// fields of one xoshiro256** draw (Irwin-Hall, bounded at +-3.46 sigma),
// scaled in float and rounded to nearest-even BF16; norms are 1.0. Integer
// arithmetic and one float multiply per value, no libm, so the bytes are the
// same on every machine and for every -j (each 1 MiB piece of a tensor has its
// own seed). Above 5 GB (transformers' default max_shard_size "5GB") the
// model is split like save_pretrained does it: model-0000i-of-0000n.safetensors
// in state-dict order plus model.safetensors.index.json.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Tensor {
  std::string name;
  std::vector<uint64_t> shape;
  uint64_t bytes = 0;
  size_t shard = 0;
  uint64_t offset = 0;  // in its shard's data section
};

struct Shard {
  std::string file;
  std::string header;  // length prefix not included, padded to 8
  uint64_t data_bytes = 0;
};

uint64_t SplitMix(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

struct Xoshiro {
  uint64_t s[4];
  explicit Xoshiro(uint64_t seed) {
    for (uint64_t& v : s) v = SplitMix(seed);
  }
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t Next() {
    const uint64_t result = Rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = Rotl(s[3], 45);
    return result;
  }
};

uint16_t Bf16RoundNearestEven(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return static_cast<uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

// Fills `count` BF16 values of N(0, 0.02)-like noise for piece `piece` of
// tensor `index`.
void FillGaussianLike(uint64_t seed, uint64_t index, uint64_t piece, uint16_t* out, size_t count) {
  uint64_t mix = seed * 0x100000001B3ull ^ (index << 32) ^ piece;
  Xoshiro rng(SplitMix(mix));
  // Four uniform 16-bit fields: mean 4 * 65535 / 2, sigma 65536 / sqrt(3).
  const float scale = 0.02f / 37837.227f;
  for (size_t i = 0; i < count; ++i) {
    const uint64_t r = rng.Next();
    const int32_t sum = static_cast<int32_t>((r & 0xFFFF) + ((r >> 16) & 0xFFFF) +
                                             ((r >> 32) & 0xFFFF) + (r >> 48)) - 131070;
    out[i] = Bf16RoundNearestEven(static_cast<float>(sum) * scale);
  }
}

std::string ShapeJson(const std::vector<uint64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

bool WriteAll(int fd, const void* data, size_t n, uint64_t offset) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = pwrite(fd, p, n, static_cast<off_t>(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
    offset += static_cast<uint64_t>(w);
  }
  return true;
}

bool WriteText(const std::string& path, const std::string& text) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  return std::fclose(f) == 0 && ok;
}

int Usage() {
  std::fprintf(stderr,
               "usage: synthetic_model OUT_DIR [--gib 4] [--hidden 2048] [--seed 0] [-j N]\n"
               "                       [--shard-bytes 5000000000]\n"
               "Writes a Llama-shaped BF16 safetensors model (sharded above 5 GB) and its "
               "config.json, like perf/plain_model.py.\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out;
  double gib = 4.0;
  uint64_t hidden = 2048, seed = 0;
  uint64_t max_shard = 5000000000ull;  // transformers' default max_shard_size "5GB"
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--gib" && has_value) gib = std::atof(argv[++i]);
    else if (a == "--hidden" && has_value) hidden = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--seed" && has_value) seed = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--shard-bytes" && has_value) max_shard = std::strtoull(argv[++i], nullptr, 10);
    else if ((a == "-j" || a == "--threads") && has_value) threads = std::atoi(argv[++i]);
    else if (!a.empty() && a[0] != '-' && out.empty()) out = a;
    else return Usage();
  }
  if (out.empty() || !(gib > 0) || hidden < 64 || hidden % 64 != 0 || threads < 1 || max_shard == 0)
    return Usage();

  // The shapes of perf/plain_model.py: intermediate 11/4 of hidden, vocab 32000.
  const uint64_t h = hidden, inter = hidden * 11 / 4, vocab = 32000;
  const uint64_t per_layer = 2 * (4 * h * h + 3 * h * inter + 2 * h);
  const uint64_t fixed = 2 * (2 * vocab * h + h);
  const double want = gib * 1073741824.0;
  const uint64_t layers = want > static_cast<double>(fixed + per_layer)
                              ? static_cast<uint64_t>((want - static_cast<double>(fixed)) / per_layer)
                              : 1;

  // State-dict order, as save_pretrained shards it.
  std::vector<Tensor> tensors;
  auto add = [&](std::string name, std::vector<uint64_t> shape) {
    uint64_t n = 2;
    for (uint64_t d : shape) n *= d;
    tensors.push_back({std::move(name), std::move(shape), n});
  };
  add("model.embed_tokens.weight", {vocab, h});
  for (uint64_t i = 0; i < layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    for (const char* n : {"q_proj", "k_proj", "v_proj", "o_proj"})
      add(p + "self_attn." + n + ".weight", {h, h});
    add(p + "mlp.gate_proj.weight", {inter, h});
    add(p + "mlp.up_proj.weight", {inter, h});
    add(p + "mlp.down_proj.weight", {h, inter});
    add(p + "input_layernorm.weight", {h});
    add(p + "post_attention_layernorm.weight", {h});
  }
  add("model.norm.weight", {h});
  add("lm_head.weight", {vocab, h});

  // transformers: a new shard when the next tensor would pass max_shard_size.
  std::vector<Shard> shards(1);
  uint64_t total = 0;
  for (Tensor& t : tensors) {
    if (shards.back().data_bytes > 0 && shards.back().data_bytes + t.bytes > max_shard)
      shards.emplace_back();
    t.shard = shards.size() - 1;
    t.offset = shards.back().data_bytes;
    shards.back().data_bytes += t.bytes;
    total += t.bytes;
  }
  const size_t n_shards = shards.size();
  for (size_t s = 0; s < n_shards; ++s) {
    char name[64];
    std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", s + 1, n_shards);
    shards[s].file = n_shards == 1 ? "model.safetensors" : name;
    shards[s].header = "{\"__metadata__\":{\"format\":\"pt\"}";
  }
  for (const Tensor& t : tensors) {
    shards[t.shard].header += ",\"" + t.name + "\":{\"dtype\":\"BF16\",\"shape\":" +
                              ShapeJson(t.shape) + ",\"data_offsets\":[" + std::to_string(t.offset) +
                              "," + std::to_string(t.offset + t.bytes) + "]}";
  }
  for (Shard& s : shards) {
    s.header += "}";
    s.header.append((8 - s.header.size() % 8) % 8, ' ');
  }

  // mkdir -p
  for (size_t slash = out.find('/', 1); slash != std::string::npos; slash = out.find('/', slash + 1))
    mkdir(out.substr(0, slash).c_str(), 0777);
  if (mkdir(out.c_str(), 0777) != 0 && errno != EEXIST) {
    std::fprintf(stderr, "synthetic_model: cannot create %s: %s\n", out.c_str(), std::strerror(errno));
    return 1;
  }
  std::vector<int> fds(n_shards, -1);
  for (size_t s = 0; s < n_shards; ++s) {
    const std::string path = out + "/" + shards[s].file;
    fds[s] = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const uint64_t len = shards[s].header.size();
    unsigned char prefix[8];
    for (int b = 0; b < 8; ++b) prefix[b] = static_cast<unsigned char>(len >> (8 * b));
    if (fds[s] < 0 || !WriteAll(fds[s], prefix, 8, 0) ||
        !WriteAll(fds[s], shards[s].header.data(), len, 8) ||
        ftruncate(fds[s], static_cast<off_t>(8 + len + shards[s].data_bytes)) != 0) {
      std::fprintf(stderr, "synthetic_model: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
      return 1;
    }
  }

  // Work items: 1 MiB pieces of tensors, claimed by the threads in order.
  constexpr uint64_t kPiece = 1 << 20;
  struct Item { size_t tensor; uint64_t piece; };
  std::vector<Item> items;
  for (size_t t = 0; t < tensors.size(); ++t)
    for (uint64_t p = 0; p * kPiece < tensors[t].bytes; ++p) items.push_back({t, p});
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  auto work = [&] {
    std::vector<uint16_t> buf(kPiece / 2);
    for (size_t i; (i = next.fetch_add(1)) < items.size() && !failed;) {
      const Tensor& t = tensors[items[i].tensor];
      const uint64_t begin = items[i].piece * kPiece;
      const size_t bytes = static_cast<size_t>(std::min(kPiece, t.bytes - begin));
      if (t.shape.size() == 1) std::fill(buf.begin(), buf.end(), uint16_t{0x3F80});  // norms: 1.0
      else FillGaussianLike(seed, items[i].tensor, items[i].piece, buf.data(), bytes / 2);
      const uint64_t at = 8 + shards[t.shard].header.size() + t.offset + begin;
      if (!WriteAll(fds[t.shard], buf.data(), bytes, at)) failed = true;
    }
  };
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (int fd : fds) failed = close(fd) != 0 || failed;
  if (failed) {
    std::fprintf(stderr, "synthetic_model: writing %s failed: %s\n", out.c_str(), std::strerror(errno));
    return 1;
  }

  if (n_shards > 1) {
    std::string index = "{\n  \"metadata\": {\n    \"total_size\": " + std::to_string(total) +
                        "\n  },\n  \"weight_map\": {";
    for (size_t i = 0; i < tensors.size(); ++i)
      index += std::string(i ? "," : "") + "\n    \"" + tensors[i].name + "\": \"" +
               shards[tensors[i].shard].file + "\"";
    index += "\n  }\n}\n";
    if (!WriteText(out + "/model.safetensors.index.json", index)) {
      std::fprintf(stderr, "synthetic_model: cannot write the index in %s\n", out.c_str());
      return 1;
    }
  }
  // plain_model.py's config.json.
  const std::string config =
      "{\n  \"architectures\": [\"LlamaForCausalLM\"],\n  \"model_type\": \"llama\",\n"
      "  \"hidden_size\": " + std::to_string(h) + ",\n  \"intermediate_size\": " +
      std::to_string(inter) + ",\n  \"num_hidden_layers\": " + std::to_string(layers) +
      ",\n  \"num_attention_heads\": " + std::to_string(h / 64) +
      ",\n  \"num_key_value_heads\": " + std::to_string(h / 64) + ",\n  \"vocab_size\": " +
      std::to_string(vocab) +
      ",\n  \"max_position_embeddings\": 4096,\n  \"rms_norm_eps\": 1e-05,\n"
      "  \"rope_theta\": 10000.0,\n  \"torch_dtype\": \"bfloat16\",\n"
      "  \"tie_word_embeddings\": false\n}\n";
  if (!WriteText(out + "/config.json", config)) {
    std::fprintf(stderr, "synthetic_model: cannot write %s/config.json\n", out.c_str());
    return 1;
  }
  std::printf("%s: %llu layers, %.2f GiB of BF16 in %zu file%s\n", out.c_str(),
              static_cast<unsigned long long>(layers), static_cast<double>(total) / 1073741824.0,
              n_shards, n_shards == 1 ? "" : "s");
  return 0;
}
