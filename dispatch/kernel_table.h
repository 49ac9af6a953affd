// The one table of kernels (DESIGN.md §4). Each family is named once here;
// everything else is generated from these two lists: the per-target entry
// points and HWY_EXPORT tables (dispatch/family_dispatch.h), the dispatched
// internal decoders (dispatch/family_decoders.h), the registry that `amn
// bench`, the per-target tests, the differential fuzzer and perf/ iterate
// (dispatch/kernel_registry.cc) and through it the C ABI's enumeration.
// Adding a kernel: its Decode<Family> body in kernels/<tu>-inl.h, its
// reference in kernels/ref/, and a line below.
#ifndef AMN_DISPATCH_KERNEL_TABLE_H_
#define AMN_DISPATCH_KERNEL_TABLE_H_

// X(Family, Tu, Ref, "group"):
//   Family   the decoder Decode<Family> (kernels/, per target) and its side
//            inputs kernels::<Family>Args (kernels/kernel_args.h: layout,
//            unit of begin/end, every side input);
//   Tu       the dispatch TU that compiles it (dispatch/<tu>.cc) and whose
//            probe <Tu>Target() says which target its table runs;
//   Ref      its scalar reference ref::<Ref> (kernels/ref/decode_ref.h);
//   "group"  the registry's family name for its kernels.
#define AMN_KERNEL_FAMILIES(X)                                                  \
  X(FloatConvert, FloatConvert, DecodeFloatConvert, "float_convert")            \
  X(Fp8Convert, Fp8Convert, DecodeFp8Convert, "fp8_convert")                    \
  X(Fp8Dequant, Fp8Dequant, DecodeFp8Dequant, "fp8_dequant")                    \
  X(GgmlLegacy, GgmlLegacy, DecodeGgml, "ggml_legacy")                          \
  X(GgmlKQuant, GgmlKQuant, DecodeGgml, "ggml_kquant")                          \
  X(GgmlIQuant, GgmlIQuant, DecodeGgml, "ggml_iquant")                          \
  X(Nvfp4, Fp4, DecodeNvfp4, "fp4")                                             \
  X(Mxfp4St, Fp4, DecodeMxfp4St, "fp4")                                         \
  X(Bnb4, Bnb, DecodeBnb4, "bnb")                                               \
  X(BnbInt8, Bnb, DecodeBnbInt8, "bnb")                                         \
  X(Gptq, Gptq, DecodeGptq, "gptq")                                             \
  X(Awq, Awq, DecodeAwq, "awq")                                                 \
  X(PackedInt, PackedInt, DecodePackedInt, "packed_int")

// The encoders (amn/quantize.h), the same way. X(Family, Tu, Ref, "group"):
//   Family   the encoder Encode<Family> (kernels/, per target) and its side
//            inputs kernels::<Family>Args (kernels/encode_args.h);
//   Tu       the dispatch TU (dispatch/<tu>.cc) and its probe <Tu>Target();
//   Ref      its scalar reference ref::<Ref> (kernels/ref/encode_ref.h);
//   "group"  the registry's family name for its kernels.
// GgmlIq2Iq1Quant is the one family whose per-target part is a piece of the
// encoder (the neighbour scoring): its TU defines internal::Encode<Family>
// itself instead of AMN_ENCODER_ENTRY / AMN_ENCODER_EXPORT.
#define AMN_ENCODER_FAMILIES(X)                                   \
  X(AbsMaxGrid, Encode, EncodeAbsMaxGrid, "fp8_encode")           \
  X(Fp8Quant, Encode, EncodeFp8Quant, "fp8_encode")               \
  X(Bnb4Quant, Encode, EncodeBnb4Quant, "bnb_encode")             \
  X(BnbInt8Quant, Encode, EncodeBnbInt8Quant, "bnb_encode")             \
  X(GgmlLegacyQuant, GgmlLegacyEncode, EncodeGgmlLegacyQuant, "ggml_encode") \
  X(GgmlKQuantQuant, GgmlKQuantEncode, EncodeGgmlKQuantQuant, "ggml_kquant_encode") \
  X(GgmlIq3Quant, GgmlIq3Encode, EncodeGgmlIq3Quant, "ggml_iq3_encode") \
  X(GgmlIq2Iq1Quant, GgmlIq2Iq1Encode, EncodeGgmlIq2Iq1Quant, "ggml_iq2_iq1_encode")

