// Placeholder until the ggml kquant kernel family lands: decodes nothing, so
// amn::DequantGgml reports these types as unsupported. No math here.
#include "amn/ggml_dequant.h"
#include "dispatch/ggml_families.h"

namespace amn {
namespace internal {

bool DequantGgmlKQuant(GgmlType, const uint8_t*, size_t, ElemType, void*) { return false; }

}  // namespace internal

TargetId GgmlKQuantTarget() { return 0; }

}  // namespace amn
