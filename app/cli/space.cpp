// tilescope-cli space: a tuning problem's config space at a glance.

#include "cli.h"

#include "model/configjson.h"

#include "analysis/launchcheck.h"
#include "base/error.h"
#include "base/textformat.h"
#include "compile/requestbuilder.h"
#include "exchange/configcodec.h"
#include "space/configspace.h"
#include "spec/launchgeometry.h"
#include "spec/tuningproblem.h"
#include "tuner/storedproblem.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <memory>

namespace tilescope::cli {

namespace {

struct SpaceOptions {
    std::string problemPath;
    std::int64_t session = 0; ///< of a database: 0 = the newest that stored its problem
    bool countOnly = false;
    std::uint64_t sample = 10;
    std::uint64_t seed = 0;
    std::size_t shape = 0;
    bool json = false;
    bool source = false;
    CLI::Option* shapeOption = nullptr;
};

std::string valuesSummary(const TuningParameter& p) {
    std::string out;
    for (std::size_t i = 0; i < p.values.size(); ++i) {
        if (i == 8 && p.values.size() > 10) {
            out += ", ... " + plainValue(p.values.back());
            break;
        }
        if (i > 0)
            out += ", ";
        out += plainValue(p.values[i]);
    }
    return out;
}

// --json: one object with all of it.
void printSpaceJson(const SpaceOptions& opt, const TuningProblem& problem, const ConfigSpace& space,
                    const std::vector<std::string>& order, const std::vector<std::uint64_t>& samples,
                    const RequestBuilder* builder, const StoredProblem* stored) {
    const SpaceStats& stats = space.stats();
    nlohmann::ordered_json out;
    out["problem"] = opt.problemPath;
    if (stored)
        out["session"] = stored->session().id; // the database's session whose problem it is
    out["kernel"] = problem.kernelName;
    // Why the kernel cannot be compiled or launched (counting needs neither).
    nlohmann::ordered_json blockers = nlohmann::ordered_json::array();
    for (const InputError& b : problem.launchBlockers)
        blockers.push_back({{"location", b.location()}, {"message", b.message()}});
    out["launch_blockers"] = std::move(blockers);
    nlohmann::ordered_json warnings = nlohmann::ordered_json::array();
    for (const LaunchWarning& w : checkLaunch(problem, opt.shape, space))
        warnings.push_back({{"name", w.name}, {"location", w.location}, {"message", w.message}});
    out["launch_warnings"] = std::move(warnings);
    out["shape_index"] = opt.shape;
    nlohmann::ordered_json shape = nlohmann::ordered_json::object();
    for (const auto& [name, value] : problem.shapes[opt.shape].dims)
        shape[name] = value;
    out["shape"] = shape;
    out["raw_size"] = stats.rawSize;
    out["valid_size"] = space.size();
    out["enumeration_seconds"] = stats.enumerationSeconds;
    out["materialized"] = stats.materialized;
    out["search_order"] = order;
    nlohmann::ordered_json params = nlohmann::ordered_json::array();
    for (const auto& p : problem.parameters) {
        nlohmann::ordered_json values = nlohmann::ordered_json::array();
        for (const auto& v : p.values)
            values.push_back(toJson(recordedValue(v)));
        params.push_back({{"name", p.name}, {"type", p.type}, {"values", values}});
    }
    out["parameters"] = params;
    nlohmann::ordered_json conditions = nlohmann::ordered_json::array();
    for (const auto& c : problem.conditions)
        conditions.push_back(c.expression);
    out["conditions"] = conditions;
    nlohmann::ordered_json failures = nlohmann::ordered_json::array();
    for (const auto& f : stats.failures)
        failures.push_back({{"condition", f.condition},
                            {"expression", problem.conditions[static_cast<std::size_t>(f.condition)].expression},
                            {"count", f.count},
                            {"first_error", f.firstError}});
    out["condition_errors"] = failures;
    out["seed"] = opt.seed;
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (std::uint64_t index : samples) {
        const Config config = space.at(index);
        nlohmann::ordered_json entry;
        for (int p = 0; p < space.parameterCount(); ++p)
            entry[space.parameterName(p)] = toJson(recordedValue(space.value(config, p)));
        list.push_back(entry);
    }
    out["samples"] = list;
    out["sample_indices"] = samples;
    if (builder) {
        nlohmann::ordered_json prepared = nlohmann::ordered_json::array();
        for (std::uint64_t index : samples) {
            const Config config = space.at(index);
            nlohmann::ordered_json defines = nlohmann::ordered_json::array();
            for (const auto& [name, value] : builder->defines(config))
                defines.push_back({name, value});
            prepared.push_back({{"kernel_name", builder->kernelName(config)},
                                {"defines", std::move(defines)},
                                {"source", builder->preparedSource(config)}});
        }
        out["prepared"] = std::move(prepared);
    }
    // How each sampled config launches (grid and block), by the rule the problem's fields select.
    try {
        const GeometryPlanner planner(problem, opt.shape);
        out["launch_rule"] = std::string(gridRuleName(planner.gridRule()));
        nlohmann::ordered_json launches = nlohmann::ordered_json::array();
        for (std::uint64_t index : samples) {
            const LaunchGeometry g = planner.plan(space.at(index));
            nlohmann::ordered_json launch = {{"grid", g.grid}, {"block", g.block}, {"shared_dynamic", g.sharedDynamic}};
            if (!g.ok())
                launch["error"] = g.error;
            launches.push_back(std::move(launch));
        }
        out["launches"] = std::move(launches);
    } catch (const InputError& e) {
        out["launch_error"] = e.what();
    }
    std::cout << out.dump(2) << "\n";
}

// The notes on stderr before the space: what the stored problem and the launch tell.
void printSpaceNotes(const SpaceOptions& opt, const OpenedProblem& opened, const ConfigSpace& space) {
    const TuningProblem& problem = opened.problem;
    for (const std::string& note : opened.notes())
        std::fprintf(stderr, "note: %s\n", note.c_str());
    for (const InputError& b : problem.launchBlockers)
        std::fprintf(stderr, "note: %s (counting needs no kernel; analyze and tune --backend cuda stop here)\n",
                     b.what());
    printLaunchWarnings(problem, opt.shape, space, opt.problemPath);
    // What the buffer-edge warning could not decide, so that its silence is not read as "in
    // bounds"; at a glance only, not with --count.
    if (!opt.countOnly) {
        for (const LaunchWarning& n : bufferEdgeNotes(problem, opt.shape, space))
            std::fprintf(stderr, "note: %s: %s: buffer-edge %s\n", opt.problemPath.c_str(), n.location.c_str(),
                         n.message.c_str());
    }
}

// The problem, its shape, parameters and conditions, and the space's sizes and enumeration.
void printSpaceSummary(const SpaceOptions& opt, const OpenedProblem& opened, const ConfigSpace& space,
                       const std::vector<std::string>& order) {
    const TuningProblem& problem = opened.problem;
    const SpaceStats& stats = space.stats();
    std::printf("Problem      %s  (kernel %s in %s)\n",
                opened.stored ? opened.stored->label().c_str() : opt.problemPath.c_str(), problem.kernelName.c_str(),
                problem.kernelFile.c_str());
    if (!problem.shapes[opt.shape].dims.empty())
        std::printf("Shape        %s  (shape %zu; the problem has shapes 0..%zu, --shape selects)\n",
                    problem.shapes[opt.shape].label().c_str(), opt.shape, problem.shapes.size() - 1);

    TextTable params({"name", "type", "count", "values"}, {false, false, true, false});
    for (const auto& p : problem.parameters)
        params.addRow({p.name, p.type, std::to_string(p.values.size()), valuesSummary(p)});
    std::printf("\nParameters (%zu)\n%s", problem.parameters.size(), params.render().c_str());

    if (!problem.conditions.empty()) {
        std::printf("\nConditions (%zu)\n", problem.conditions.size());
        for (std::size_t c = 0; c < problem.conditions.size(); ++c)
            std::printf("  %2zu  %s\n", c + 1, problem.conditions[c].expression.c_str());
    }

    std::printf("\nSpace\n");
    std::printf("  raw size      %s\n", formatCount(stats.rawSize).c_str());
    std::printf("  valid size    %s  (%s of raw)\n", formatCount(static_cast<double>(space.size())).c_str(),
                formatShare(static_cast<double>(space.size()), stats.rawSize).c_str());
    std::string orderText;
    for (const auto& name : order)
        orderText += (orderText.empty() ? "" : ", ") + name;
    std::printf("  enumeration   %s%s\n", formatDuration(stats.enumerationSeconds).c_str(),
                stats.materialized ? "" : "  (counted lazily: too many configs to hold)");
    std::printf("  search order  %s\n", orderText.c_str());
    for (const auto& f : stats.failures)
        std::fprintf(stderr, "warning: condition %d raised for %s partial config(s), which count as invalid: %s\n",
                     f.condition + 1, formatCount(static_cast<double>(f.count)).c_str(), f.firstError.c_str());
}

// The sampled configs, and with --source what NVRTC compiles for each.
void printSamples(const SpaceOptions& opt, const ConfigSpace& space, const std::vector<std::uint64_t>& samples,
                  const RequestBuilder* builder) {
    if (!samples.empty()) {
        std::vector<std::string> headers{"index"};
        std::vector<bool> right{true};
        for (int p = 0; p < space.parameterCount(); ++p) {
            headers.push_back(space.parameterName(p));
            right.push_back(true);
        }
        TextTable table(headers, right);
        for (std::uint64_t index : samples) {
            const Config config = space.at(index);
            std::vector<std::string> row{std::to_string(index)};
            for (int p = 0; p < space.parameterCount(); ++p)
                row.push_back(plainValue(space.value(config, p)));
            table.addRow(row);
        }
        std::printf("\nSample (%zu of %s, seed %llu)\n%s", samples.size(),
                    formatCount(static_cast<double>(space.size())).c_str(), static_cast<unsigned long long>(opt.seed),
                    table.render().c_str());
    }
    if (builder) {
        for (std::uint64_t index : samples) {
            const Config config = space.at(index);
            const std::string text = builder->preparedSource(config);
            std::printf("\n// ---- index %llu: %s; kernel %s\n%s%s", static_cast<unsigned long long>(index),
                        space.describe(config).c_str(), builder->kernelName(config).c_str(), text.c_str(),
                        text.empty() || text.back() == '\n' ? "" : "\n");
        }
    }
}

int runSpace(SpaceOptions opt) {
    // A database: the problem its session stored, at the session's shape unless --shape says.
    const OpenedProblem opened =
        openProblem(opt.problemPath, opt.session > 0 ? std::optional(opt.session) : std::nullopt);
    const TuningProblem& problem = opened.problem;
    if (opened.stored && opt.shapeOption->count() == 0)
        opt.shape =
            static_cast<std::size_t>(std::max<std::int64_t>(0, opened.stored->session().shapeIndex.value_or(0)));
    checkShape(problem, opt.shape);
    const ConfigSpace space = ConfigSpace::build(problem, opt.shape);
    const SpaceStats& stats = space.stats();
    if (!opt.json)
        printSpaceNotes(opt, opened, space);
    const std::vector<std::uint64_t> samples =
        opt.countOnly ? std::vector<std::uint64_t>{} : space.sample(opt.sample, opt.seed);
    // What NVRTC compiles for each sampled config, prepared as Kernel Tuner prepares it.
    std::unique_ptr<RequestBuilder> builder;
    if (opt.source) {
        problem.requireLaunchable();
        builder = std::make_unique<RequestBuilder>(problem, opt.shape);
    }

    std::vector<std::string> order;
    for (int p : stats.searchOrder)
        order.push_back(space.parameterName(p));

    if (opt.json) {
        printSpaceJson(opt, problem, space, order, samples, builder.get(), opened.stored.get());
        return kOk;
    }

    if (opt.countOnly) {
        std::printf("%s valid of %s raw configs (%s)\n", formatCount(static_cast<double>(space.size())).c_str(),
                    formatCount(stats.rawSize).c_str(),
                    formatShare(static_cast<double>(space.size()), stats.rawSize).c_str());
        return kOk;
    }
    printSpaceSummary(opt, opened, space, order);
    printSamples(opt, space, samples, builder.get());
    return kOk;
}

} // namespace

void registerSpace(CLI::App& app) {
    auto opt = std::make_shared<SpaceOptions>();
    CLI::App* cmd = app.add_subcommand("space", "Show a problem's config space: parameters, conditions, the raw and "
                                                "valid sizes, the enumeration time and sampled configs");
    readsFile(cmd->add_option("problem", opt->problemPath,
                              "A tuning problem in T1 JSON (for example kernels/sgemm/sgemm.json), or a results "
                              "database: the problem a session stored with its files, whether or not they are still "
                              "where it was tuned"))
        ->required();
    cmd->add_option("--session", opt->session,
                    "With a database: the session whose problem to show (default: the newest that stored one)")
        ->check(wholeNumber(1, kAny));
    cmd->add_flag("--count", opt->countOnly, "Print only the raw and valid sizes");
    cmd->add_option("--sample", opt->sample, "How many valid configs to draw at random, without replacement")
        ->capture_default_str()
        ->check(wholeNumber(0, kAny));
    cmd->add_option("--seed", opt->seed, "Seed of the random sample (the same seed gives the same sample)")
        ->capture_default_str()
        ->check(wholeNumber(0, kAny));
    addShapeOption(cmd, opt->shape);
    opt->shapeOption = cmd->get_option("--shape");
    cmd->add_flag("--json", opt->json,
                  "Print one JSON object (raw_size, valid_size, samples as name -> value, and more)");
    cmd->add_flag("--source", opt->source,
                  "Also print, for each sampled config, the source NVRTC compiles: the kernel file with the defines "
                  "Kernel Tuner puts before it (grid_size_x/y/z, block_size_x/y/z, the parameters, kernel_tuner), "
                  "and the kernel name with parameter values in place (in --json: \"prepared\")");
    setAction(cmd, [opt] { return runSpace(*opt); });
}

} // namespace tilescope::cli
