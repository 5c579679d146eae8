#include "analysis/devicecompare.h"

#include "base/error.h"
#include "base/textformat.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

namespace tilescope {

namespace {

// The parameter names a side's Ok results carry, in the order of its first result.
std::vector<std::string> parameterNames(const CompareSide& side) {
    std::vector<std::string> names;
    std::set<std::string> seen;
    for (const ResultRecord& r : side.results)
        for (const auto& [name, value] : r.config)
            if (seen.insert(name).second)
                names.push_back(name);
    return names;
}

// The values a parameter takes among a side's results.
std::set<std::string> valuesOf(const CompareSide& side, const std::string& name) {
    std::set<std::string> values;
    for (const ResultRecord& r : side.results)
        if (const ConfigValue* it = r.config.find(name))
            values.insert(it->json());
    return values;
}

// A number's text without the difference between 128 and 128.0, so both sides' values match.
std::string valueKey(const ConfigValue& v) {
    if (v.isNumber()) {
        const double d = v.asNumber();
        if (std::isfinite(d) && d == std::floor(d) && std::abs(d) < 9e15)
            return std::to_string(static_cast<long long>(d));
        char buf[40];
        std::snprintf(buf, sizeof buf, "%.17g", d);
        return buf;
    }
    if (v.isBool())
        return v.asBool() ? "1" : "0";
    return v.json();
}

struct Reduced {
    ConfigValues config;
    double time = 0;
};

// Each side's best time per config of the shared parameters.
std::unordered_map<std::string, Reduced> reduce(const CompareSide& side, const std::vector<std::string>& shared) {
    std::unordered_map<std::string, Reduced> out;
    for (const ResultRecord& r : side.results) {
        if (!r.ok() || !(r.timeMs() > 0) || !std::isfinite(r.timeMs()))
            continue;
        ConfigValues config;
        std::string key;
        bool complete = true;
        for (const std::string& name : shared) {
            const ConfigValue* it = r.config.find(name);
            if (!it) {
                complete = false;
                break;
            }
            config[name] = *it;
            key += valueKey(*it) + ",";
        }
        if (!complete)
            continue;
        auto [it, added] = out.try_emplace(key, Reduced{config, r.timeMs()});
        if (!added && r.timeMs() < it->second.time)
            it->second.time = r.timeMs();
    }
    return out;
}

std::vector<double> averageRanks(const std::vector<double>& v) {
    std::vector<std::size_t> order(v.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
    std::vector<double> ranks(v.size());
    for (std::size_t i = 0; i < order.size();) {
        std::size_t j = i;
        while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]])
            ++j;
        const double rank = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
        for (std::size_t k = i; k <= j; ++k)
            ranks[order[k]] = rank;
        i = j + 1;
    }
    return ranks;
}

std::string sizeText(const SessionInfo& info) {
    const std::string label = info.shapeLabel();
    return label.empty() ? "unknown" : label;
}

} // namespace

double spearmanCorrelation(const std::vector<double>& x, const std::vector<double>& y) {
    const std::size_t n = std::min(x.size(), y.size());
    if (n < 3)
        return std::numeric_limits<double>::quiet_NaN();
    const std::vector<double> rx = averageRanks(std::vector<double>(x.begin(), x.begin() + static_cast<long>(n)));
    const std::vector<double> ry = averageRanks(std::vector<double>(y.begin(), y.begin() + static_cast<long>(n)));
    // Pearson's correlation of the ranks (exact with ties).
    const double mean = (static_cast<double>(n) + 1) / 2;
    double sxy = 0;
    double sxx = 0;
    double syy = 0;
    for (std::size_t i = 0; i < n; ++i) {
        sxy += (rx[i] - mean) * (ry[i] - mean);
        sxx += (rx[i] - mean) * (rx[i] - mean);
        syy += (ry[i] - mean) * (ry[i] - mean);
    }
    if (sxx == 0 || syy == 0)
        return std::numeric_limits<double>::quiet_NaN();
    return sxy / std::sqrt(sxx * syy);
}

