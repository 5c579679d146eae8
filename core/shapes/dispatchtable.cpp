#include "shapes/dispatchtable.h"

#include "base/error.h"
#include "base/textformat.h"
#include "exchange/cppheader.h"
#include "exchange/triton.h"
#include "spec/tuningproblem.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>
#include <set>

namespace tilescope {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<std::pair<std::string, std::int64_t>> dimsOf(const SessionInfo& s) {
    if (!s.shape.empty())
        return s.shape;
    std::vector<std::pair<std::string, std::int64_t>> dims;
    for (std::size_t i = 0; i < s.problemSize.size(); ++i)
        dims.emplace_back("problem_size_" + std::to_string(i), s.problemSize[i]);
    return dims;
}

/// Shapes as bits.
class ShapeSet {
public:
    explicit ShapeSet(std::size_t shapes = 0)
        : m_words((shapes + 63) / 64, 0) {}
    void set(std::size_t s) { m_words[s / 64] |= std::uint64_t{1} << (s % 64); }
    bool test(std::size_t s) const { return (m_words[s / 64] >> (s % 64)) & 1u; }
    bool subsetOf(const ShapeSet& o) const {
        for (std::size_t i = 0; i < m_words.size(); ++i)
            if ((m_words[i] & ~o.m_words[i]) != 0)
                return false;
        return true;
    }

private:
    std::vector<std::uint64_t> m_words;
};

/// The search for the smallest cover, with the regrets to break ties.
class CoverSearch {
public:
    CoverSearch(const ShapeConfigMatrix& m, double maxRegret)
        : m_m(m)
        , m_shapes(m.shapes.size()) {
        const std::size_t configs = m.configs.size();
        m_regret.assign(m_shapes, std::vector<double>(configs, kInf));
        for (std::size_t s = 0; s < m_shapes; ++s)
            for (std::size_t c = 0; c < configs; ++c)
                if (const auto r = m.regret(s, c))
                    m_regret[s][c] = *r;
        // Columns that some other column beats everywhere are never needed.
        std::vector<ShapeSet> cover(configs, ShapeSet(m_shapes));
        for (std::size_t c = 0; c < configs; ++c)
            for (std::size_t s = 0; s < m_shapes; ++s)
                if (m_regret[s][c] <= maxRegret + 1e-12)
                    cover[c].set(s);
        for (std::size_t c = 0; c < configs; ++c) {
            bool dominated = false;
            for (std::size_t o = 0; o < configs && !dominated; ++o) {
                if (o == c || !cover[c].subsetOf(cover[o]))
                    continue;
                bool noWorse = true;
                bool better = false;
                for (std::size_t s = 0; s < m_shapes && noWorse; ++s) {
                    noWorse = m_regret[s][o] <= m_regret[s][c];
                    better = better || m_regret[s][o] < m_regret[s][c];
                }
                // Of two equal columns the earlier stays.
                dominated = noWorse && (better || o < c || !cover[o].subsetOf(cover[c]));
            }
            if (!dominated)
                m_columns.push_back(c);
        }
        m_count.assign(configs, 0);
        m_coveredBy.assign(m_shapes, {});
        for (std::size_t c : m_columns)
            for (std::size_t s = 0; s < m_shapes; ++s)
                if (cover[c].test(s)) {
                    m_coveredBy[s].push_back(c);
                    ++m_count[c];
                }
        for (auto& list : m_coveredBy)
            std::sort(list.begin(), list.end(), [&](std::size_t a, std::size_t b) {
                return m_count[a] != m_count[b] ? m_count[a] > m_count[b] : a < b;
            });
        m_cover = std::move(cover);
    }

