#include "exchange/triton.h"

#include "base/textformat.h"
#include "exchange/bestconfigs.h"
#include "exchange/cppheader.h"
#include "model/configjson.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

namespace tilescope {

using Json = nlohmann::ordered_json;

namespace {

std::string pythonLiteral(const Json& v) {
    if (v.is_boolean())
        return v.get<bool>() ? "True" : "False";
    if (v.is_null())
        return "None";
    if (v.is_array()) {
        std::string out = "[";
        for (std::size_t i = 0; i < v.size(); ++i)
            out += (i ? ", " : "") + pythonLiteral(v[i]);
        return out + "]";
    }
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (std::isnan(d))
            return "float('nan')";
        if (std::isinf(d))
            return d > 0 ? "float('inf')" : "float('-inf')";
    }
    return v.dump(); // ints, floats (shortest round-trip form), strings (JSON escapes are Python's too)
}

std::string lower(std::string s) {
    for (char& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

bool isWarpsName(const std::string& name) {
    const std::string l = lower(name);
    return l == "num_warps" || l == "warps" || l == "nwarps" || l == "n_warps";
}

bool isStagesName(const std::string& name) {
    const std::string l = lower(name);
    return l == "num_stages" || l == "stages" || l == "nstages" || l == "n_stages";
}

// Triton's other compile options, keyword arguments of triton.Config by these names.
bool isConfigOption(const std::string& name) {
    return name == "num_ctas" || name == "maxnreg";
}

} // namespace

std::string tritonConfigExpression(const ConfigValues& config) {
    std::string kwargs, extra;
    for (const auto& [name, value] : config) {
        if (isWarpsName(name))
            extra += ", num_warps=" + pythonLiteral(toJson(value));
        else if (isStagesName(name))
            extra += ", num_stages=" + pythonLiteral(toJson(value));
        else if (isConfigOption(name))
            extra += ", " + name + "=" + pythonLiteral(toJson(value));
        else
            kwargs += (kwargs.empty() ? "" : ", ") + jsonString(name) + ": " + pythonLiteral(toJson(value));
    }
    return "triton.Config({" + kwargs + "}" + extra + ")";
}

std::string pythonValue(const ConfigValue& value) {
    return pythonLiteral(toJson(value));
}

std::string writeTritonConfigs(const std::vector<SessionData>& sessions, std::size_t topK, StaticRank by) {
    // kernel -> (shape, device) -> results of every session of that key
    std::map<std::string, std::map<std::pair<std::string, std::string>, std::vector<const ResultRecord*>>> groups;
    std::map<std::string, std::string> objectiveOf;
    std::map<std::string, std::vector<std::string>> keyOf; // kernel -> its shapes' dim names, first seen first
    for (const SessionData& s : sessions) {
        std::vector<std::string>& key = keyOf[s.info.kernel];
        for (const auto& [dim, value] : s.info.shape)
            if (std::find(key.begin(), key.end(), dim) == key.end())
                key.push_back(dim);
        // A session of no device (the analysis backend's) is told apart by its arch.
        auto& group =
            groups[s.info.kernel][{s.info.shapeLabel(), s.info.deviceName.empty() ? s.info.arch : s.info.deviceName}];
        for (const ResultRecord& r : s.results)
            if (r.mayWin())
                group.push_back(&r);
        if (!s.info.objectiveName.empty())
            objectiveOf[s.info.kernel] = s.info.objectiveName;
    }
    std::string out;
    out += "# Tuned configs for triton.autotune, exported by Tilescope " + std::string(TILESCOPE_VERSION) + ".\n";
    out += "# Per kernel: the " + std::to_string(topK) +
           " best configs of every (shape, device), best first, without repeats.\n";
    out += "# The line below is for `tilescope-cli check`: where and from what each best config was tuned.\n";
    out += bestConfigsMetadataLine(bestConfigs(sessions, by), "#");
    out += "import triton\n";
    std::vector<std::string> names;
    for (auto& [kernel, byKey] : groups) {
        const std::string var = cppIdentifier(kernel, "kernel") + "_configs";
        names.push_back(var);
        out += "\n" + var + " = [\n";
        std::set<std::string> seen;
        for (auto& [key, results] : byKey) {
            std::stable_sort(results.begin(), results.end(),
                             [by](const ResultRecord* a, const ResultRecord* b) { return ranksBefore(*a, *b, by); });
            const std::string where = (key.first.empty() ? std::string("one shape") : key.first) +
                                      (key.second.empty() ? "" : " on " + key.second);
            out += "    # " + where + "\n";
            std::size_t taken = 0;
            // Several sessions of one (shape, device) measure the same config more than once:
            // its best-ranked result stands for it and the others take no place in the top k.
            std::set<std::string> inKey;
            for (const ResultRecord* r : results) {
                if (taken == topK)
                    break;
                const std::string id = configKey(r->config);
                if (!inKey.insert(id).second)
                    continue;
                ++taken;
                std::string note = r->ranksStatically() ? "analysed, not timed: " + describeStatic(*r, by)
                                                        : formatDouble("%.4f", r->timeMs()) + " ms";
                if (r->measurement.time.hasInterval())
                    note += " (95 %: " + formatDouble("%.4f", r->measurement.time.ciLowMs) + "-" +
                            formatDouble("%.4f", r->measurement.time.ciHighMs) + ")";
                if (r->objective && objectiveOf.count(kernel))
                    note += ", " + formatDouble("%.2f", *r->objective) + " " + objectiveOf[kernel];
                for (const Metric& m : r->measurement.metrics)
                    if (m.name == kEnergyMetric)
                        note += ", " + formatDouble("%.4g", m.value) + " J";
                if (!seen.insert(id).second) {
                    out += "    # (listed above) " + describeConfig(r->config) + ": " + note + "\n";
                    continue;
                }
                out += "    " + tritonConfigExpression(r->config) + ",  # " + note + "\n";
            }
        }
        out += "]\n";
        // The decorator the lists are for, keyed as they were tuned: by the shape's dims, which
        // the kernel's arguments of those names carry.
        if (const std::vector<std::string>& key = keyOf[kernel]; !key.empty()) {
            std::string keys;
            for (const std::string& dim : key)
                keys += (keys.empty() ? "" : ", ") + pythonLiteral(Json(dim));
            out += cppIdentifier(kernel, "kernel") + "_autotune = triton.autotune(configs=" + var + ", key=[" + keys +
                   "])\n";
        }
    }
    if (names.size() == 1)
        out += "\nconfigs = " + names.front() + "\n";
    return out;
}

} // namespace tilescope
