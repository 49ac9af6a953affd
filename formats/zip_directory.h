// The ZIP central directory read by hand (PKWARE APPNOTE.TXT 6.3.x), without
// libzip: libzip does not say where an entry's data starts, and zero-copy
// reading of stored members (PyTorch storages, NPZ arrays) needs it.
// ZipArchive (zip_archive.h) cross-checks this listing against libzip's.
#ifndef AMN_FORMATS_ZIP_DIRECTORY_H_
#define AMN_FORMATS_ZIP_DIRECTORY_H_

#include <vector>

#include "amn/limits.h"
#include "amn/result.h"
#include "formats/byte_source.h"
#include "formats/zip_archive.h"

namespace amn::formats {

// Every entry of the archive in central directory order (index = position,
// which is also libzip's index), with data_offset found from its local
// header. Applies every check ZipArchive::Open documents except the
// comparison with libzip; `limits` is clamped here. Reads the end records,
// the central directory and each local header; never any entry data.
Result<std::vector<ZipEntry>> ReadZipDirectory(ByteSource& source, const ParseLimits& limits);

}  // namespace amn::formats

#endif  // AMN_FORMATS_ZIP_DIRECTORY_H_
