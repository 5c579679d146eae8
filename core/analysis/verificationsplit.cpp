#include "analysis/verificationsplit.h"

#include <algorithm>
#include <map>

namespace tilescope {

std::vector<VerificationSplit> verificationSplits(const std::vector<ResultRecord>& results, std::size_t minEach) {
    std::vector<VerificationSplit> splits;
    std::vector<std::string> names; // every parameter the configs name, first seen first
    std::size_t matching = 0;
    std::size_t differing = 0;
    for (const ResultRecord& r : results) {
        const ResultStatus s = r.status();
        if (s != ResultStatus::Ok && s != ResultStatus::WrongResult)
            continue;
        (s == ResultStatus::Ok ? matching : differing) += 1;
        for (const auto& [name, value] : r.config)
            if (std::find(names.begin(), names.end(), name) == names.end())
                names.push_back(name);
    }
    if (differing < std::max<std::size_t>(1, minEach) || matching < std::max<std::size_t>(1, minEach))
        return splits;
    for (const std::string& name : names) {
        // Per value, in order of first appearance: configs that match, configs that do not.
        std::vector<std::string> order;
        std::map<std::string, std::pair<std::size_t, std::size_t>> byValue;
        bool every = true;
        for (const ResultRecord& r : results) {
            const ResultStatus s = r.status();
            if (s != ResultStatus::Ok && s != ResultStatus::WrongResult)
                continue;
            const ConfigValue* it = r.config.find(name);
            if (!it) {
                every = false;
                break;
            }
            const std::string text = it->plain();
            auto [slot, inserted] = byValue.try_emplace(text);
            if (inserted)
                order.push_back(text);
            (s == ResultStatus::Ok ? slot->second.first : slot->second.second) += 1;
        }
        if (!every || byValue.size() < 2)
            continue;
        VerificationSplit split;
        split.parameter = name;
        bool pure = true;
        for (const std::string& value : order) {
            const auto [ok, wrong] = byValue[value];
            if (ok > 0 && wrong > 0) {
                pure = false;
                break;
            }
            if (ok > 0)
                split.matchingValues.push_back(value);
            split.matching += ok;
            split.differing += wrong;
        }
        if (pure && split.matching >= minEach && split.differing >= minEach)
            splits.push_back(std::move(split));
    }
    return splits;
}

std::string describeVerificationSplits(const std::vector<VerificationSplit>& splits) {
    if (splits.empty())
        return {};
    const VerificationSplit& s = splits.front();
    std::string values;
    for (std::size_t i = 0; i < s.matchingValues.size(); ++i)
        values += (i == 0 ? "" : i + 1 == s.matchingValues.size() ? " or " : ", ") + s.matchingValues[i];
    std::string out = std::to_string(s.matching) + (s.matching == 1 ? " config matches" : " configs match") +
                      " the reference and " + std::to_string(s.differing) + " do not, split by " + s.parameter +
                      ": every config with " + s.parameter + " = " + values + " matches, every other does not";
    if (splits.size() > 1) {
        std::string others;
        for (std::size_t i = 1; i < splits.size(); ++i)
            others += (i == 1 ? "" : ", ") + splits[i].parameter;
        out += " (" + others + " split them the same way: the configs measured cannot tell these apart)";
    }
    out += "; so the kernel's outputs depend on " + s.parameter +
           " (a partial result per block, a layout it chooses), and comparing them with one config's outputs "
           "cannot verify it: give the expected outputs as ReferenceArguments in the problem, or tune with "
           "--no-verify";
    return out;
}

} // namespace tilescope