// X(stem, Family, variant): one registry kernel "<in>_to_<stem>" per input
// type (bf16, f16, f32), running Encode<Family> over the synthetic chunks
// that Run<Family>Sample builds for `variant` (dispatch/kernel_samples.h).
// A ggml encoder family's variant is the ggml type id.
#define AMN_ENCODERS(X)              \
  X(e4m3, Fp8Quant, 0)               \
  X(e5m2, Fp8Quant, 1)               \
  X(amax128, AbsMaxGrid, 0)          \
  X(nf4, Bnb4Quant, 0)               \
  X(fp4, Bnb4Quant, 1)               \
  X(int8_rowwise, BnbInt8Quant, 0)   \
  X(q4_0, GgmlLegacyQuant, 2)        \
  X(q4_1, GgmlLegacyQuant, 3)        \
  X(q5_0, GgmlLegacyQuant, 6)        \
  X(q5_1, GgmlLegacyQuant, 7)        \
  X(q8_0, GgmlLegacyQuant, 8)        \
  X(iq4_nl, GgmlLegacyQuant, 20)     \
  X(mxfp4, GgmlLegacyQuant, 39)      \
  X(tq1_0, GgmlLegacyQuant, 34)      \
  X(tq2_0, GgmlLegacyQuant, 35)      \
  X(nvfp4, GgmlLegacyQuant, 40)      \
  X(q1_0, GgmlLegacyQuant, 41)       \
  X(q2_0, GgmlLegacyQuant, 42)       \
  X(q4_k, GgmlKQuantQuant, 12)       \
  X(q6_k, GgmlKQuantQuant, 14)       \
  X(q5_k, GgmlKQuantQuant, 13)       \
  X(q2_k, GgmlKQuantQuant, 10)       \
  X(q3_k, GgmlKQuantQuant, 11)       \
  X(iq4_xs, GgmlKQuantQuant, 23)     \
  X(iq3_xxs, GgmlIq3Quant, 18)       \
  X(iq3_s, GgmlIq3Quant, 21)         \
  X(iq2_xxs, GgmlIq2Iq1Quant, 16)    \
  X(iq2_xs, GgmlIq2Iq1Quant, 17)     \
  X(iq2_s, GgmlIq2Iq1Quant, 22)      \
  X(iq1_s, GgmlIq2Iq1Quant, 19)      \
  X(iq1_m, GgmlIq2Iq1Quant, 29)

// Output type sets of a registry kernel.
#define AMN_TO_BF16 1u
#define AMN_TO_F16 2u
#define AMN_TO_F32 4u
#define AMN_TO_ALL (AMN_TO_BF16 | AMN_TO_F16 | AMN_TO_F32)

