// `hf:ORG/NAME[@REV]` names: a model already downloaded into the local
// Hugging Face hub cache, laid out as huggingface_hub's file_download.py
// writes it: <cache>/models--ORG--NAME/refs/<REV> holds a commit hash,
// snapshots/<commit>/ holds the repository's files as symlinks to
// ../../blobs/<etag> (the sha256 for LFS files). The cache is $HF_HUB_CACHE,
// else $HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub, else
// $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub (constants.py).
#ifndef AMN_FORMATS_HF_CACHE_H_
#define AMN_FORMATS_HF_CACHE_H_

#include <filesystem>
#include <string_view>

#include "amn/result.h"

namespace amn::formats {

inline constexpr std::string_view kHfPrefix = "hf:";

// The hub cache directory the environment selects.
std::filesystem::path HfHubCacheDir();

// The snapshot directory for `spec` ("hf:Qwen/Qwen3-8B-FP8",
// "hf:gpt2@main", "hf:org/name@<40-hex commit>"): REV defaults to "main"; a
// 40-hex REV is the commit itself, anything else is read from refs/REV.
// kInvalidArgument for a malformed name; kIo naming the path looked at when
// the repository, the ref or the snapshot is not in the cache.
Result<std::filesystem::path> ResolveHfCache(std::string_view spec);

// The repository name of `spec` ("NAME" of hf:ORG/NAME@REV), for default
// output names; empty when `spec` is no hf: name.
std::string HfRepoName(std::string_view spec);

// Recomputes the SHA-256 of every snapshot file whose blob is named by a
// sha256 (64 hex digits: the LFS files, i.e. the weights) and compares it
// with the name: kInvalid naming the blob on a mismatch; kUnsupported when
// no file has such a blob.
Status VerifyHfSnapshot(const std::filesystem::path& snapshot);

}  // namespace amn::formats

#endif  // AMN_FORMATS_HF_CACHE_H_
