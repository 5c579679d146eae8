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

const MeasureItem& MeasureItems::operator[](std::size_t i) const {
    if (i < m_given.size())
        return m_given[i];
    return m_fed.at(i);
}

std::vector<std::size_t> MeasureItems::more(std::size_t wanted) {
    std::vector<std::size_t> numbers;
    if (!m_control.feed || wanted == 0)
        return numbers;
    std::vector<MeasureItem> added;
    m_control.feed(wanted, added);
    for (MeasureItem& item : added) {
        const std::size_t number = size();
        m_fed.emplace(number, std::move(item));
        ++m_added;
        numbers.push_back(number);
    }
    return numbers;
}

void MeasureItems::forget(std::size_t i) {
    if (i >= m_given.size())
        m_fed.erase(i);
}

} // namespace tilescope