// X(stem, Family, variant, outputs): one registry kernel "<stem>_to_<out>"
// per output in `outputs`, running Decode<Family> over the synthetic tensor
// that Run<Family>Sample builds for `variant` (dispatch/kernel_samples.h
// says what each variant is).
#define AMN_KERNELS(X)                                                  \
  X(f32, FloatConvert, AMN_ELEM(kF32), AMN_TO_BF16 | AMN_TO_F16)        \
  X(bf16, FloatConvert, AMN_ELEM(kBf16), AMN_TO_F32 | AMN_TO_F16)       \
  X(f16, FloatConvert, AMN_ELEM(kF16), AMN_TO_F32 | AMN_TO_BF16)        \
  X(e4m3, Fp8Convert, AMN_ELEM(kF8E4m3), AMN_TO_ALL)                    \
  X(e5m2, Fp8Convert, AMN_ELEM(kF8E5m2), AMN_TO_ALL)                    \
  X(e4m3_scaled, Fp8Dequant, AMN_ELEM(kF8E4m3), AMN_TO_ALL)             \
  X(e5m2_scaled, Fp8Dequant, AMN_ELEM(kF8E5m2), AMN_TO_ALL)             \
  X(q4_0, GgmlLegacy, AMN_GGML(kQ4_0), AMN_TO_ALL)                      \
  X(q4_1, GgmlLegacy, AMN_GGML(kQ4_1), AMN_TO_ALL)                      \
  X(q5_0, GgmlLegacy, AMN_GGML(kQ5_0), AMN_TO_ALL)                      \
  X(q5_1, GgmlLegacy, AMN_GGML(kQ5_1), AMN_TO_ALL)                      \
  X(q8_0, GgmlLegacy, AMN_GGML(kQ8_0), AMN_TO_ALL)                      \
  X(q8_1, GgmlLegacy, AMN_GGML(kQ8_1), AMN_TO_ALL)                      \
  X(iq4_nl, GgmlLegacy, AMN_GGML(kIQ4_NL), AMN_TO_ALL)                  \
  X(mxfp4, GgmlLegacy, AMN_GGML(kMXFP4), AMN_TO_ALL)                    \
  X(nvfp4_gguf, GgmlLegacy, AMN_GGML(kNVFP4), AMN_TO_ALL)               \
  X(q1_0, GgmlLegacy, AMN_GGML(kQ1_0), AMN_TO_ALL)                      \
  X(q2_0, GgmlLegacy, AMN_GGML(kQ2_0), AMN_TO_ALL)                      \
  X(q2_k, GgmlKQuant, AMN_GGML(kQ2_K), AMN_TO_ALL)                      \
  X(q3_k, GgmlKQuant, AMN_GGML(kQ3_K), AMN_TO_ALL)                      \
  X(q4_k, GgmlKQuant, AMN_GGML(kQ4_K), AMN_TO_ALL)                      \
  X(q5_k, GgmlKQuant, AMN_GGML(kQ5_K), AMN_TO_ALL)                      \
  X(q6_k, GgmlKQuant, AMN_GGML(kQ6_K), AMN_TO_ALL)                      \
  X(q8_k, GgmlKQuant, AMN_GGML(kQ8_K), AMN_TO_ALL)                      \
  X(iq4_xs, GgmlKQuant, AMN_GGML(kIQ4_XS), AMN_TO_ALL)                  \
  X(tq1_0, GgmlKQuant, AMN_GGML(kTQ1_0), AMN_TO_ALL)                    \
  X(tq2_0, GgmlKQuant, AMN_GGML(kTQ2_0), AMN_TO_ALL)                    \
  X(iq2_xxs, GgmlIQuant, AMN_GGML(kIQ2_XXS), AMN_TO_ALL)                \
  X(iq2_xs, GgmlIQuant, AMN_GGML(kIQ2_XS), AMN_TO_ALL)                  \
  X(iq2_s, GgmlIQuant, AMN_GGML(kIQ2_S), AMN_TO_ALL)                    \
  X(iq3_xxs, GgmlIQuant, AMN_GGML(kIQ3_XXS), AMN_TO_ALL)                \
  X(iq3_s, GgmlIQuant, AMN_GGML(kIQ3_S), AMN_TO_ALL)                    \
  X(iq1_s, GgmlIQuant, AMN_GGML(kIQ1_S), AMN_TO_ALL)                    \
  X(iq1_m, GgmlIQuant, AMN_GGML(kIQ1_M), AMN_TO_ALL)                    \
  X(nvfp4, Nvfp4, 0, AMN_TO_ALL)                                        \
  X(mxfp4_st, Mxfp4St, 0, AMN_TO_ALL)                                   \
  X(nf4, Bnb4, kBnbNf4, AMN_TO_ALL)                                     \
  X(fp4, Bnb4, kBnbFp4, AMN_TO_ALL)                                     \
  X(nf4_dq, Bnb4, kBnbNf4Dq, AMN_TO_ALL)                                \
  X(int8_rowwise, BnbInt8, 0, AMN_TO_ALL)                               \
  X(gptq4, Gptq, GptqVariant(4, false), AMN_TO_ALL)                     \
  X(gptq2, Gptq, GptqVariant(2, false), AMN_TO_ALL)                     \
  X(gptq3, Gptq, GptqVariant(3, false), AMN_TO_ALL)                     \
  X(gptq8, Gptq, GptqVariant(8, false), AMN_TO_ALL)                     \
  X(gptq4_inout, Gptq, GptqVariant(4, true), AMN_TO_BF16)               \
  X(gptq4_actorder, Gptq, kGptq4ActOrder, AMN_TO_ALL)                   \
  X(awq4, Awq, kAwqOutIn, AMN_TO_ALL)                                   \
  X(awq4_inout, Awq, kAwqInOut, AMN_TO_ALL)                             \
  X(ct_int4, PackedInt, 4, AMN_TO_ALL)                                  \
  X(ct_int8, PackedInt, 8, AMN_TO_ALL)

#endif  // AMN_DISPATCH_KERNEL_TABLE_H_
