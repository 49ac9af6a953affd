// Placeholder until the ggml legacy kernel family lands: decodes nothing, so
// amn::DequantGgml reports these types as unsupported. No math here.
#include "amn/ggml_dequant.h"
#include "dispatch/ggml_families.h"

namespace amn {
namespace internal {

bool DequantGgmlLegacy(GgmlType, const uint8_t*, size_t, ElemType, void*) { return false; }

}  // namespace internal

TargetId GgmlLegacyTarget() { return 0; }

}  // namespace amn
