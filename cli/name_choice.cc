// The name-choice validator (name_choice.h).
#include "cli/name_choice.h"

#include <algorithm>
#include <cctype>

#include "cli/did_you_mean.h"
#include "cli/printable.h"

namespace amn::cli {

CLI::Validator NameChoice(std::vector<std::string> names) {
  std::string listed;
  for (const std::string& name : names) listed += (listed.empty() ? "" : "|") + name;
  auto check = [names, listed](std::string& value) -> std::string {
    std::string lower = value;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (std::find(names.begin(), names.end(), lower) != names.end()) {
      value = lower;
      return {};
    }
    std::string error = "'" + Printable(value) + "' is not one of " + listed;
    if (const auto near = ClosestName(value, names)) error += "; did you mean '" + *near + "'?";
    return error;
  };
  return CLI::Validator(check, listed);
}

}  // namespace amn::cli