    DispatchTable run() {
        std::vector<std::size_t> greedy = greedyCover();
        m_best = greedy;
        m_bestScore = score(greedy);
        for (std::size_t k = 1; k < greedy.size() && !m_exhausted; ++k) {
            m_found = false;
            std::vector<std::size_t> chosen;
            search(chosen, k);
            if (m_found)
                break;
        }
        if (!m_exhausted && m_best.size() == greedy.size()) {
            // The greedy size is the smallest: the best tie-break among tables of that size.
            std::vector<std::size_t> chosen;
            search(chosen, greedy.size());
        }
        DispatchTable t = tableOf(m_best);
        t.proven = !m_exhausted;
        return t;
    }

private:
    std::vector<std::size_t> greedyCover() const {
        std::vector<bool> covered(m_shapes, false);
        std::vector<std::size_t> chosen;
        std::size_t left = m_shapes;
        while (left > 0) {
            std::size_t bestColumn = m_columns.front();
            std::size_t bestGain = 0;
            double bestSum = kInf;
            for (std::size_t c : m_columns) {
                std::size_t gain = 0;
                double sum = 0;
                for (std::size_t s = 0; s < m_shapes; ++s) {
                    if (!covered[s] && isCovered(s, c)) {
                        ++gain;
                        sum += m_regret[s][c];
                    }
                }
                if (gain > bestGain || (gain == bestGain && gain > 0 && sum < bestSum)) {
                    bestColumn = c;
                    bestGain = gain;
                    bestSum = sum;
                }
            }
            chosen.push_back(bestColumn);
            for (std::size_t s = 0; s < m_shapes; ++s) {
                if (!covered[s] && isCovered(s, bestColumn)) {
                    covered[s] = true;
                    --left;
                }
            }
        }
        return chosen;
    }

    bool isCovered(std::size_t s, std::size_t c) const { return m_cover[c].test(s); }

    std::pair<double, double> score(const std::vector<std::size_t>& chosen) const {
        double worst = 0;
        double sum = 0;
        for (std::size_t s = 0; s < m_shapes; ++s) {
            double r = kInf;
            for (std::size_t c : chosen)
                r = std::min(r, m_regret[s][c]);
            worst = std::max(worst, r);
            sum += r;
        }
        return {worst, sum};
    }

    void search(std::vector<std::size_t>& chosen, std::size_t k) {
        if (++m_nodes > kNodeLimit) {
            m_exhausted = true;
            return;
        }
        // The uncovered shape with the fewest columns that cover it.
        std::size_t pick = m_shapes;
        for (std::size_t s = 0; s < m_shapes; ++s) {
            const bool done = std::any_of(chosen.begin(), chosen.end(), [&](std::size_t c) { return isCovered(s, c); });
            if (!done && (pick == m_shapes || m_coveredBy[s].size() < m_coveredBy[pick].size()))
                pick = s;
        }
        if (pick == m_shapes) {
            const auto sc = score(chosen);
            if (chosen.size() < m_best.size() || (chosen.size() == m_best.size() && sc < m_bestScore)) {
                m_best = chosen;
                m_bestScore = sc;
            }
            m_found = true;
            return;
        }
        if (chosen.size() >= k)
            return;
        for (std::size_t c : m_coveredBy[pick]) {
            chosen.push_back(c);
            search(chosen, k);
            chosen.pop_back();
            if (m_exhausted)
                return;
        }
    }

    DispatchTable tableOf(const std::vector<std::size_t>& entries) const {
        DispatchTable t;
        t.entries = entries;
        double sum = 0;
        for (std::size_t s = 0; s < m_shapes; ++s) {
            std::size_t best = 0;
            double bestMs = kInf;
            for (std::size_t e = 0; e < entries.size(); ++e) {
                const auto ms = m_m.ms[s][entries[e]];
                if (ms && *ms < bestMs) {
                    bestMs = *ms;
                    best = e;
                }
            }
            const double r = bestMs / m_m.bestMs(s) - 1.0;
            t.choice.push_back(best);
            t.regret.push_back(r);
            t.worstRegret = std::max(t.worstRegret, r);
            sum += r;
        }
        t.meanRegret = m_shapes ? sum / static_cast<double>(m_shapes) : 0.0;
        return t;
    }

    static constexpr std::uint64_t kNodeLimit = 2'000'000;
    const ShapeConfigMatrix& m_m;
    std::size_t m_shapes;
    std::vector<std::vector<double>> m_regret;
    std::vector<std::size_t> m_columns;
    std::vector<ShapeSet> m_cover;                     // per config: the shapes it runs within the bound
    std::vector<std::size_t> m_count;                  // per config: how many
    std::vector<std::vector<std::size_t>> m_coveredBy; // per shape: the columns that cover it
    std::vector<std::size_t> m_best;
    std::pair<double, double> m_bestScore{kInf, kInf};
    std::uint64_t m_nodes = 0;
    bool m_exhausted = false;
    bool m_found = false;
};

} // namespace

