// amn: parse any format, recover any precision. Command-line entry point:
// global options, subcommand dispatch, and errors turned into one line and an
// exit code (cli/exit_codes.h).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <new>
#include <string>
#include <vector>

#include "amn/targets.h"
#include "amn/version.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/global_options.h"
#include "cli/printable.h"
#include "cli/usage_error.h"

namespace amn::cli {
namespace {

std::string VersionLine() {
  std::string line = "amn " AMN_VERSION_STRING " (targets:";
  for (const TargetInfo& t : ListTargets()) line += " " + t.name;
  return line + ")";
}

int Main(int argc, char** argv) {
  CLI::App app("amn: turn quantized and foreign-container model weights into plain tensors "
               "and back",
               "amn");
  app.require_subcommand(1);
  app.set_version_flag("--version", VersionLine());
  GlobalOptions globals;
  AddGlobalOptions(app, globals);
  app.footer("Environment: AMN_ISA=NAME caps dispatch like --isa. Tensors kept as stored\n"
             "go file to file with copy_file_range where the kernel need not move the bytes\n"
             "(NFS, SMB, Ceph; Btrfs, XFS, bcachefs, OCFS2 at block-aligned offsets), else\n"
             "with read + write; AMN_COPY_FILE_RANGE=1 copies them so everywhere,\n"
             "AMN_NO_COPY_FILE_RANGE=1 nowhere.\n"
             "AMN_OUTPUT_WRITER=ring|mapped picks how outputs are written (default ring).\n"
             "Exit codes: 0 ok, 1 the work failed, 2 usage error.");

  const Command commands[] = {AddParseCommand(app), AddInspectCommand(app),
                              AddRememberCommand(app, globals), AddForgetCommand(app, globals),
                              AddConvertCommand(app, globals),
                              AddTargetsCommand(app),
                              AddBenchCommand(app)};
  for (const Command& command : commands) AddGlobalOptions(*command.app, globals);

  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return ReportUsageError(app, e, args);
  }
  if (!globals.isa.empty()) {
    if (const Status status = SetTargetCap(globals.isa); !status.ok()) {
      std::fprintf(stderr, "amn: --isa: %s\n", Printable(status.message()).c_str());
      return kExitUsage;
    }
  } else if (const Status env = EnvironmentTargetStatus(); !env.ok()) {
    std::fprintf(stderr, "amn: %s\n", Printable(env.message()).c_str());
    return kExitUsage;
  }
  for (const Command& command : commands) {
    if (command.app->parsed()) return command.run();
  }
  return kExitUsage;
}

}  // namespace
}  // namespace amn::cli

int main(int argc, char** argv) {
  try {
    return amn::cli::Main(argc, argv);
  } catch (const std::bad_alloc&) {  // e.g. a benchmark buffer; the library reports its own
    std::fprintf(stderr, "amn: out of memory while running '%s'\n",
                 argc > 1 ? amn::cli::Printable(argv[1]).c_str() : "amn");
    return amn::cli::kExitFailure;
  } catch (const std::exception& e) {
    // Never a JSON library's tagged message ("[json.exception.type_error.316]
    // ..."): say what failed in amn's words.
    std::string what = e.what();
    if (what.starts_with("[json.exception.")) {
      const size_t end = what.find("] ");
      what = "internal error while writing JSON: " +
             (end == std::string::npos ? std::string("malformed text") : what.substr(end + 2));
    }
    std::fprintf(stderr, "amn: %s\n", amn::cli::Printable(what).c_str());
    return amn::cli::kExitFailure;
  }
}
