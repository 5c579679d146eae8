// tilescope-cli check: whether a committed cache of tuned configs still holds here.

#include "cli.h"

#include "base/error.h"
#include "exchange/bestconfigs.h"
#include "exchange/cachecheck.h"
#include "spec/tuningproblem.h"
#include "tuner/cacherefresh.h"

#include <algorithm>
#include <cstdio>
#include <memory>

namespace tilescope::cli {

namespace {

struct CheckOptions {
    std::string cache;
    std::vector<std::string> problems;
    std::string device;
    std::string arch;
    int driver = 0;
    bool here = false;
};

int runCheck(const CheckOptions& opt) {
    const std::vector<BestConfig> cache = readBestConfigs(opt.cache);

    std::vector<std::unique_ptr<TuningProblem>> loaded;
    std::vector<const TuningProblem*> problems;
    for (const std::string& path : opt.problems) {
        loaded.push_back(std::make_unique<TuningProblem>(TuningProblem::load(path)));
        problems.push_back(loaded.back().get());
    }
    CacheTarget target;
    if (opt.here) {
        if (problems.empty())
            throw InputError("", "--here", "--here needs a --problem (a worker opens it to meet the GPU)");
        try {
            target = thisMachine(*problems.front(), stderrNotes());
        } catch (const InputError& e) {
            // The backend's advice without a GPU (replay, or analyse offline) is tune's: a check
            // needs only the GPU's name, arch and driver, which can be given instead.
            const std::size_t advice = e.message().find(". Without a GPU,");
            if (advice == std::string::npos)
                throw;
            throw InputError(e.file(), "--here",
                             e.message().substr(0, advice) +
                                 ". --here asks this machine's GPU; without one, name the GPU to check against: "
                                 "--device \"NVIDIA H200\", --arch sm_90, --driver 13000");
        }
    }
    if (!opt.device.empty())
        target.deviceName = opt.device;
    if (!opt.arch.empty())
        target.arch = opt.arch;
    if (opt.driver > 0)
        target.driverVersion = opt.driver;

    const CacheCheck check = checkCache(cache, problems, target);
    std::printf("Cache %s: %zu entries, %zu fresh, %zu stale", opt.cache.c_str(), cache.size(), check.fresh,
                check.stale.size() - static_cast<std::size_t>(
                                         std::count_if(check.stale.begin(), check.stale.end(), [](const StaleEntry& e) {
                                             return e.entry == StaleEntry::kMissing;
                                         })));
    const auto missing = std::count_if(check.stale.begin(), check.stale.end(),
                                       [](const StaleEntry& e) { return e.entry == StaleEntry::kMissing; });
    if (missing > 0)
        std::printf(", %ld shape%s not covered", static_cast<long>(missing), missing == 1 ? "" : "s");
    if (!target.deviceName.empty() || !target.arch.empty())
        std::printf(" (checked for %s%s%s)", target.deviceName.c_str(),
                    target.arch.empty() ? "" : (target.deviceName.empty() ? "" : ", "), target.arch.c_str());
    std::printf("\n");
    for (const StaleEntry& e : check.stale) {
        std::string reasons;
        for (const std::string& r : e.reasons)
            reasons += (reasons.empty() ? "" : "; ") + r;
        if (e.entry == StaleEntry::kMissing)
            std::printf("  missing  %s | %s: %s\n", e.kernel.c_str(), e.shape.c_str(), reasons.c_str());
        else
            std::printf("  stale    %s | %s | %s: %s\n", e.kernel.c_str(), e.shape.c_str(), e.device.c_str(),
                        reasons.c_str());
    }
    for (const std::string& note : check.notes)
        std::printf("note: %s\n", note.c_str());
    return check.stale.empty() ? kOk : kStale;
}

} // namespace

void registerCheck(CLI::App& app) {
    auto opt = std::make_shared<CheckOptions>();
    CLI::App* cmd = app.add_subcommand(
        "check", "Whether exported tuned configs (a JSON cache, C++ header or Triton export) still hold: exit status 0 "
                 "when every "
                 "entry is fresh, 3 when some are stale or a shape is not covered (for CI), 2 for bad input");
    readsFile(
        cmd->add_option("cache", opt->cache,
                        "The tuned configs: a JSON cache (export --format json), or a C++ header or Triton export "
                        "(export --format cpp|triton), read through their metadata line"))
        ->required()
        ->check(CLI::ExistingFile);
    readsFile(cmd->add_option(
        "--problem", opt->problems,
        "A problem file as it is now (repeat for several kernels): its kernel specification, source and "
        "shapes are checked against the entries of its kernel"));
    cmd->add_flag("--here", opt->here,
                  "Check against this machine's GPU (device 0, asked through tilescope-worker; needs --problem)");
    cmd->add_option("--device", opt->device, "Check against this GPU name (\"NVIDIA H200\")");
    cmd->add_option("--arch", opt->arch, "Check against this arch (sm_90)");
    cmd->add_option("--driver", opt->driver, "Check against this CUDA driver version (13000 for 13.0)")
        ->check(CLI::Range(1, 1000000));
    setAction(cmd, [opt] { return runCheck(*opt); });
}

} // namespace tilescope::cli
