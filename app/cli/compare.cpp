// tilescope-cli compare: the same problem measured on two GPUs (or in two contexts): per config
// the time on each and their ratio, the rank correlation, and how much each side's winner loses
// on the other. The comparison is the compare use case (core/jobs/compare.h); any recording
// format on each side.

#include "cli.h"

#include "base/textformat.h"
#include "jobs/compare.h"

#include <cstdio>

namespace tilescope::cli {

namespace {

struct CompareArgs {
    std::string a;
    std::string b;
    std::int64_t sessionA = 0;
    std::int64_t sessionB = 0;
    CLI::Option* sessionAOption = nullptr;
    CLI::Option* sessionBOption = nullptr;
    std::size_t top = 10;
    std::string csv;
};

int run(const CompareArgs& opt) {
    CompareRequest request;
    request.pathA = opt.a;
    request.pathB = opt.b;
    if (opt.sessionAOption->count() > 0)
        request.sessionA = opt.sessionA;
    if (opt.sessionBOption->count() > 0)
        request.sessionB = opt.sessionB;
    request.top = opt.top;
    request.csvPath = opt.csv;
    CompareEvents events;
    events.sessionPicked = [](const std::string& note) {
        std::fprintf(stderr, "note: %s (--session-a/--session-b pick another)\n", note.c_str());
    };
    const CompareOutcome outcome = runCompare(request, events);
    const DeviceComparison& c = outcome.comparison;
    const CompareSide& a = *outcome.a;
    const CompareSide& b = *outcome.b;

    std::printf("A  %s  %s\n", c.labelA.c_str(), a.info.shapeLabel().c_str());
    std::printf("B  %s  %s\n", c.labelB.c_str(), b.info.shapeLabel().c_str());
    for (const std::string& line : comparisonSentences(c))
        std::printf("  %s\n", line.c_str());

    const std::size_t shown = std::min(opt.top, c.configs.size());
    std::vector<std::string> headers{"rank A", "rank B"};
    std::vector<bool> right{true, true};
    for (const std::string& p : c.shared) {
        headers.push_back(p);
        right.push_back(true);
    }
    for (const char* h : {"time A ms", "time B ms", "B / A"}) {
        headers.emplace_back(h);
        right.push_back(true);
    }
    TextTable table(headers, right);
    for (std::size_t i = 0; i < shown; ++i) {
        const ComparedConfig& x = c.configs[i];
        std::vector<std::string> row{formatDouble("%.4g", x.rankA), formatDouble("%.4g", x.rankB)};
        for (const std::string& p : c.shared) {
            const ConfigValue* v = x.config.find(p);
            row.push_back(v ? v->plain() : std::string());
        }
        row.push_back(formatDouble("%.4g", x.timeA));
        row.push_back(formatDouble("%.4g", x.timeB));
        row.push_back(formatDouble("%.4g", x.ratio) + "x");
        table.addRow(std::move(row));
    }
    std::printf("\nThe %zu fastest on A of %zu\n%s", shown, c.configs.size(), table.render().c_str());

    if (!outcome.csvWritten.empty())
        std::printf("wrote %s (%zu configs)\n", outcome.csvWritten.c_str(), c.configs.size());
    return kOk;
}

} // namespace

void registerCompare(CLI::App& app) {
    auto opt = std::make_shared<CompareArgs>();
    CLI::App* cmd = app.add_subcommand(
        "compare", "Compare one problem's results on two GPUs (or in two contexts): per config the time on each and "
                   "their ratio, the rank correlation, and how much each side's winner loses on the other");
    readsFile(
        cmd->add_option("A", opt->a, "Results from one GPU: a Tilescope database, a T4 file or a Kernel Tuner cache"))
        ->required()
        ->check(CLI::ExistingFile);
    readsFile(cmd->add_option("B", opt->b, "Results from the other GPU, in any of those formats"))
        ->required()
        ->check(CLI::ExistingFile);
    opt->sessionAOption = cmd->add_option("--session-a", opt->sessionA,
                                          "The session of A (a database's; default: the newest with results)");
    opt->sessionBOption = cmd->add_option("--session-b", opt->sessionB, "The session of B");
    cmd->add_option("--top", opt->top, "Configs listed, the fastest on A first")
        ->capture_default_str()
        ->check(wholeNumber(1, kAny));
    writesFile(cmd->add_option("--csv", opt->csv, "Also write every matched config to this CSV file"), "--csv");
    cmd->footer("Configs are matched on the parameters both sides have; one only one side has is left out when it "
                "takes one value there, else that side's best over it is taken. Only configs that ran correctly on "
                "both count.\nExit status: 0 done, 2 bad input.");
    setAction(cmd, [opt]() { return run(*opt); });
}

} // namespace tilescope::cli
