// torch.save zips built byte by byte for the PyTorch tests (pytorch_zip_test,
// array_formats_cli_test): pickle opcodes from fixtures/pickle_writer.h and
// the ZIP from fixtures/zip_writer.h, so these files do not depend on the
// reader they test, nor on torch being installed.
#ifndef AMN_TESTS_TORCH_ZIPS_H_
#define AMN_TESTS_TORCH_ZIPS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fixtures/pickle_writer.h"
#include "fixtures/zip_writer.h"

namespace amn::test {

using fixtures::PickleWriter;
using namespace std::string_literals;

struct TorchTensor {
  std::string storage_class;  // "FloatStorage", "UntypedStorage", "Float8_e5m2Storage", ...
  std::string key;            // archive/data/<key>
  uint32_t numel = 0;         // elements of the storage class (bytes for UntypedStorage)
  uint32_t offset = 0;
  std::vector<uint32_t> size, stride;
  std::string v3_dtype;       // "float8_e4m3fn" ...: _rebuild_tensor_v3; empty: _rebuild_tensor_v2
};

// Pushes the tensor as torch.save writes it (torch/_tensor.py
// _reduce_ex_internal): _rebuild_tensor_v2(storage, offset, size, stride,
// requires_grad, OrderedDict()) or, for the dtypes of
// torch.storage._new_dtypes(), _rebuild_tensor_v3(..., dtype).
inline void PushTorchTensor(PickleWriter& p, const TorchTensor& t) {
  p.Global("torch._utils", t.v3_dtype.empty() ? "_rebuild_tensor_v2" : "_rebuild_tensor_v3").Mark();
  p.Mark().String("storage").Global("torch", t.storage_class).String(t.key).String("cpu").Int(t.numel);
  p.Tuple().BinPersId();
  p.Int(t.offset);
  p.Mark();
  for (uint32_t d : t.size) p.Int(d);
  p.Tuple().Mark();
  for (uint32_t s : t.stride) p.Int(s);
  p.Tuple().False();
  p.Global("collections", "OrderedDict").EmptyTuple().Reduce();
  if (!t.v3_dtype.empty()) p.Global("torch", t.v3_dtype);
  p.Tuple().Reduce();
}

// {name: tensor, ...} as data.pkl (protocol 2).
inline std::string TorchStateDict(const std::vector<std::pair<std::string, TorchTensor>>& tensors) {
  PickleWriter p;
  p.Proto(2).EmptyDict();
  for (const auto& [name, tensor] : tensors) {
    p.String(name);
    PushTorchTensor(p, tensor);
    p.SetItem();
  }
  p.Stop();
  return p.bytes();
}

// A torch.save zip: archive/data.pkl, archive/byteorder, archive/data/<key>
// for each storage, archive/version.
inline std::string TorchZip(const std::string& pickle,
                            const std::vector<std::pair<std::string, std::string>>& storages) {
  std::vector<fixtures::ZipMember> members;
  members.push_back(fixtures::ZipMember::Stored("archive/data.pkl", pickle));
  members.push_back(fixtures::ZipMember::Stored("archive/byteorder", "little"));
  for (const auto& [key, bytes] : storages) {
    members.push_back(fixtures::ZipMember::Stored("archive/data/" + key, bytes));
  }
  members.push_back(fixtures::ZipMember::Stored("archive/version", "3\n"));
  return fixtures::WriteZip(members);
}

// FP8 as torch >= 2.1 saves it: "e4m3" through _rebuild_tensor_v3 on an
// UntypedStorage of 6 bytes (the view: 5 elements from element 1), "e5m2"
// on the typed Float8_e5m2Storage that _rebuild_tensor_v2 names. Bytes:
// E4M3 1.0, 2.0, -1.0, 448, 2^-9; E5M2 1.0, -2.0, 57344, 2^-16.
inline const std::string kE4m3Storage = "\x00\x38\x40\xb8\x7e\x01"s;
inline const std::string kE5m2Storage = "\x3c\xc0\x7b\x01"s;
inline std::string Fp8TorchZip() {
  const std::string pickle = TorchStateDict(
      {{"e4m3", {"UntypedStorage", "0", 6, 1, {5}, {1}, "float8_e4m3fn"}},
       {"e5m2", {"Float8_e5m2Storage", "1", 4, 0, {2, 2}, {2, 1}, ""}}});
  return TorchZip(pickle, {{"0", kE4m3Storage}, {"1", kE5m2Storage}});
}

// Six F32 values 0..5, little-endian.
inline std::string SixFloats() {
  std::string bytes;
  for (uint32_t bits : {0x00000000u, 0x3f800000u, 0x40000000u, 0x40400000u, 0x40800000u, 0x40a00000u}) {
    fixtures::PutLe(bytes, bits, 4);
  }
  return bytes;
}

// Billion laughs through the memo: m0 = a [2, 3] F32 tensor, m[i] =
// [m[i-1], m[i-1]] for `levels` levels, and {"w": m[levels]}: 2^levels
// tensors in a pickle of about 20 bytes per level.
inline std::string MemoReplayTorchZip(uint32_t levels) {
  PickleWriter p;
  p.Proto(2).EmptyDict().String("w");
  PushTorchTensor(p, {"FloatStorage", "0", 6, 0, {2, 3}, {3, 1}, ""});
  p.LongBinPut(0).Pop();
  for (uint32_t i = 1; i <= levels; ++i) {
    p.EmptyList().LongBinGet(i - 1).Append().LongBinGet(i - 1).Append().LongBinPut(i).Pop();
  }
  p.LongBinGet(levels).SetItem().Stop();
  return TorchZip(p.bytes(), {{"0", SixFloats()}});
}

}  // namespace amn::test

#endif  // AMN_TESTS_TORCH_ZIPS_H_
