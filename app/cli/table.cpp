// tilescope-cli table: a dispatch table from the sessions of one kernel at several shapes: the
// smallest set of configs that runs every tuned shape within a stated regret of its own best (or
// the best table of at most K configs), the regret per shape, and a C++ header that dispatches
// any shape to the entry of the nearest tuned one. The planner is core/shapes/dispatchtable.

#include "cli.h"

#include "base/error.h"
#include "base/filewrite.h"
#include "base/textformat.h"
#include "exchange/recording.h"
#include "exchange/textfile.h"
#include "shapes/dispatchtable.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace tilescope::cli {

namespace {

struct TableArgs {
    std::vector<std::string> recordings;
    std::string kernel;
    std::string maxRegret = "3%";
    std::size_t entries = 0;
    std::string cpp;
    std::string triton;
    std::string distribution;
    std::size_t buckets = 8;
    CLI::Option* regretOption = nullptr;
    CLI::Option* entriesOption = nullptr;
};

/// "3%" is 0.03, "0.03" too; a bare number above 1 is refused as ambiguous.
double parseRegret(const std::string& text) {
    std::string t = text;
    const bool percent = !t.empty() && t.back() == '%';
    if (percent)
        t.pop_back();
    char* end = nullptr;
    const double v = std::strtod(t.c_str(), &end);
    if (t.empty() || end != t.c_str() + t.size() || !std::isfinite(v) || v < 0)
        throw InputError("", "--max-regret", "expected a regret such as 3% or 0.03, got '" + text + "'");
    if (!percent && v > 1)
        throw InputError("", "--max-regret",
                         "'" + text + "' is ambiguous: write " + text + "% or a fraction such as 0.03");
    return percent ? v / 100.0 : v;
}

std::string shapeText(const std::vector<std::string>& names, const std::vector<std::int64_t>& dims) {
    std::string out;
    for (std::size_t d = 0; d < names.size() && d < dims.size(); ++d)
        out += (d ? " " : "") + names[d] + "=" + std::to_string(dims[d]);
    return out;
}

/// The buckets for a distribution of shapes seen in production, and the table entry each runs.
void printBuckets(const TableArgs& opt, const ShapeConfigMatrix& m, const DispatchTable& table) {
    const auto [names, seenInFile] = readShapeDistribution(exchange::readText(opt.distribution), opt.distribution);
    // The file's columns in the matrix's dim order.
    std::vector<std::size_t> column;
    for (const std::string& d : m.dimNames) {
        const auto it = std::find(names.begin(), names.end(), d);
        if (it == names.end())
            throw InputError(opt.distribution, "line 1",
                             "no column '" + d + "' (the tuned shapes have the dims " + joined(m.dimNames) + ")");
        column.push_back(static_cast<std::size_t>(it - names.begin()));
    }
    std::vector<ShapeCount> seen;
    double total = 0;
    for (const ShapeCount& row : seenInFile) {
        ShapeCount s;
        for (std::size_t c : column)
            s.dims.push_back(row.dims[c]);
        s.count = row.count;
        total += row.count;
        seen.push_back(std::move(s));
    }
    const BucketPlan plan = planBuckets(seen, opt.buckets);
    std::printf("\nBuckets for %s: %zu shapes seen (count %.0f), %zu buckets; padding adds %s of the work on "
                "average (weighted by count), %s at worst\n",
                opt.distribution.c_str(), seen.size(), total, plan.buckets.size(),
                formatPercent(plan.padding, 2).c_str(), formatPercent(plan.worstPadding, 2).c_str());
    for (std::size_t b = 0; b < plan.buckets.size(); ++b) {
        double share = 0;
        std::size_t shapes = 0;
        for (std::size_t i = 0; i < seen.size(); ++i)
            if (plan.bucketOf[i] == b) {
                share += seen[i].count;
                ++shapes;
            }
        const std::size_t tuned = nearestShape(m, plan.buckets[b]);
        const bool exact = m.shapes[tuned] == plan.buckets[b];
        std::printf("  %-28s  %4zu shapes, %5.1f %% of the count  entry %zu (%s %s)\n",
                    shapeText(m.dimNames, plan.buckets[b]).c_str(), shapes, total > 0 ? 100.0 * share / total : 0.0,
                    table.choice[tuned] + 1, exact ? "tuned at" : "nearest tuned shape", m.shapeLabel(tuned).c_str());
    }
    bool untuned = false;
    for (const auto& bucket : plan.buckets)
        untuned = untuned || m.shapes[nearestShape(m, bucket)] != bucket;
    if (untuned)
        std::printf("note: tune the buckets that are not tuned shapes (add them to the problem's Shapes) for a "
                    "table measured where it runs\n");
}

int runTable(const TableArgs& opt) {
    std::vector<SessionData> sessions;
    for (const std::string& path : opt.recordings)
        for (SessionData& s : readRecording(path))
            sessions.push_back(std::move(s));
    const std::string source = opt.recordings.size() == 1 ? opt.recordings.front() : std::string();
    const ShapeConfigMatrix m = buildShapeConfigMatrix(sessions, opt.kernel, source);

    DispatchTable table;
    std::string rule;
    if (opt.entriesOption->count() > 0) {
        if (opt.regretOption->count() > 0)
            throw InputError("", "--entries", "give --max-regret or --entries, not both");
        table = planWithEntries(m, opt.entries);
        rule = "the lowest worst regret with at most " + std::to_string(opt.entries) + " configs";
        if (table.entries.size() > opt.entries)
            rule += " (no " + std::to_string(opt.entries) +
                    " of the measured configs were measured on every shape: the smallest table that was)";
    } else {
        const double bound = parseRegret(opt.maxRegret);
        table = planWithinRegret(m, bound);
        rule = "the fewest configs that run every shape within " + formatPercent(bound, 2) + " of its own best";
    }

    std::printf("Dispatch table: kernel %s, %zu shapes x %zu configs (%zu of %zu cells measured)\n", m.kernel.c_str(),
                m.shapes.size(), m.configs.size(), m.measuredCells(), m.shapes.size() * m.configs.size());
    std::printf("  rule        %s%s\n", rule.c_str(),
                table.proven ? "" : " (the search stopped at its limit: the greedy table, maybe not the smallest)");
    std::printf("  entries     %zu\n", table.entries.size());
    std::printf("  regret      worst %s, mean %s over the tuned shapes\n\n",
                formatPercent(table.worstRegret, 2).c_str(), formatPercent(table.meanRegret, 2).c_str());
    std::size_t width = 5;
    for (std::size_t s = 0; s < m.shapes.size(); ++s)
        width = std::max(width, m.shapeLabel(s).size());
    std::printf("  %-*s  %10s  %5s  %8s\n", static_cast<int>(width), "shape", "best ms", "entry", "regret");
    for (std::size_t s = 0; s < m.shapes.size(); ++s)
        std::printf("  %-*s  %10.4g  %5zu  %8s\n", static_cast<int>(width), m.shapeLabel(s).c_str(), m.bestMs(s),
                    table.choice[s] + 1, formatPercent(table.regret[s], 2).c_str());
    std::printf("\n  The regime per shape (its best against the roofline, its configs against their noise):\n");
    const std::vector<ShapeRegime> regimes = shapeRegimes(sessions, m);
    for (std::size_t s = 0; s < m.shapes.size(); ++s)
        std::printf("  %-*s  %s\n", static_cast<int>(width), m.shapeLabel(s).c_str(), regimes[s].verdict.c_str());
    std::printf("\n");
    for (std::size_t e = 0; e < table.entries.size(); ++e) {
        const auto runs = std::count(table.choice.begin(), table.choice.end(), e);
        std::printf("  entry %zu  %s  (%ld shape%s)\n", e + 1, describeConfig(m.configs[table.entries[e]]).c_str(),
                    static_cast<long>(runs), runs == 1 ? "" : "s");
    }
    if (m.measuredCells() < m.shapes.size() * m.configs.size())
        std::printf("\nnote: a config counts only on the shapes where it was measured; measuring each shape's best "
                    "configs on the other shapes can make the table smaller\n");
    if (!opt.distribution.empty())
        printBuckets(opt, m, table);
    if (!opt.triton.empty()) {
        writeFileAtomically(opt.triton, writeDispatchTriton(m, table), "--triton");
        std::fprintf(stderr, "wrote %s (Python for triton.autotune: configs(), KEY and the prune hook)\n",
                     opt.triton.c_str());
    }
    if (!opt.cpp.empty()) {
        writeFileAtomically(opt.cpp, writeDispatchHeader(m, table), "--cpp");
        std::fprintf(stderr, "wrote %s (a C++17 header: dispatch(%s) for any shape)\n", opt.cpp.c_str(),
                     joined(m.dimNames).c_str());
    }
    return kOk;
}

} // namespace

