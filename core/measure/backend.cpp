#include "measure/backend.h"

#include <algorithm>

namespace tilescope {

std::vector<std::string> sessionArchs(const std::string& requested, const BackendInfo& backend) {
    if (!requested.empty())
        return {requested};
    std::vector<std::string> archs;
    if (!backend.arch.empty())
        archs.push_back(backend.arch);
    for (const std::string& arch : backend.archs) {
        if (!arch.empty() && std::find(archs.begin(), archs.end(), arch) == archs.end())
            archs.push_back(arch);
    }
    return archs;
}

const CompileResult* MeasureItem::compiledFor(std::string_view arch) const {
    for (const ArchCompile& c : compiles) {
        if (c.arch == arch)
            return c.result;
    }
    return compiled();
}

} // namespace tilescope
