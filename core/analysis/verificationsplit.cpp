#include "analysis/verificationsplit.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <string>

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

namespace {

double metricOf(const ResultRecord& r, const char* name) {
    for (const Metric& m : r.measurement.metrics)
        if (m.name == name)
            return m.value;
    return 0;
}

std::string configsText(std::size_t n) {
    return std::to_string(n) + (n == 1 ? " config" : " configs");
}

// "BLOCK=64, ITEMS=2: argument 'out': ..." for people.
std::string example(const ResultRecord& r) {
    return describeConfig(r.config) + ": " + r.measurement.message;
}

// What is wrong with wrong results, in the order of the checks: unwritten, NaN or Inf, values.
std::string kindsOfWrong(const std::vector<const ResultRecord*>& wrong) {
    std::vector<const ResultRecord*> unwritten, nonFinite, values;
    for (const ResultRecord* r : wrong) {
        if (metricOf(*r, kVerifyUnwritten) > 0)
            unwritten.push_back(r);
        else if (metricOf(*r, kVerifyNonFinite) > 0)
            nonFinite.push_back(r);
        else
            values.push_back(r);
    }
    std::string out;
    auto add = [&](const std::vector<const ResultRecord*>& group, const char* what) {
        if (group.empty())
            return;
        out += (out.empty() ? "" : "; ") + std::to_string(group.size()) + " " + what + " (" + example(*group.front()) +
               ")";
    };
    add(unwritten, "leave elements unwritten that the reference config writes");
    add(nonFinite, "hold NaN or Inf where the reference config's outputs are finite");
    add(values, "differ from the reference config's outputs beyond the tolerance");
    return out;
}

} // namespace

std::string splitObstacle(const std::vector<ResultRecord>& results, const VerificationSplit& split) {
    std::vector<const ResultRecord*> unwritten, nonFinite;
    for (const ResultRecord& r : results) {
        if (r.status() != ResultStatus::WrongResult || !r.config.find(split.parameter))
            continue;
        if (metricOf(r, kVerifyUnwritten) > 0)
            unwritten.push_back(&r);
        else if (metricOf(r, kVerifyNonFinite) > 0)
            nonFinite.push_back(&r);
    }
    std::string out;
    if (!unwritten.empty())
        out = std::to_string(unwritten.size()) + " of the " + std::to_string(split.differing) +
              " configs that differ leave elements unwritten that the reference config writes (" +
              example(*unwritten.front()) + ")";
    if (!nonFinite.empty())
        out += (out.empty() ? "" : "; ") + std::to_string(nonFinite.size()) + " of the " +
               std::to_string(split.differing) + " configs that differ hold NaN or Inf where the reference " +
               "config's outputs are finite (" + example(*nonFinite.front()) + ")";
    return out;
}

std::string describeVerification(const std::vector<ResultRecord>& results, const std::vector<VerificationSplit>& splits,
                                 const WithinGroupsCheck* within) {
    std::vector<const ResultRecord*> wrong;
    for (const ResultRecord& r : results)
        if (r.status() == ResultStatus::WrongResult)
            wrong.push_back(&r);
    if (wrong.empty())
        return {};
    if (splits.empty())
        return configsText(wrong.size()) + " computed wrong results: " + kindsOfWrong(wrong);

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
    const std::string declare = "\"Tilescope\": {\"VerifyWithin\": [\"" + s.parameter + "\"]}";
    if (const std::string obstacle = splitObstacle(results, s); !obstacle.empty())
        return out + "; but " + obstacle + ": the kernel is wrong for those configs, not only different by " +
               s.parameter;
    if (!within || within->verified == 0)
        return out + "; the outputs may depend on " + s.parameter +
               " (a partial result per block, a layout, time steps per launch): verify each config against the "
               "first config with its value of " +
               s.parameter + " (" + declare + " in the problem), or give the expected outputs as ReferenceArguments";
    if (within->agree < within->verified)
        return out + "; verified again within the groups of " + s.parameter +
               " (each against the first config with its value), " + std::to_string(within->verified - within->agree) +
               " of " + std::to_string(within->verified) + " still differ (" + within->firstDiffering +
               "): the kernel is wrong for those configs, not only "
               "different by " +
               s.parameter;
    return out + "; verified again within the groups of " + s.parameter +
           " (each against the first config with its value), all " + std::to_string(within->verified) +
           " agree with their group: either the kernel's outputs depend on " + s.parameter +
           " (a partial result per block, a layout, time steps per launch), or it is wrong for the other values of " +
           s.parameter + " the same way every time. They stay wrong_result until the problem says which: " + declare +
           " where the outputs depend on " + s.parameter +
           " (configs of different values then compute different things: the objective must count the work " +
           s.parameter +
           " changes, work per time, not time, for them to rank against each other), or the expected "
           "outputs as ReferenceArguments";
}

std::string recordedVerdict(const std::string& provenanceJson, const char* key) {
    const nlohmann::json doc = nlohmann::json::parse(provenanceJson, nullptr, false);
    if (!doc.is_object())
        return {};
    const auto it = doc.find(key);
    return it != doc.end() && it->is_string() ? it->get<std::string>() : std::string();
}

} // namespace tilescope
