// "did you mean ...?": the closest known name to a mistyped one.
#ifndef AMN_CLI_DID_YOU_MEAN_H_
#define AMN_CLI_DID_YOU_MEAN_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace amn::cli {

// The candidate closest to `word` by edit distance (insertions, deletions,
// substitutions and swaps of two neighbours cost 1; case is ignored), when
// it is close enough to be a typo: at most 1 edit for words of up to 4
// letters (dashes not counted), 2 beyond. Ties go to the earlier candidate.
std::optional<std::string> ClosestName(std::string_view word,
                                       const std::vector<std::string>& candidates);

}  // namespace amn::cli

#endif  // AMN_CLI_DID_YOU_MEAN_H_
