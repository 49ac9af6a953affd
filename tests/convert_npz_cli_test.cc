// `amn convert -o OUT.npz`: numpy.savez's layout (stored ZIP64 members of
// .npy arrays), read back by numpy and zipfile (tests/npz_output_check.py)
// against remember's safetensors of the same input; quantized inputs
// dequantized in the pass; bf16 refused (numpy has none).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "fixtures/safetensors_builder.h"
#include "tests/cli_files.h"
#include "tests/cli_runner.h"
#include "tests/fixtures.h"
#include "tests/gguf_readback.h"
#include "tests/quant_fixture_files.h"

namespace amn::test {
namespace {

namespace fs = std::filesystem;

// 0: numpy read the NPZ as the reference says; 77: no numpy; else failed.
int NumpyCheck(const fs::path& npz, const fs::path& reference) {
  const fs::path script = fs::path(AMN_PROJECT_ROOT) / "tests" / "npz_output_check.py";
  const int status = std::system(("/usr/bin/python3 " + Quote(script) + " " + Quote(npz) + " " +
                                  Quote(reference))
                                     .c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(ConvertNpz, NumpyLoadsRemembersArrays) {
  TempDir dir;
  const fs::path model = dir.path() / "m";
  WriteQwen2Model(model);  // BF16 and F32 tensors, 1-D and 2-D
  for (const std::string scheme : {"f32", "f16"}) {
    SCOPED_TRACE(scheme);
    const fs::path out = dir.path() / ("m-" + scheme + ".npz");
    const fs::path ref = dir.path() / ("ref-" + scheme + ".safetensors");
    const CliResult r =
        RunAmn("convert -j 3 --json " + Quote(model) + " -o " + Quote(out) + " --scheme " + scheme);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("\"format\": \"npz\""), std::string::npos) << r.out;
    ASSERT_EQ(RunAmn("remember -q " + Quote(model / "model.safetensors") + " -o " + Quote(ref) +
                     " --to " + scheme).exit_code, 0);
    const int check = NumpyCheck(out, ref);
    if (check == 77) GTEST_SKIP() << "/usr/bin/python3 has no numpy";
    EXPECT_EQ(check, 0);
    // -j does not change a byte; amn reads its own NPZ back.
    const fs::path one = dir.path() / ("j1-" + scheme + ".npz");
    ASSERT_EQ(RunAmn("convert -q -j 1 " + Quote(model) + " -o " + Quote(one) + " --scheme " + scheme)
                  .exit_code, 0);
    EXPECT_TRUE(FileBytes(one) == FileBytes(out));
    const fs::path back = dir.path() / ("back-" + scheme + ".safetensors");
    ASSERT_EQ(RunAmn("remember -q " + Quote(out) + " -o " + Quote(back)).exit_code, 0);
    EXPECT_EQ(NumpyCheck(out, back), 0);
  }
  // numpy has no bfloat16: refused, nothing written.
  const std::vector<std::string> before = dir.Entries();
  const CliResult bf16 = RunAmn("convert -q " + Quote(model) + " -o " + Quote(dir.path() / "x.npz") +
                                " --scheme bf16");
  EXPECT_EQ(bf16.exit_code, 2) << bf16.err;
  EXPECT_NE(bf16.err.find("numpy has no bfloat16"), std::string::npos) << bf16.err;
  const CliResult q = RunAmn("convert -q " + Quote(model) + " --to npz -o " +
                             Quote(dir.path() / "x.bin") + " --scheme q4_k");
  EXPECT_EQ(q.exit_code, 2) << q.err;
  EXPECT_EQ(dir.Entries(), before);
}

// FP8 (every layout) to NPZ: the weights dequantized in the pass.
TEST(ConvertNpz, QuantizedInputDequantizedInThePass) {
  const auto files = FixtureFiles("fp8_reference", ".bin");
  if (files.empty()) GTEST_SKIP() << "fp8_reference not found under " << FixturesDir();
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.filename().string());
    const auto f = ReadFp8Fixture(path);
    ASSERT_TRUE(f);
    TempDir dir;
    const std::string w = "model.layers.0.mlp.gate_proj.weight";
    fixtures::SafetensorsBuilder m;
    m.Add(w, "F8_E4M3", {f->rows, f->cols}, f->weight);
    const std::string dtype = ScaleDtypeName(f->scale_dtype);
    if (f->scheme == 0) {
      m.Add(w + "_scale_inv", dtype, {(f->rows + 127) / 128, (f->cols + 127) / 128}, f->scales);
    } else if (f->scheme == 1) {
      m.Add(w + "_scale", dtype, {1}, f->scales);
    } else {
      m.Add(w + "_scale", dtype, {f->rows, 1}, f->scales);
    }
    ASSERT_TRUE(m.Write(dir.path() / "fp8.safetensors"));
    const fs::path out = dir.path() / "fp8.npz", ref = dir.path() / "ref.safetensors";
    const CliResult r = RunAmn("convert -q " + Quote(dir.path() / "fp8.safetensors") + " -o " + Quote(out));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_EQ(RunAmn("remember -q " + Quote(dir.path() / "fp8.safetensors") + " -o " + Quote(ref) +
                     " --to f32").exit_code, 0);
    const int check = NumpyCheck(out, ref);
    if (check == 77) GTEST_SKIP() << "/usr/bin/python3 has no numpy";
    EXPECT_EQ(check, 0);
  }
}

}  // namespace
}  // namespace amn::test
