// Resolving hf:ORG/NAME[@REV] in the local Hugging Face hub cache (hf_cache.h).
#include "formats/hf_cache.h"

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "formats/byte_source.h"
#include "formats/sha256.h"

namespace amn::formats {
namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxRefBytes = 256;

bool SafeComponent(std::string_view s) {
  return !s.empty() && s != "." && s != ".." && s.find('/') == std::string_view::npos &&
         s.find('\0') == std::string_view::npos;
}

bool IsHex(std::string_view s, size_t digits) {
  return s.size() == digits && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  for (size_t at = 0;;) {
    const size_t next = s.find(sep, at);
    parts.push_back(s.substr(at, next == std::string_view::npos ? std::string_view::npos : next - at));
    if (next == std::string_view::npos) return parts;
    at = next + 1;
  }
}

std::string PathText(const fs::path& p) { return MessageSafe(p.string(), kMessagePathBytes); }

const char* Env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

}  // namespace

fs::path HfHubCacheDir() {
  if (const char* dir = Env("HF_HUB_CACHE")) return dir;
  if (const char* dir = Env("HUGGINGFACE_HUB_CACHE")) return dir;
  if (const char* home = Env("HF_HOME")) return fs::path(home) / "hub";
  if (const char* xdg = Env("XDG_CACHE_HOME")) return fs::path(xdg) / "huggingface" / "hub";
  const char* home = Env("HOME");
  return fs::path(home != nullptr ? home : "") / ".cache" / "huggingface" / "hub";
}

std::string HfRepoName(std::string_view spec) {
  if (!spec.starts_with(kHfPrefix)) return "";
  std::string_view repo = spec.substr(kHfPrefix.size());
  if (const size_t at = repo.find('@'); at != std::string_view::npos) repo = repo.substr(0, at);
  if (const size_t slash = repo.rfind('/'); slash != std::string_view::npos) repo = repo.substr(slash + 1);
  return std::string(repo);
}

Result<fs::path> ResolveHfCache(std::string_view spec) {
  if (!spec.starts_with(kHfPrefix)) return Status(StatusCode::kInvalidArgument, "not an hf: name");
  std::string_view repo = spec.substr(kHfPrefix.size());
  std::string_view revision = "main";
  if (const size_t at = repo.find('@'); at != std::string_view::npos) {
    revision = repo.substr(at + 1);
    repo = repo.substr(0, at);
  }
  const std::vector<std::string_view> parts = Split(repo, '/');
  bool valid = parts.size() <= 2 && !revision.empty();
  for (std::string_view p : parts) valid = valid && SafeComponent(p);
  for (std::string_view p : Split(revision, '/')) valid = valid && SafeComponent(p);
  if (!valid) {
    return Status(StatusCode::kInvalidArgument,
                  "'" + MessageSafe(spec) + "' is not hf:ORG/NAME[@REVISION]");
  }
  // huggingface_hub's repo_folder_name: "models--" + repo_id with '/' -> "--".
  std::string folder = "models";
  for (std::string_view p : parts) folder += "--" + std::string(p);
  const fs::path cache = HfHubCacheDir();
  const fs::path root = cache / folder;
  std::error_code error;
  if (!fs::is_directory(root, error)) {
    return Status(StatusCode::kIo, "'" + MessageSafe(repo) + "' is not in the Hugging Face cache: " +
                                       PathText(root) +
                                       " does not exist (download it first, or set HF_HUB_CACHE)");
  }
  std::string commit(revision);
  if (!IsHex(revision, 40)) {
    const fs::path ref = root / "refs" / std::string(revision);
    std::ifstream in(ref, std::ios::binary);
    if (!fs::is_regular_file(ref, error) || !in) {
      return Status(StatusCode::kIo, "revision '" + MessageSafe(revision) + "' of '" +
                                         MessageSafe(repo) + "' is not in the cache: no " + PathText(ref));
    }
    std::string text(kMaxRefBytes, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<size_t>(in.gcount()));
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
      text.pop_back();
    }
    if (!IsHex(text, 40)) {
      return Status(StatusCode::kInvalid,
                    PathText(ref) + ": holds '" + MessageSafe(text, 64) + "', not a 40-hex commit hash");
    }
    commit = text;
  }
  const fs::path snapshot = root / "snapshots" / commit;
  if (!fs::is_directory(snapshot, error)) {
    return Status(StatusCode::kIo, "'" + MessageSafe(repo) + "' at commit " + commit +
                                       " is not in the cache: no " + PathText(snapshot));
  }
  return snapshot;
}

Status VerifyHfSnapshot(const fs::path& snapshot) {
  std::error_code error;
  size_t verified = 0;
  for (auto it = fs::recursive_directory_iterator(snapshot, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (!it->is_symlink(error)) continue;
    const fs::path target = fs::read_symlink(it->path(), error);
    if (error) break;
    const std::string blob = target.filename().string();
    if (!IsHex(blob, 64)) continue;  // git-sha1 etags of small files: not a sha256
    AMN_RETURN_IF_ERROR(VerifyBlobSha256(fs::weakly_canonical(it->path(), error), blob));
    ++verified;
  }
  if (error) return Status(StatusCode::kIo, PathText(snapshot) + ": " + MessageSafe(error.message()));
  if (verified == 0) {
    return Status(StatusCode::kUnsupported,
                  PathText(snapshot) + ": no file links to a blob named by its sha256; nothing to verify");
  }
  return Status::Ok();
}

}  // namespace amn::formats
