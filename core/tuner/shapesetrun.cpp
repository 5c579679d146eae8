#include "tuner/shapesetrun.h"

#include "base/error.h"
#include "base/textformat.h"
#include "exchange/configcodec.h"
#include "shapes/dispatchtable.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"
#include "store/resultstore.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <utility>

namespace tilescope {

namespace {

/// How far apart two of the problem's shapes are (shapeDistance of their dims).
double shapesApart(const TuningProblem& problem, std::size_t a, std::size_t b) {
    if (a >= problem.shapes.size() || b >= problem.shapes.size())
        return 0;
    auto values = [&](std::size_t s) {
        std::vector<std::int64_t> v;
        for (const auto& [name, value] : problem.shapes[s].dims)
            v.push_back(value);
        return v;
    };
    return shapeDistance(values(a), values(b));
}

std::string_view blanksTrimmed(std::string_view text) {
    const auto first = text.find_first_not_of(" \t");
    if (first == std::string_view::npos)
        return {};
    return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

} // namespace

std::vector<std::size_t> parseShapeList(std::string_view text, std::size_t shapeCount, const std::string& field) {
    const std::size_t count = std::max<std::size_t>(1, shapeCount);
    std::vector<std::size_t> list;
    if (blanksTrimmed(text) == "all") {
        for (std::size_t i = 0; i < count; ++i)
            list.push_back(i);
        return list;
    }
    for (std::size_t start = 0; start <= text.size();) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::string_view item = blanksTrimmed(text.substr(start, comma - start));
        start = comma + 1;
        if (item.empty())
            continue;
        std::size_t index = 0;
        const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), index);
        if (ec != std::errc() || end != item.data() + item.size())
            throw InputError("", field, "expected all or shape indexes such as 0,2,5, got '" + std::string(item) + "'");
        if (index >= count)
            throw InputError("", field,
                             "shape " + std::string(item) + " does not exist (the problem has " +
                                 std::to_string(count) +
                                 (count == 1 ? " shape)" : " shapes: 0 to " + std::to_string(count - 1) + ")"));
        if (std::find(list.begin(), list.end(), index) == list.end())
            list.push_back(index);
    }
    if (list.empty())
        throw InputError("", field, "expected all or shape indexes such as 0,2,5, got '" + std::string(text) + "'");
    return list;
}

ShapeSetResult runShapeSet(const TuningProblem& problem, ResultStore& store, const ShapeSetOptions& options,
                           const SessionOptions& base, const SessionRunner& runOne,
                           const std::function<void(const std::string&)>& note) {
    auto say = [&](const std::string& line) {
        if (note)
            note(line);
    };
    ShapeSetResult result;
    auto run = [&](const SessionOptions& session) {
        result.last = runOne(session);
        result.sessions.push_back(result.last->session.id);
        result.cancelled = result.last->session.state == SessionState::Cancelled;
        return result.last->session.id;
    };
    if (options.shapes.size() <= 1) {
        SessionOptions session = base;
        if (!options.shapes.empty())
            session.shapeIndex = options.shapes.front();
        run(session);
        return result;
    }
    const std::size_t keep = std::max(options.seedTop, options.crossEval);
    std::vector<std::pair<std::size_t, std::vector<ConfigValues>>> tops; // per tuned shape: its best configs
    std::map<std::size_t, std::int64_t> sessionOf;
    auto topOf = [&](std::int64_t session) {
        std::vector<ConfigValues> configs;
        for (const ResultRecord& r : ranked(store.results(session))) {
            if (!r.ranks() || configs.size() >= keep)
                break;
            configs.push_back(r.config);
        }
        return configs;
    };
    for (std::size_t n = 0; n < options.shapes.size(); ++n) {
        const std::size_t shape = options.shapes[n];
        SessionOptions session = base;
        session.shapeIndex = shape;
        std::vector<std::pair<std::size_t, std::vector<ConfigValues>>> nearest = tops;
        std::stable_sort(nearest.begin(), nearest.end(), [&](const auto& a, const auto& b) {
            return shapesApart(problem, shape, a.first) < shapesApart(problem, shape, b.first);
        });
        for (const auto& [tuned, configs] : nearest)
            for (std::size_t i = 0; i < configs.size() && i < options.seedTop; ++i)
                session.firstConfigs.push_back(configs[i]);
        say("Shape " + std::to_string(n + 1) + " of " + std::to_string(options.shapes.size()) +
            (session.firstConfigs.empty() ? ""
                                          : ": the search starts from " + std::to_string(session.firstConfigs.size()) +
                                                " winners of the shapes tuned before (those valid here)"));
        const std::int64_t id = run(session);
        if (result.cancelled)
            return result;
        sessionOf[shape] = id;
        tops.emplace_back(shape, topOf(id));
    }
    if (options.crossEval > 0) {
        for (const std::size_t shape : options.shapes) {
            const ConfigSpace space = ConfigSpace::build(problem, shape);
            const ConfigCodec codec(space);
            std::set<std::string> measured;
            for (const ResultRecord& r : store.results(sessionOf[shape]))
                measured.insert(configKey(r.config));
            SessionOptions session = base;
            session.shapeIndex = shape;
            session.strategy = "exhaustive";
            session.confirmTop = 0;
            session.earlyStop.reset();
            session.resume = false;
            for (const auto& [other, configs] : tops) {
                if (other == shape)
                    continue;
                for (std::size_t i = 0; i < configs.size() && i < options.crossEval; ++i)
                    if (codec.indexOf(configs[i]) && measured.insert(configKey(configs[i])).second)
                        session.firstConfigs.push_back(configs[i]);
            }
            if (session.firstConfigs.empty())
                continue;
            session.budget = Budget{};
            session.budget.configs = session.firstConfigs.size();
            say("Cross-evaluation at shape " + std::to_string(shape) + ": the best " +
                std::to_string(options.crossEval) + " of the other shapes, " +
                std::to_string(session.firstConfigs.size()) + " configs not measured here yet");
            run(session);
            if (result.cancelled)
                return result;
        }
    }
    // What the set says: per shape, what tuning gained against the noise, and the table at 3 %.
    std::vector<SessionData> data;
    for (const SessionInfo& info : store.sessions())
        data.push_back(store.load(info.id));
    try {
        const ShapeConfigMatrix matrix = buildShapeConfigMatrix(data, problem.kernelName, options.database);
        const std::vector<ShapeRegime> regimes = shapeRegimes(data, matrix);
        const DispatchTable table = planWithinRegret(matrix, 0.03);
        say("Shape set: " + std::to_string(matrix.shapes.size()) + " shapes in " + options.database);
        for (std::size_t s = 0; s < matrix.shapes.size(); ++s)
            say("  " + matrix.shapeLabel(s) + "  " + regimes[s].verdict);
        say("  table       " + std::to_string(table.entries.size()) +
            " configs run every shape within 3 % of its best (worst " +
            formatDouble("%.2f %%", 100 * table.worstRegret) + "); `tilescope-cli table " + options.database +
            "` for other bounds, a C++ header or a Triton module");
    } catch (const InputError& e) {
        say("Shape set: " + std::to_string(options.shapes.size()) + " shapes in " + options.database +
            " (no table: " + e.message() + ")");
    }
    return result;
}

} // namespace tilescope
