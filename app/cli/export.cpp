// tilescope-cli export: a results database's winners and results in the formats code consumes:
// T4, a Kernel Tuner cache, a JSON cache of the best config per (kernel, shape, device), triton.Config lists, a C++
// header with a lookup by shape, CSV.

#include "cli.h"

#include "base/error.h"
#include "jobs/export.h"

#include <cstdio>
#include <iostream>
#include <optional>

namespace tilescope::cli {

namespace {

struct ExportArgs {
    std::string db;
    std::string format;
    std::string output;
    std::int64_t session = 0;
    std::size_t top = 8;
    StaticRank rankBy = StaticRank::Occupancy;
    CLI::Option* sessionOption = nullptr;
};

int exportCommand(const ExportArgs& opt) {
    const std::optional<ExportFormat> format = parseExportFormat(opt.format);
    if (!format)
        throw InputError("", "--format",
                         "unknown format '" + opt.format + "' (known: t4, json, triton, cpp, csv, kerneltuner)");
    ExportRequest request;
    request.database = opt.db;
    if (opt.sessionOption->count() > 0)
        request.session = opt.session;
    request.options = ExportOptions{*format, opt.top, opt.rankBy};
    request.output = opt.output;
    ExportEvents events;
    events.sessionPicked = [](std::int64_t id, std::size_t count) {
        std::fprintf(stderr, "note: exporting session %lld of %zu (--session picks another)\n",
                     static_cast<long long>(id), count);
    };
    const ExportOutcome outcome = runExport(request, events);
    if (!outcome.written) {
        std::cout << outcome.text;
        std::cout.flush();
        return kOk;
    }
    std::fprintf(stderr, "wrote %s (%s, %zu bytes)\n", outcome.written->path.c_str(),
                 outcome.written->formatName.c_str(),
                 outcome.written->bytes);
    return kOk;
}

} // namespace

void registerExport(CLI::App& app) {
    auto opt = std::make_shared<ExportArgs>();
    CLI::App* cmd = app.add_subcommand("export", "Export results: T4, a JSON cache of the best config per (kernel, "
                                                 "shape, device), triton.Config lists, a C++ header, CSV, a Kernel "
                                                 "Tuner cache");
    readsFile(cmd->add_option(
                  "db", opt->db,
                  "Recorded results: a results database, a T4 file or a Kernel Tuner cache (gzip-compressed or not)"))
        ->required();
    cmd->add_option(
           "--format", opt->format,
           "t4: one session's results (T4 1.0.0); json: the best config per (kernel, shape, device); "
           "triton: Python with triton.Config lists of the top configs; cpp: a C++17 header with a lookup "
           "by shape; csv: every result; kerneltuner: one session as a Kernel Tuner cache (for its simulation mode)")
        ->required()
        ->check(CLI::IsMember({"t4", "json", "triton", "cpp", "csv", "kerneltuner"}));
    writesFile(cmd->add_option("-o,--output", opt->output,
                               "Write to FILE (default: standard output); never one of the inputs"),
               "-o");
    opt->sessionOption =
        cmd->add_option("--session", opt->session,
                        "Export only this session (default: all; for t4 and kerneltuner the newest with results)")
            ->check(wholeNumber(1, std::numeric_limits<std::int64_t>::max()));
    cmd->add_option("--top", opt->top, "triton: configs per (shape, device)")
        ->check(wholeNumber(1, kAny))
        ->capture_default_str();
    addRankByOption(cmd, opt->rankBy, "which config json, cpp and triton take as the best");
    setAction(cmd, [opt] { return exportCommand(*opt); });
}

} // namespace tilescope::cli
