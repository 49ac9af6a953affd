// `amn targets`: the ISA targets compiled into this binary, which this CPU
// supports, which one dispatch runs, and why.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "amn/targets.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"

namespace amn::cli {
namespace {

struct TargetsOptions {
  bool json = false;
};

int RunTargets(const TargetsOptions& options) {
  const std::vector<TargetInfo> targets = ListTargets();
  const std::optional<TargetId> cap = TargetCap();
  if (options.json) {
    nlohmann::json out;
    out["active"] = std::string(TargetName(ActiveTarget()));
    out["cap"] = cap ? nlohmann::json(std::string(TargetName(*cap))) : nlohmann::json(nullptr);
    out["targets"] = nlohmann::json::array();
    for (const TargetInfo& t : targets) {
      out["targets"].push_back({{"name", t.name},
                                {"compiled", true},
                                {"supported", t.supported},
                                {"allowed", t.allowed},
                                {"active", t.active},
                                {"why", t.why}});
    }
    std::printf("%s\n", out.dump(2).c_str());
    return kExitOk;
  }
  std::printf("ISA targets compiled into this amn, best first:\n\n");
  std::printf("  %-9s %-9s %-7s %s\n", "target", "supported", "active", "why");
  for (const TargetInfo& t : targets) {
    std::printf("  %-9s %-9s %-7s %s\n", t.name.c_str(), t.supported ? "yes" : "no",
                t.active ? "*" : "", t.why.c_str());
  }
  std::printf("\nActive: %s. Cap it with --isa NAME or AMN_ISA=NAME (NAME or below).\n",
              std::string(TargetName(ActiveTarget())).c_str());
  return kExitOk;
}

}  // namespace

Command AddTargetsCommand(CLI::App& app) {
  auto options = std::make_shared<TargetsOptions>();
  CLI::App* cmd = app.add_subcommand(
      "targets", "List the ISA targets compiled in, which this CPU supports, and which is active");
  cmd->add_flag("--json", options->json, "Print JSON instead of a table");
  return {cmd, [options] { return RunTargets(*options); }};
}

}  // namespace amn::cli