std::string ShapeConfigMatrix::shapeLabel(std::size_t shape) const {
    std::string out;
    for (std::size_t d = 0; d < dimNames.size(); ++d)
        out += (d ? " " : "") + dimNames[d] + "=" + std::to_string(shapes[shape][d]);
    return out;
}

double ShapeConfigMatrix::bestMs(std::size_t shape) const {
    double best = kInf;
    for (const auto& cell : ms[shape])
        if (cell)
            best = std::min(best, *cell);
    return best;
}

std::optional<double> ShapeConfigMatrix::regret(std::size_t shape, std::size_t config) const {
    const auto& cell = ms[shape][config];
    if (!cell)
        return std::nullopt;
    return *cell / bestMs(shape) - 1.0;
}

std::size_t ShapeConfigMatrix::measuredCells() const {
    std::size_t n = 0;
    for (const auto& row : ms)
        n += static_cast<std::size_t>(
            std::count_if(row.begin(), row.end(), [](const auto& c) { return c.has_value(); }));
    return n;
}

ShapeConfigMatrix buildShapeConfigMatrix(const std::vector<SessionData>& sessions, const std::string& kernel,
                                         const std::string& source) {
    std::set<std::string> kernels;
    for (const SessionData& s : sessions)
        if (!s.results.empty())
            kernels.insert(s.info.kernel);
    if (kernel.empty() && kernels.size() > 1)
        throw InputError(source, "", "the recording holds the kernels " + joined(kernels) + "; name one with --kernel");
    const std::string chosen = kernel.empty() ? (kernels.empty() ? std::string() : *kernels.begin()) : kernel;
    if (!kernel.empty() && !kernels.count(kernel))
        throw InputError(source, "",
                         "no session of kernel '" + kernel + "' with results" +
                             (kernels.empty() ? std::string() : " (the recording holds " + joined(kernels) + ")"));
    ShapeConfigMatrix m;
    m.kernel = chosen;
    std::map<std::vector<std::int64_t>, std::size_t> shapeRow;
    std::map<std::string, std::size_t> configColumn;
    std::vector<std::map<std::size_t, double>> cells;
    bool named = false;
    for (const SessionData& s : sessions) {
        if (s.info.kernel != chosen || s.results.empty())
            continue;
        const auto dims = dimsOf(s.info);
        std::vector<std::string> names;
        std::vector<std::int64_t> values;
        for (const auto& [name, value] : dims) {
            names.push_back(name);
            values.push_back(value);
        }
        if (!named) {
            m.dimNames = names;
            named = true;
        } else if (names != m.dimNames) {
            throw InputError(source, "",
                             "session " + std::to_string(s.info.id) + "'s shape has the dims " + joined(names) +
                                 ", another's " + joined(m.dimNames) + ": a shape set needs the same names");
        }
        for (const ResultRecord& r : s.results) {
            if (!r.ok() || !(r.timeMs() > 0))
                continue;
            auto [row, freshRow] = shapeRow.emplace(values, m.shapes.size());
            if (freshRow) {
                m.shapes.push_back(values);
                cells.emplace_back();
            }
            const std::string key = configJson(r.config);
            auto [column, freshColumn] = configColumn.emplace(key, m.configs.size());
            if (freshColumn)
                m.configs.push_back(r.config);
            auto [cell, freshCell] = cells[row->second].emplace(column->second, r.timeMs());
            if (!freshCell)
                cell->second = std::min(cell->second, r.timeMs());
        }
    }
    if (m.shapes.empty())
        throw InputError(source, "", "no config of kernel '" + chosen + "' ran correctly: there is no table to make");
    // Rows in the order of their dims (the smallest shape first), for tables people read.
    std::vector<std::size_t> order(m.shapes.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return m.shapes[a] < m.shapes[b]; });
    std::vector<std::vector<std::int64_t>> shapes;
    for (std::size_t row : order) {
        shapes.push_back(m.shapes[row]);
        std::vector<std::optional<double>> line(m.configs.size());
        for (const auto& [column, ms] : cells[row])
            line[column] = ms;
        m.ms.push_back(std::move(line));
    }
    m.shapes = std::move(shapes);
    return m;
}