void registerTable(CLI::App& app) {
    auto opt = std::make_shared<TableArgs>();
    CLI::App* cmd = app.add_subcommand(
        "table", "A dispatch table over the tuned shapes of one kernel: the fewest configs within a regret bound");
    readsFile(cmd->add_option("recordings", opt->recordings,
                              "Results of the kernel at several shapes: databases, T4 files or Kernel Tuner caches"))
        ->required()
        ->check(CLI::ExistingFile);
    cmd->add_option("--kernel", opt->kernel, "The kernel (needed when the recordings hold several)");
    opt->regretOption = cmd->add_option("--max-regret", opt->maxRegret,
                                        "Every tuned shape within this of its own best: 3% or 0.03 (default 3%)");
    opt->entriesOption =
        cmd->add_option("--entries", opt->entries, "Instead: the lowest worst regret with at most this many configs")
            ->check(CLI::Range(1, 1000000));
    readsFile(
        cmd->add_option("--distribution", opt->distribution,
                        "A CSV of shapes seen in production (a header of dim names and count): propose buckets that "
                        "cover it, padding counted"))
        ->check(CLI::ExistingFile);
    cmd->add_option("--buckets", opt->buckets, "With --distribution: at most this many buckets")
        ->capture_default_str()
        ->check(CLI::Range(1, 10000));
    writesFile(cmd->add_option("--triton", opt->triton,
                               "Also write Python for triton.autotune: configs(), KEY and a prune_configs_by hook "
                               "that keeps the table's config for each call's shape"),
               "--triton");
    writesFile(
        cmd->add_option("--cpp", opt->cpp, "Also write a C++17 header that dispatches any shape (nearest tuned shape)"),
        "--cpp");
    setAction(cmd, [opt] { return runTable(*opt); });
}

} // namespace tilescope::cli