DeviceComparison compareSides(const CompareSide& a, const CompareSide& b, std::size_t topK) {
    DeviceComparison c;
    c.labelA = a.label;
    c.labelB = b.label;
    const std::vector<std::string> namesA = parameterNames(a);
    const std::vector<std::string> namesB = parameterNames(b);
    const std::set<std::string> setB(namesB.begin(), namesB.end());
    const std::set<std::string> setA(namesA.begin(), namesA.end());
    for (const std::string& n : namesA)
        if (setB.count(n))
            c.shared.push_back(n);
    const auto noteOnly = [&](const CompareSide& side, const std::vector<std::string>& names,
                              const std::set<std::string>& other, const char* which) {
        for (const std::string& n : names) {
            if (other.count(n))
                continue;
            const std::set<std::string> values = valuesOf(side, n);
            c.leftOut.push_back(n + " (only " + which + "; " +
                                (values.size() == 1 ? "always " + *values.begin()
                                                    : std::to_string(values.size()) + " values, its best taken") +
                                ")");
        }
    };
    noteOnly(a, namesA, setB, "A");
    noteOnly(b, namesB, setA, "B");
    if (c.shared.empty())
        throw InputError(b.label, {},
                         "shares no tuning parameter with " + a.label +
                             ": are they results of the same kernel? (A has " + std::to_string(namesA.size()) +
                             " parameters, B " + std::to_string(namesB.size()) + ")");

    const auto ra = reduce(a, c.shared);
    const auto rb = reduce(b, c.shared);
    c.okA = ra.size();
    c.okB = rb.size();
    for (const auto& [key, x] : ra) {
        const auto it = rb.find(key);
        if (it == rb.end())
            continue;
        ComparedConfig cc;
        cc.config = x.config;
        cc.timeA = x.time;
        cc.timeB = it->second.time;
        cc.ratio = cc.timeB / cc.timeA;
        c.configs.push_back(std::move(cc));
    }
    if (c.configs.empty())
        throw InputError(b.label, {},
                         "no config ran correctly on both sides (" + std::to_string(c.okA) + " ok on A, " +
                             std::to_string(c.okB) + " ok on B, matched on " + std::to_string(c.shared.size()) +
                             " parameters)");
    std::sort(c.configs.begin(), c.configs.end(), [](const ComparedConfig& x, const ComparedConfig& y) {
        return x.timeA != y.timeA ? x.timeA < y.timeA : configKey(x.config) < configKey(y.config);
    });
    std::vector<double> ta;
    std::vector<double> tb;
    std::vector<double> ratios;
    for (const ComparedConfig& x : c.configs) {
        ta.push_back(x.timeA);
        tb.push_back(x.timeB);
        ratios.push_back(x.ratio);
    }
    const std::vector<double> rankA = averageRanks(ta);
    const std::vector<double> rankB = averageRanks(tb);
    for (std::size_t i = 0; i < c.configs.size(); ++i) {
        c.configs[i].rankA = rankA[i];
        c.configs[i].rankB = rankB[i];
    }
    c.spearman = spearmanCorrelation(ta, tb);
    std::vector<double> sorted = ratios;
    std::sort(sorted.begin(), sorted.end());
    c.minRatio = sorted.front();
    c.maxRatio = sorted.back();
    c.medianRatio =
        sorted.size() % 2 ? sorted[sorted.size() / 2] : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;

    const std::size_t bestA = 0; // sorted by timeA
    const std::size_t bestB = static_cast<std::size_t>(std::min_element(tb.begin(), tb.end()) - tb.begin());
    c.aOnB = WinnerTransfer{c.configs[bestA].config, tb[bestA], tb[bestB], rankB[bestA]};
    c.bOnA = WinnerTransfer{c.configs[bestB].config, ta[bestB], ta[bestA], rankA[bestB]};

    c.topK = std::min(topK, c.configs.size());
    for (std::size_t i = 0; i < c.configs.size(); ++i)
        if (c.configs[i].rankA <= static_cast<double>(c.topK) && c.configs[i].rankB <= static_cast<double>(c.topK))
            ++c.topOverlap;

    const std::string sa = sizeText(a.info);
    const std::string sb = sizeText(b.info);
    if (sa != sb)
        c.sizeNote = "the sessions measured different problem sizes (A: " + sa + ", B: " + sb +
                     "): the ratios mix the GPUs with the sizes";
    return c;
}

std::vector<std::string> comparisonSentences(const DeviceComparison& c) {
    std::vector<std::string> lines;
    char buf[400];
    const std::string shared = joined(c.shared);
    std::snprintf(buf, sizeof buf, "%zu configs ran on both (%zu ok on A, %zu on B), matched on %s", c.configs.size(),
                  c.okA, c.okB, shared.c_str());
    lines.emplace_back(buf);
    if (!c.leftOut.empty()) {
        std::string left;
        for (const std::string& s : c.leftOut)
            left += (left.empty() ? "" : "; ") + s;
        lines.push_back("left out: " + left);
    }
    if (!c.sizeNote.empty())
        lines.push_back("note: " + c.sizeNote);
    std::snprintf(buf, sizeof buf, "time on B / time on A: median %.3gx (from %.3gx to %.3gx)", c.medianRatio,
                  c.minRatio, c.maxRatio);
    lines.emplace_back(buf);
    if (std::isnan(c.spearman))
        lines.emplace_back("rank correlation: not defined (fewer than 3 configs, or one side's times all equal)");
    else {
        const double r = c.spearman;
        const char* words = r >= 0.9   ? "the two orders agree"
                            : r >= 0.6 ? "the orders mostly agree"
                            : r >= 0.3 ? "the orders agree only loosely"
                                       : "the orders do not carry over";
        std::snprintf(buf, sizeof buf, "rank correlation (Spearman): %.2f, %s; %zu of the top %zu are in both", r,
                      words, c.topOverlap, c.topK);
        lines.emplace_back(buf);
    }
    const auto transfer = [&](const std::optional<WinnerTransfer>& t, const char* from, const char* to) {
        if (!t)
            return;
        if (t->loss() <= 0) {
            std::snprintf(buf, sizeof buf, "%s's winner (%s) is %s's winner too", from,
                          describeConfig(t->config).c_str(), to);
        } else {
            std::snprintf(buf, sizeof buf,
                          "%s's winner (%s) runs %.4g ms on %s, %s slower than %s's best (rank %.0f of %zu)", from,
                          describeConfig(t->config).c_str(), t->timeThere, to, formatPercent(t->loss(), 1).c_str(), to,
                          t->rankThere, c.configs.size());
        }
        lines.emplace_back(buf);
    };
    transfer(c.aOnB, "A", "B");
    transfer(c.bOnA, "B", "A");
    return lines;
}

} // namespace tilescope