std::vector<ShapeSpread> shapeSpreads(const std::vector<SessionData>& sessions, const ShapeConfigMatrix& matrix) {
    // Per shape row, per config: the lowest median and its relative spread.
    std::vector<std::map<std::string, std::pair<double, double>>> cells(matrix.shapes.size());
    for (const SessionData& s : sessions) {
        if (s.info.kernel != matrix.kernel)
            continue;
        std::vector<std::int64_t> values;
        for (const auto& [name, value] : dimsOf(s.info))
            values.push_back(value);
        const auto row = std::find(matrix.shapes.begin(), matrix.shapes.end(), values);
        if (row == matrix.shapes.end())
            continue;
        auto& byConfig = cells[static_cast<std::size_t>(row - matrix.shapes.begin())];
        for (const ResultRecord& r : s.results) {
            if (!r.ok() || !(r.timeMs() > 0))
                continue;
            const double spread = r.measurement.time.stdevMs > 0 ? r.measurement.time.stdevMs / r.timeMs() : 0.005;
            auto [it, fresh] = byConfig.emplace(configJson(r.config), std::make_pair(r.timeMs(), spread));
            if (!fresh && r.timeMs() < it->second.first)
                it->second = {r.timeMs(), spread};
        }
    }
    std::vector<ShapeSpread> out;
    for (const auto& byConfig : cells) {
        std::vector<std::pair<double, double>> cellsOfShape;
        for (const auto& [key, cell] : byConfig)
            cellsOfShape.push_back(cell);
        out.push_back(spreadOf(cellsOfShape));
    }
    return out;
}

std::vector<ShapeRegime> shapeRegimes(const std::vector<SessionData>& sessions, const ShapeConfigMatrix& matrix) {
    const std::vector<ShapeSpread> spreads = shapeSpreads(sessions, matrix);
    std::vector<ShapeRegime> out(matrix.shapes.size());
    for (std::size_t row = 0; row < matrix.shapes.size(); ++row) {
        ShapeRegime& regime = out[row];
        regime.spread = spreads[row];
        // The best config at this shape, and a session of this shape that recorded its problem.
        std::optional<std::size_t> best;
        for (std::size_t c = 0; c < matrix.configs.size(); ++c)
            if (matrix.ms[row][c] && (!best || *matrix.ms[row][c] < *matrix.ms[row][*best]))
                best = c;
        for (const SessionData& s : sessions) {
            if (s.info.kernel != matrix.kernel || s.info.problemJson.empty() || !s.info.shapeIndex)
                continue;
            std::vector<std::int64_t> values;
            for (const auto& [name, value] : dimsOf(s.info))
                values.push_back(value);
            if (values != matrix.shapes[row])
                continue;
            try {
                const TuningProblem problem = TuningProblem::parse(s.info.problemJson, s.info.kernel + ".json", {});
                regime.roofline =
                    rooflineOf(problem, static_cast<std::size_t>(*s.info.shapeIndex),
                               best ? matrix.configs[*best] : ConfigValues{}, s.info.provenanceJson, s.info.arch);
                break;
            } catch (const InputError&) {
                continue; // a recorded problem this version cannot read: try another session
            }
        }
        regime.verdict = regimeVerdict(regime.spread, regime.roofline);
    }
    return out;
}

DispatchTable planWithinRegret(const ShapeConfigMatrix& matrix, double maxRegret) {
    if (matrix.shapes.empty())
        return {};
    return CoverSearch(matrix, std::max(0.0, maxRegret)).run();
}

