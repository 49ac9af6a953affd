// Usage errors with suggestions (usage_error.h). CLI11 keeps every argument
// it could not place (App::remaining), also when it throws: the first of
// them, in command-line order, is the mistake to name.
#include "cli/usage_error.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "cli/did_you_mean.h"
#include "cli/exit_codes.h"
#include "cli/printable.h"

namespace amn::cli {
namespace {

std::vector<std::string> OptionNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    for (const std::string& name : option->get_snames()) names.push_back("-" + name);
  }
  return names;
}

std::vector<std::string> CommandNames(CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) {
    names.push_back(command->get_name());
    for (const std::string& alias : command->get_aliases()) names.push_back(alias);
  }
  return names;
}

}  // namespace

int ReportUsageError(CLI::App& app, const CLI::ParseError& e, const std::vector<std::string>& args) {
  const std::vector<CLI::App*> chosen = app.get_subcommands();
  CLI::App* command = chosen.empty() ? nullptr : chosen.front();
  const std::string help = command == nullptr ? "amn --help" : "amn " + command->get_name() + " --help";
  const std::vector<std::string> unplaced = app.remaining(true);
  std::optional<std::string> unknown;
  for (const std::string& arg : args) {
    if (std::find(unplaced.begin(), unplaced.end(), arg) != unplaced.end()) {
      unknown = arg;
      break;
    }
  }
  std::string line;
  std::optional<std::string> suggestion;
  if (unknown.has_value()) {
    std::string word = *unknown;
    if (word.size() > 1 && word[0] == '-') {
      if (const size_t eq = word.find('='); eq != std::string::npos) word.resize(eq);
      line = "unknown option '" + word + "'" +
             (command == nullptr ? std::string() : " for '" + command->get_name() + "'");
      suggestion = ClosestName(word, OptionNames(command == nullptr ? app : *command));
    } else if (command == nullptr) {
      line = "unknown command '" + word + "'";
      suggestion = ClosestName(word, CommandNames(app));
    } else {
      line = "unexpected argument '" + word + "' for '" + command->get_name() + "'";
    }
  } else if (command == nullptr && e.get_name() == "RequiredError") {
    std::string names;
    for (const std::string& name : CommandNames(app)) names += (names.empty() ? "" : ", ") + name;
    line = "no command given (commands: " + names + ")";
  } else {
    line = e.what();
  }
  std::string text = "amn: " + Printable(line);
  if (!suggestion.has_value()) text += " (see '" + help + "')";
  std::fprintf(stderr, "%s\n", text.c_str());
  if (suggestion.has_value()) std::fprintf(stderr, "amn: did you mean '%s'?\n", suggestion->c_str());
  return kExitUsage;
}

}  // namespace amn::cli
