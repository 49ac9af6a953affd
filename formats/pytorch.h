// PyTorch checkpoints (torch.save's zip format, DESIGN.md §5): data.pkl is
// run by a small pickle VM with a global allowlist (pickle_vm.h); tensors
// are views of the raw storages under data/.
#ifndef AMN_FORMATS_PYTORCH_H_
#define AMN_FORMATS_PYTORCH_H_

#include "amn/limits.h"
#include "amn/result.h"
#include "formats/array_file.h"
#include "formats/byte_source.h"
#include "formats/zip_archive.h"

namespace amn::formats {

// True when `source` is a legacy (pre-1.6, non-zip) torch.save file: a raw
// pickle stream that starts with torch's pickled magic number.
bool LooksLikeLegacyTorch(ByteSource& source);

// Reads `<prefix>/data.pkl` (prefix: the single top-level folder, "archive"
// or the model name), `<prefix>/byteorder` ("little" when absent, "big"
// swaps every element) and `<prefix>/version`. Every tensor of the
// (possibly nested) state dict becomes an ArrayEntry named by its dotted
// path ("encoder.layers.0.weight"), in pickle order, viewing its storage
// member `<prefix>/data/<key>` with the tensor's storage offset and strides.
// Storages may be shared. Values that are not tensors (ints, strings,
// _metadata) are left out. Errors: a missing data.pkl or storage member, a
// storage smaller than a view needs, a disallowed global (named), pickle
// limits (pickle_vm.h), storage dtypes it does not know: kInvalid /
// kUnsupported / kLimitExceeded naming the file and the tensor.
Result<ArrayFile> ReadPytorch(ZipArchive& archive, const ParseLimits& limits);

}  // namespace amn::formats

#endif  // AMN_FORMATS_PYTORCH_H_
