// Edit distance for suggestions (did_you_mean.h): the optimal string
// alignment distance (Damerau-Levenshtein without repeated edits of one
// substring), case-insensitive.
#include "cli/did_you_mean.h"

#include <algorithm>
#include <cctype>

namespace amn::cli {
namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

size_t EditDistance(const std::string& a, const std::string& b) {
  // d[i][j]: distance between a's first i and b's first j characters.
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::optional<std::string> ClosestName(std::string_view word,
                                       const std::vector<std::string>& candidates) {
  constexpr size_t kMaxWordBytes = 64;  // longer is no typo of a name of ours
  if (word.empty() || word.size() > kMaxWordBytes) return std::nullopt;
  const std::string typed = Lower(word);
  const size_t letters = typed.size() - std::min(typed.find_first_not_of('-'), typed.size());
  const size_t allowed = letters <= 4 ? 1 : 2;
  std::optional<std::string> best;
  size_t best_distance = allowed + 1;
  for (const std::string& candidate : candidates) {
    const size_t distance = EditDistance(typed, Lower(candidate));
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

}  // namespace amn::cli