DispatchTable planWithEntries(const ShapeConfigMatrix& matrix, std::size_t maxEntries) {
    maxEntries = std::max<std::size_t>(1, maxEntries);
    std::vector<double> bounds{0.0};
    for (std::size_t s = 0; s < matrix.shapes.size(); ++s)
        for (std::size_t c = 0; c < matrix.configs.size(); ++c)
            if (const auto r = matrix.regret(s, c))
                bounds.push_back(*r);
    std::sort(bounds.begin(), bounds.end());
    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
    // The table's size falls as the bound grows: the smallest bound that fits.
    std::size_t lo = 0;
    std::size_t hi = bounds.size() - 1;
    DispatchTable best = planWithinRegret(matrix, bounds[hi]);
    while (lo < hi) {
        const std::size_t mid = (lo + hi) / 2;
        DispatchTable t = planWithinRegret(matrix, bounds[mid]);
        if (t.entries.size() <= maxEntries) {
            best = std::move(t);
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return best; // more than maxEntries only when no such table gives every shape a measured config
}

double shapeDistance(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
    double distance = 0;
    for (std::size_t d = 0; d < a.size() && d < b.size(); ++d)
        distance += std::fabs(std::log2(static_cast<double>(std::max<std::int64_t>(1, a[d]))) -
                              std::log2(static_cast<double>(std::max<std::int64_t>(1, b[d]))));
    return distance;
}

std::size_t nearestShape(const ShapeConfigMatrix& matrix, const std::vector<std::int64_t>& dims) {
    std::size_t nearest = 0;
    double bestDistance = kInf;
    for (std::size_t s = 0; s < matrix.shapes.size(); ++s) {
        const double distance = shapeDistance(dims, matrix.shapes[s]);
        if (distance < bestDistance) {
            bestDistance = distance;
            nearest = s;
        }
    }
    return nearest;
}

namespace {

std::int64_t roundUpPow2(std::int64_t v) {
    std::int64_t p = 1;
    while (p < v && p < (std::int64_t{1} << 62))
        p <<= 1;
    return p;
}

double volume(const std::vector<std::int64_t>& dims) {
    double v = 1;
    for (std::int64_t d : dims)
        v *= static_cast<double>(std::max<std::int64_t>(1, d));
    return v;
}

bool holds(const std::vector<std::int64_t>& bucket, const std::vector<std::int64_t>& shape) {
    for (std::size_t d = 0; d < shape.size(); ++d)
        if (bucket[d] < shape[d])
            return false;
    return true;
}

/// Each seen shape's bucket (the smallest volume that holds it) and the plan's padding; false
/// when some shape fits none.
bool assign(const std::vector<ShapeCount>& seen, BucketPlan& plan) {
    plan.bucketOf.assign(seen.size(), 0);
    double weighted = 0, total = 0;
    plan.worstPadding = 0;
    for (std::size_t i = 0; i < seen.size(); ++i) {
        double best = kInf;
        for (std::size_t b = 0; b < plan.buckets.size(); ++b) {
            if (!holds(plan.buckets[b], seen[i].dims))
                continue;
            const double v = volume(plan.buckets[b]);
            if (v < best) {
                best = v;
                plan.bucketOf[i] = b;
            }
        }
        if (!std::isfinite(best))
            return false;
        const double pad = best / volume(seen[i].dims) - 1.0;
        weighted += seen[i].count * pad;
        total += seen[i].count;
        if (seen[i].count > 0)
            plan.worstPadding = std::max(plan.worstPadding, pad);
    }
    plan.padding = total > 0 ? weighted / total : 0.0;
    return true;
}

} // namespace

std::pair<std::vector<std::string>, std::vector<ShapeCount>> readShapeDistribution(const std::string& csvText,
                                                                                   const std::string& fileName) {
    std::vector<std::string> names;
    std::vector<ShapeCount> rows;
    std::size_t countColumn = 0;
    bool header = true;
    std::size_t lineNo = 0;
    std::size_t start = 0;
    while (start <= csvText.size()) {
        std::size_t end = csvText.find('\n', start);
        if (end == std::string::npos)
            end = csvText.size();
        std::string line = csvText.substr(start, end - start);
        start = end + 1;
        ++lineNo;
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        if (line.find_first_not_of(" \t") == std::string::npos)
            continue;
        std::vector<std::string> cells;
        std::size_t from = 0;
        while (true) {
            const std::size_t comma = line.find(',', from);
            std::string cell = line.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
            cell.erase(0, cell.find_first_not_of(" \t"));
            cell.erase(cell.find_last_not_of(" \t") + 1);
            cells.push_back(cell);
            if (comma == std::string::npos)
                break;
            from = comma + 1;
        }
        const std::string where = "line " + std::to_string(lineNo);
        if (header) {
            header = false;
            bool found = false;
            for (std::size_t c = 0; c < cells.size(); ++c) {
                if (cells[c] == "count") {
                    countColumn = c;
                    found = true;
                } else {
                    names.push_back(cells[c]);
                }
            }
            if (!found)
                throw InputError(fileName, where, "the header needs a 'count' column beside the dim names");
            if (names.empty())
                throw InputError(fileName, where, "the header names no dims (e.g. M,N,K,count)");
            continue;
        }
        if (cells.size() != names.size() + 1)
            throw InputError(fileName, where,
                             "expected " + std::to_string(names.size() + 1) + " cells, got " +
                                 std::to_string(cells.size()));
        ShapeCount row;
        for (std::size_t c = 0; c < cells.size(); ++c) {
            char* endp = nullptr;
            if (c == countColumn) {
                row.count = std::strtod(cells[c].c_str(), &endp);
                if (cells[c].empty() || *endp != '\0' || !std::isfinite(row.count) || row.count < 0)
                    throw InputError(fileName, where, "count '" + cells[c] + "' is not a number of 0 or more");
            } else {
                const long long v = std::strtoll(cells[c].c_str(), &endp, 10);
                if (cells[c].empty() || *endp != '\0' || v < 1)
                    throw InputError(fileName, where, "'" + cells[c] + "' is not a positive whole number");
                row.dims.push_back(v);
            }
        }
        rows.push_back(std::move(row));
    }
    if (rows.empty())
        throw InputError(fileName, "", "no shapes in the distribution");
    return {names, rows};
}

BucketPlan planBuckets(const std::vector<ShapeCount>& seen, std::size_t maxBuckets) {
    BucketPlan plan;
    if (seen.empty())
        return plan;
    maxBuckets = std::max<std::size_t>(1, maxBuckets);
    const std::size_t dims = seen.front().dims.size();
    // Candidates: each seen shape rounded up to powers of two, and the elementwise largest.
    std::set<std::vector<std::int64_t>> candidateSet;
    std::vector<std::int64_t> largest(dims, 1);
    for (const ShapeCount& s : seen) {
        std::vector<std::int64_t> c;
        for (std::size_t d = 0; d < dims; ++d) {
            c.push_back(roundUpPow2(s.dims[d]));
            largest[d] = std::max(largest[d], c.back());
        }
        candidateSet.insert(c);
    }
    candidateSet.insert(largest);
    const std::vector<std::vector<std::int64_t>> candidates(candidateSet.begin(), candidateSet.end());
    plan.buckets = {largest};
    assign(seen, plan);
    // Greedy: add the bucket that lowers the padding most.
    while (plan.buckets.size() < maxBuckets) {
        BucketPlan best = plan;
        for (const auto& c : candidates) {
            if (std::find(plan.buckets.begin(), plan.buckets.end(), c) != plan.buckets.end())
                continue;
            BucketPlan trial = plan;
            trial.buckets.push_back(c);
            if (assign(seen, trial) && trial.padding < best.padding - 1e-15)
                best = std::move(trial);
        }
        if (best.buckets.size() == plan.buckets.size())
            break;
        plan = std::move(best);
    }
    // Swaps: replace one bucket by a candidate while that lowers the padding.
    for (bool improved = true; improved;) {
        improved = false;
        for (std::size_t b = 0; b < plan.buckets.size() && !improved; ++b) {
            for (const auto& c : candidates) {
                if (std::find(plan.buckets.begin(), plan.buckets.end(), c) != plan.buckets.end())
                    continue;
                BucketPlan trial = plan;
                trial.buckets[b] = c;
                if (assign(seen, trial) && trial.padding < plan.padding - 1e-12) {
                    plan = std::move(trial);
                    improved = true;
                    break;
                }
            }
        }
    }
    // Smallest first.
    std::vector<std::size_t> order(plan.buckets.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return volume(plan.buckets[a]) != volume(plan.buckets[b]) ? volume(plan.buckets[a]) < volume(plan.buckets[b])
                                                                  : plan.buckets[a] < plan.buckets[b];
    });
    std::vector<std::vector<std::int64_t>> sorted;
    for (std::size_t i : order)
        sorted.push_back(plan.buckets[i]);
    plan.buckets = std::move(sorted);
    assign(seen, plan);
    return plan;
}

std::string writeDispatchHeader(const ShapeConfigMatrix& matrix, const DispatchTable& table,
                                const std::string& guardName) {
    std::vector<const ConfigValues*> configs;
    for (std::size_t e : table.entries)
        configs.push_back(&matrix.configs[e]);
    const CppConfigLayout layout(configs);
    const std::string ns = cppIdentifier(guardName, "tilescope_dispatch");
    const std::string kernelNs = cppIdentifier(matrix.kernel, "kernel");
    std::string out;
    out += "// A dispatch table exported by Tilescope " + std::string(TILESCOPE_VERSION) + " for kernel '" +
           matrix.kernel + "':\n";
    out += "// " + std::to_string(table.entries.size()) + " configs for " + std::to_string(matrix.shapes.size()) +
           " tuned shapes, each within " + formatPercent(table.worstRegret, 2) + " of its own best (mean " +
           formatPercent(table.meanRegret, 2) + ").\n";
    out += "// dispatch(dims...) runs any shape with the entry of the nearest tuned shape (the sum over dims\n";
    out += "// of |log2(d) - log2(tuned d)|, ties to the earlier tuned shape). Self-contained C++17.\n";
    out += "#pragma once\n\n#include <cmath>\n#include <cstdlib>\n\n";
    out += "namespace " + ns + " {\nnamespace " + kernelNs + " {\n\n";
    out += layout.structDefinition() + "\n";
    out += "inline constexpr Config kEntries[] = {\n";
    for (std::size_t e : table.entries)
        out += "    " + layout.initializer(matrix.configs[e]) + ",\n";
    out += "};\n\n";
    const std::size_t dims = matrix.dimNames.size();
    out += "inline constexpr int kDims = " + std::to_string(dims) + ";\n";
    out += "inline constexpr const char* kDimNames[] = {";
    for (std::size_t d = 0; d < dims; ++d)
        out += (d ? ", " : "") + jsonString(matrix.dimNames[d]);
    out += "};\n\n";
    out +=
        "struct TunedShape {\n    long long dims[" + std::to_string(std::max<std::size_t>(dims, 1)) +
        "];\n    int entry;     // index in kEntries\n    double regret; // its time / this shape's best - 1\n};\n\n";
    out += "inline constexpr TunedShape kShapes[] = {\n";
    for (std::size_t s = 0; s < matrix.shapes.size(); ++s) {
        out += "    {{";
        for (std::size_t d = 0; d < dims; ++d)
            out += (d ? ", " : "") + std::to_string(matrix.shapes[s][d]) + "LL";
        char regret[32];
        std::snprintf(regret, sizeof regret, "%.6f", table.regret[s]);
        out += "}, " + std::to_string(table.choice[s]) + ", " + regret + "}, // " + matrix.shapeLabel(s) + "\n";
    }
    out += "};\n\n";
    out += "// The tuned shape nearest to `dims` (an index in kShapes).\n";
    out += "inline int nearest(const long long (&dims)[" + std::to_string(std::max<std::size_t>(dims, 1)) + "]) {\n";
    out += "    int best = 0;\n    double bestDistance = 0;\n";
    out += "    for (int s = 0; s < int(sizeof kShapes / sizeof kShapes[0]); ++s) {\n";
    out += "        double distance = 0;\n";
    out += "        for (int d = 0; d < kDims; ++d) {\n";
    out += "            const double a = double(dims[d] < 1 ? 1 : dims[d]);\n";
    out += "            const double b = double(kShapes[s].dims[d] < 1 ? 1 : kShapes[s].dims[d]);\n";
    out += "            distance += std::fabs(std::log2(a) - std::log2(b));\n";
    out += "        }\n";
    out += "        if (s == 0 || distance < bestDistance) {\n            best = s;\n            bestDistance = "
           "distance;\n"
           "        }\n";
    out += "    }\n    return best;\n}\n\n";
    out += "// The config to run for a shape: the table's entry of the nearest tuned shape.\n";
    out += "inline const Config& dispatch(";
    for (std::size_t d = 0; d < dims; ++d)
        out += (d ? ", " : "") + std::string("long long ") + cppIdentifier(matrix.dimNames[d], "dim");
    out += ") {\n    const long long dims[" + std::to_string(std::max<std::size_t>(dims, 1)) + "] = {";
    for (std::size_t d = 0; d < dims; ++d)
        out += (d ? ", " : "") + cppIdentifier(matrix.dimNames[d], "dim");
    out += "};\n    return kEntries[kShapes[nearest(dims)].entry];\n}\n\n";
    out += "} // namespace " + kernelNs + "\n} // namespace " + ns + "\n";
    return out;
}

std::string writeDispatchTriton(const ShapeConfigMatrix& matrix, const DispatchTable& table) {
    std::string out;
    out += "# A dispatch table exported by Tilescope " + std::string(TILESCOPE_VERSION) + " for kernel '" +
           matrix.kernel + "':\n";
    out += "# " + std::to_string(table.entries.size()) + " configs for " + std::to_string(matrix.shapes.size()) +
           " tuned shapes, each within " + formatPercent(table.worstRegret, 2) + " of its own best (mean " +
           formatPercent(table.meanRegret, 2) + ").\n";
    out += "#\n#   @triton.autotune(configs=configs(), key=KEY, prune_configs_by={\"early_config_prune\": prune})\n#\n";
    out += "# prune() keeps the config of the tuned shape nearest to the call's (the sum over dims of\n";
    out += "# |log2(d) - log2(tuned d)|), so autotune runs it without benchmarking the others. KEY names\n";
    out += "# the kernel's arguments that hold the shape.\n";
    out += "import math\n\n";
    out += "KEY = [";
    for (std::size_t d = 0; d < matrix.dimNames.size(); ++d)
        out += (d ? ", " : "") + jsonString(matrix.dimNames[d]);
    out += "]\n\n";
    out += "ENTRIES = [\n";
    for (std::size_t e : table.entries) {
        std::string dict;
        for (const auto& [name, value] : matrix.configs[e])
            dict += (dict.empty() ? "" : ", ") + jsonString(name) + ": " + pythonValue(value);
        out += "    {" + dict + "},\n";
    }
    out += "]\n\n";
    out += "# (dims, the index in ENTRIES it runs, its regret against its own best)\n";
    out += "TUNED_SHAPES = [\n";
    for (std::size_t s = 0; s < matrix.shapes.size(); ++s) {
        std::string dims;
        for (std::size_t d = 0; d < matrix.shapes[s].size(); ++d)
            dims += (d ? ", " : "") + std::to_string(matrix.shapes[s][d]);
        char regret[32];
        std::snprintf(regret, sizeof regret, "%.6f", table.regret[s]);
        out += "    ((" + dims + (matrix.shapes[s].size() == 1 ? "," : "") + "), " + std::to_string(table.choice[s]) +
               ", " + regret + "),  # " + matrix.shapeLabel(s) + "\n";
    }
    out += "]\n\n\n";
    out += "def pick(*dims):\n";
    out += "    \"\"\"The index in ENTRIES for a shape: the entry of the nearest tuned shape.\"\"\"\n";
    out += "    best, best_distance = 0, None\n";
    out += "    for s, (tuned, _, _) in enumerate(TUNED_SHAPES):\n";
    out += "        distance = sum(abs(math.log2(max(1, d)) - math.log2(max(1, t))) for d, t in zip(dims, tuned))\n";
    out += "        if best_distance is None or distance < best_distance:\n";
    out += "            best, best_distance = s, distance\n";
    out += "    return TUNED_SHAPES[best][1]\n\n\n";
    out += "def configs():\n";
    out += "    \"\"\"The entries as triton.Config, in ENTRIES order.\"\"\"\n";
    out += "    import triton\n\n";
    out += "    return [\n";
    for (std::size_t e : table.entries)
        out += "        " + tritonConfigExpression(matrix.configs[e]) + ",\n";
    out += "    ]\n\n\n";
    out += "def prune(configs, named_args, **kwargs):\n";
    out += "    \"\"\"triton.autotune's early_config_prune: the table's config for this call's shape (configs\n";
    out += "    is the list configs() made, in its order).\"\"\"\n";
    out += "    return [configs[pick(*(named_args[k] for k in KEY))]]\n";
    return out;
}

} // namespace tilescope
