#include "exchange/cachecheck.h"

#include "spec/tuningproblem.h"

#include <algorithm>
#include <map>
#include <set>

namespace tilescope {

namespace {

std::string shapeText(const std::vector<std::pair<std::string, std::int64_t>>& dims) {
    std::string out;
    for (const auto& [name, value] : dims)
        out += (out.empty() ? "" : " ") + name + "=" + std::to_string(value);
    return out;
}

std::string cudaVersion(int driver) {
    return std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10);
}

} // namespace

bool sameShape(std::vector<std::pair<std::string, std::int64_t>> a,
               std::vector<std::pair<std::string, std::int64_t>> b) {
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    return a == b;
}

CacheCheck checkCache(const std::vector<BestConfig>& cache, const std::vector<const TuningProblem*>& problems,
                      const CacheTarget& target) {
    CacheCheck out;
    struct Known {
        const TuningProblem* problem;
        std::string specHash;
        std::string sourceHash;
    };
    std::map<std::string, Known> byKernel;
    for (const TuningProblem* p : problems)
        byKernel.emplace(p->kernelName, Known{p, p->specHash(), p->sourceHash()});

    std::set<std::string> unchecked;
    bool unhashed = false;
    for (std::size_t i = 0; i < cache.size(); ++i) {
        const BestConfig& b = cache[i];
        StaleEntry e;
        e.entry = i;
        e.kernel = b.kernel;
        e.shape = shapeText(b.shape);
        e.dims = b.shape;
        e.device = b.device;
        if (!target.deviceName.empty() && !b.device.empty() && b.device != target.deviceName)
            e.reasons.push_back("tuned on " + b.device + ", this machine has " + target.deviceName);
        if (!target.arch.empty() && !b.arch.empty() && b.arch != target.arch)
            e.reasons.push_back("tuned for " + b.arch + ", this machine is " + target.arch);
        if (target.driverVersion > 0 && b.driverVersion > 0 && target.driverVersion / 1000 != b.driverVersion / 1000)
            e.reasons.push_back("tuned with the CUDA " + cudaVersion(b.driverVersion) + " driver, this machine has " +
                                cudaVersion(target.driverVersion));
        if (const auto k = byKernel.find(b.kernel); k != byKernel.end()) {
            const Known& known = k->second;
            if (b.specHash.empty() || b.sourceHash.empty())
                unhashed = true;
            if (!b.specHash.empty() && b.specHash != known.specHash)
                e.reasons.push_back("the problem changed (its kernel specification, parameters or conditions)");
            if (!b.sourceHash.empty() && !known.sourceHash.empty() && b.sourceHash != known.sourceHash)
                e.reasons.push_back("the kernel source changed (" + known.problem->kernelFile + ")");
            if (!b.shape.empty()) {
                bool listed = false;
                for (const Shape& s : known.problem->shapes)
                    listed = listed || sameShape(s.dims, b.shape);
                if (!listed)
                    e.reasons.push_back("the problem no longer has this shape");
            }
        } else {
            unchecked.insert(b.kernel);
        }
        if (e.reasons.empty())
            ++out.fresh;
        else
            out.stale.push_back(std::move(e));
    }
    // Shapes of the problems that no entry (on the target device, when it is known) covers.
    for (const auto& [kernel, known] : byKernel) {
        for (const Shape& s : known.problem->shapes) {
            if (s.dims.empty())
                continue;
            bool covered = false;
            for (const BestConfig& b : cache)
                covered = covered || (b.kernel == kernel && sameShape(b.shape, s.dims) &&
                                      (target.deviceName.empty() || b.device == target.deviceName));
            if (covered)
                continue;
            StaleEntry e;
            e.kernel = kernel;
            e.shape = s.label();
            e.dims = s.dims;
            e.reasons.push_back(target.deviceName.empty() ? "no entry for this shape of the problem"
                                                          : "no entry for this shape on " + target.deviceName);
            out.stale.push_back(std::move(e));
        }
    }
    for (const std::string& kernel : unchecked)
        out.notes.push_back("entries of kernel " + kernel +
                            ": no problem given for it, so its specification, source and shapes are not checked");
    if (unhashed)
        out.notes.push_back("some entries carry no problem or source hash (written before this version): those "
                            "parts are not checked for them");
    if (target.deviceName.empty() && target.arch.empty() && target.driverVersion == 0)
        out.notes.push_back("no machine to check against: the device, arch and driver are not checked");
    return out;
}

} // namespace tilescope
