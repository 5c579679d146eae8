// Placeholder until the analyze command lands (issue 3).
#include "cli.h"
namespace tilescope::cli {
void registerAnalyze(CLI::App&) {}
} // namespace tilescope::cli
