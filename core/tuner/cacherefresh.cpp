#include "tuner/cacherefresh.h"

#include "base/error.h"
#include "exchange/bestconfigs.h"
#include "exchange/detection.h"
#include "exchange/recording.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"

#include <fstream>
#include <sstream>

namespace tilescope {

CacheTarget thisMachine(const TuningProblem& problem, const std::function<void(const std::string&)>& note) {
    BackendOptions options;
    options.cuda.metrics.clear();
    options.cuda.note = note;
    const std::unique_ptr<Backend> backend = makeBackend(parseBackendSpec("cuda"), std::move(options));
    const ConfigSpace space = ConfigSpace::build(problem, 0);
    backend->open(problem, 0, space); // throws InputError without a usable GPU
    const std::vector<worker::DeviceInfo> devices = static_cast<const CudaBackend&>(*backend).devices();
    backend->close();
    CacheTarget target;
    if (!devices.empty()) {
        target.deviceName = devices.front().name;
        target.arch = devices.front().arch;
        target.driverVersion = devices.front().driverVersion;
    }
    return target;
}

std::vector<BestConfig> readBestConfigs(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError(path, "", "cannot read the file");
    std::ostringstream text;
    text << in.rdbuf();
    return parseTunedConfigs(text.str(), path);
}

CacheTarget cacheTargetOf(const BackendSpec& spec, const TuningProblem& problem,
                          const std::function<void(const std::string&)>& note) {
    CacheTarget target;
    switch (spec.kind) {
    case BackendSpec::Kind::Cuda:
        return thisMachine(problem, note);
    case BackendSpec::Kind::Replay:
        for (const SessionData& s : readRecording(spec.recording))
            if (!s.info.deviceName.empty()) {
                target.deviceName = s.info.deviceName;
                target.arch = s.info.arch;
                break;
            }
        break;
    case BackendSpec::Kind::Analysis:
        target.arch = spec.arch;
        break;
    }
    return target;
}

CacheRefresh planCacheRefresh(const std::string& path, const TuningProblem& problem, const CacheTarget& target,
                              const std::string& field) {
    std::ifstream head(path);
    char first = 0;
    head >> first; // skips white space
    if (first != '{' || detectRecordingFormat(path) != RecordingFormat::BestConfigs)
        throw InputError(path, field,
                         "is not a JSON cache of tuned configs: --only-stale rewrites JSON caches (export "
                         "--format json); a C++ header or Triton export is checked with `check` and exported "
                         "again after tuning");
    CacheRefresh plan;
    plan.target = target;
    plan.cached = readBestConfigs(path);
    const CacheCheck check = checkCache(plan.cached, {&problem}, target);
    std::set<std::size_t> retune;
    for (const StaleEntry& e : check.stale) {
        if (e.kernel != problem.kernelName)
            continue;
        if (e.entry != StaleEntry::kMissing) {
            const BestConfig& b = plan.cached[e.entry];
            if (!target.deviceName.empty() && !b.device.empty() && b.device != target.deviceName)
                continue; // another machine's entry: not this run's to replace
            plan.staleEntries.insert(e.entry);
        }
        for (std::size_t i = 0; i < problem.shapes.size(); ++i)
            if (sameShape(problem.shapes[i].dims, e.dims))
                retune.insert(i);
    }
    plan.shapes.assign(retune.begin(), retune.end());
    return plan;
}

std::vector<BestConfig> refreshedCache(const CacheRefresh& plan, const std::vector<SessionData>& tuned) {
    std::vector<BestConfig> rewritten;
    for (std::size_t i = 0; i < plan.cached.size(); ++i)
        if (!plan.staleEntries.count(i))
            rewritten.push_back(plan.cached[i]);
    for (BestConfig& b : bestConfigs(tuned))
        rewritten.push_back(std::move(b));
    return rewritten;
}

} // namespace tilescope
