#include "spec/launchgeometry.h"

#include "base/error.h"
#include "spec/t1common.h"
#include "spec/tuningproblem.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

namespace tilescope {

namespace {

constexpr std::int64_t kMax32 = std::numeric_limits<std::int32_t>::max();
const char* const kAxes[] = {"X", "Y", "Z"};

} // namespace

std::string_view launchWarningNames() {
    return "launch-coverage, global-size, launch-limits, varying-size, buffer-edge, inert-parameter";
}

bool isLaunchWarningName(std::string_view name) {
    for (std::string_view n :
         {"launch-coverage", "global-size", "launch-limits", "varying-size", "buffer-edge", "inert-parameter"})
        if (name == n)
            return true;
    return false;
}

std::string_view gridRuleName(GridRule rule) {
    switch (rule) {
    case GridRule::GlobalSizeInBlocks:
        return "GlobalSize in blocks (GlobalSizeType CUDA)";
    case GridRule::ProblemSizeOverGridDiv:
        return "ProblemSize divided by GridDiv";
    case GridRule::GlobalSizeInThreads:
        return "GlobalSize in threads, divided by LocalSize";
    }
    return "?";
}

struct GeometryPlanner::Expressions {
    GridRule rule = GridRule::GlobalSizeInThreads;
    // Invalid expressions stand for absent fields (a dimension of 1, no shared memory).
    std::array<expr::Expression, 3> global;
    std::array<expr::Expression, 3> local;
    std::array<std::vector<expr::Expression>, 3> gridDiv;
    std::array<expr::Expression, 3> defaultDivisor; // block_size_x/y/z where it is a parameter
    std::array<std::int64_t, 3> problemSize{1, 1, 1};
    expr::Expression shared;
    expr::ValueList storage; // ProblemSize of the shape, which the slots point at
    std::vector<expr::Value> shapeSlots;
};

GeometryPlanner::GeometryPlanner(const TuningProblem& problem, std::size_t shapeIndex)
    : m_problem(problem)
    , m_expressions(std::make_unique<Expressions>()) {
    const std::size_t shapes = std::max<std::size_t>(problem.shapes.size(), 1);
    if (shapeIndex >= shapes)
        throw InputError(problem.fileName, "/Tilescope/Shapes",
                         "shape " + std::to_string(shapeIndex) + " does not exist (the problem has " +
                             std::to_string(shapes) + (shapes == 1 ? " shape)" : " shapes)"));
    Expressions& x = *m_expressions;
    const expr::Scope scope = problem.scope();
    auto compile = [&](const std::string& text, const std::string& pointer) {
        try {
            return expr::Expression::compile(text, scope);
        } catch (const expr::ExprError& error) {
            throw InputError(problem.fileName, pointer, spec::describeExprErrorInline(error));
        }
    };
    const std::string ks = "/KernelSpecification/";
    const std::array<const std::string*, 3> global = {&problem.globalSize.x, &problem.globalSize.y,
                                                      &problem.globalSize.z};
    const ThreeD block = problem.blockExpressions();
    const std::array<const std::string*, 3> local = {&block.x, &block.y, &block.z};
    const std::array<const std::vector<std::string>*, 3> gridDiv = {&problem.gridDivX, &problem.gridDivY,
                                                                    &problem.gridDivZ};
    static const char* const kBlockSizeNames[] = {"block_size_x", "block_size_y", "block_size_z"};
    for (std::size_t i = 0; i < 3; ++i) {
        if (!global[i]->empty())
            x.global[i] = compile(*global[i], ks + "GlobalSize/" + kAxes[i]);
        if (!local[i]->empty())
            x.local[i] = compile(*local[i], ks + "LocalSize/" + kAxes[i]);
        if (problem.parameterIndex(kBlockSizeNames[i]) >= 0)
            x.defaultDivisor[i] = compile(kBlockSizeNames[i], ks + "GridDiv" + kAxes[i]);
        for (std::size_t k = 0; k < gridDiv[i]->size(); ++k)
            x.gridDiv[i].push_back(compile((*gridDiv[i])[k], ks + "GridDiv" + kAxes[i] + "/" + std::to_string(k)));
    }
    if (!problem.sharedMemory.empty())
        x.shared = compile(problem.sharedMemory, ks + "SharedMemory");

    x.shapeSlots = problem.shapeSlots(shapeIndex, x.storage);
    const auto problemSize = x.storage.items();
    for (std::size_t i = 0; i < 3 && i < problemSize.size(); ++i)
        x.problemSize[i] = problemSize[i].i;

    // Kernel Tuner reads ProblemSize and GridDiv (dividing a dimension without GridDiv by the
    // parameter block_size_x/y/z) and ignores GlobalSize and LocalSize: where a problem gives both
    // and Kernel Tuner's reading means something (GridDiv, or its block size names tuned), that is
    // the reading the file was written (and its caches recorded) for, whatever GlobalSize says.
    // Only a problem whose block Kernel Tuner cannot know (LocalSize of other names, no GridDiv)
    // launches by GlobalSize.
    const bool anyGridDiv = !problem.gridDivX.empty() || !problem.gridDivY.empty() || !problem.gridDivZ.empty();
    const bool hasGlobalSize = !problem.globalSize.x.empty();
    const bool tunesBlockSizeNames = problem.parameterIndex("block_size_x") >= 0 ||
                                     problem.parameterIndex("block_size_y") >= 0 ||
                                     problem.parameterIndex("block_size_z") >= 0;
    if (!problem.problemSize.empty() && (anyGridDiv || tunesBlockSizeNames || !hasGlobalSize))
        x.rule = GridRule::ProblemSizeOverGridDiv;
    else if (!hasGlobalSize)
        throw InputError(problem.fileName, ks + "GlobalSize",
                         "no launch geometry: give GlobalSize (with GlobalSizeType CUDA for blocks, or threads "
                         "divided by LocalSize), or ProblemSize with GridDivX/GridDivY/GridDivZ");
    else if (problem.globalSizeType == "CUDA")
        x.rule = GridRule::GlobalSizeInBlocks;
    else
        x.rule = GridRule::GlobalSizeInThreads;
}

GeometryPlanner::~GeometryPlanner() = default;
GeometryPlanner::GeometryPlanner(GeometryPlanner&&) noexcept = default;

GridRule GeometryPlanner::gridRule() const {
    return m_expressions->rule;
}

std::optional<std::array<std::int64_t, 3>>
GeometryPlanner::globalSizeGrid(const Config& config, const std::array<std::int64_t, 3>& block) const {
    const Expressions& x = *m_expressions;
    if (!x.global[0].valid() || config.size() != m_problem.parameters.size())
        return std::nullopt;
    std::vector<expr::Value> slots = x.shapeSlots;
    for (std::size_t i = 0; i < config.size(); ++i) {
        const auto& values = m_problem.parameters[i].values;
        if (config[i] >= values.size())
            return std::nullopt;
        slots[i] = values[config[i]];
    }
    std::array<std::int64_t, 3> grid{1, 1, 1};
    for (std::size_t i = 0; i < 3; ++i) {
        if (!x.global[i].valid())
            continue;
        try {
            grid[i] = x.global[i].evaluateInt(slots.data());
        } catch (const expr::ExprError&) {
            return std::nullopt;
        }
        if (m_problem.globalSizeType != "CUDA" && block[i] > 0)
            grid[i] = (grid[i] + block[i] - 1) / block[i];
    }
    return grid;
}

std::string sharedMemoryOutOfRange(double bytes) {
    const std::string shown = std::trunc(bytes) == bytes && std::fabs(bytes) < 9.0e18
                                  ? std::to_string(static_cast<std::int64_t>(bytes))
                                  : spec::exactNumber(bytes);
    if (bytes < 0)
        return "SharedMemory must not be negative, got " + shown;
    if (!(bytes <= static_cast<double>(kMax32)))
        return "SharedMemory must be at most " + std::to_string(kMax32) + " bytes (more than any device has), got " +
               shown;
    return {};
}

LaunchGeometry GeometryPlanner::plan(const Config& config) const {
    const Expressions& x = *m_expressions;
    LaunchGeometry p;
    const std::size_t parameters = m_problem.parameters.size();
    if (config.size() != parameters) {
        p.error = "the config has " + std::to_string(config.size()) + " values, the problem " +
                  std::to_string(parameters) + " parameters";
        return p;
    }
    std::vector<expr::Value> slots = x.shapeSlots;
    for (std::size_t i = 0; i < parameters; ++i) {
        const auto& values = m_problem.parameters[i].values;
        if (config[i] >= values.size()) {
            p.error = "the config's value index " + std::to_string(config[i]) + " for " + m_problem.parameters[i].name +
                      " is out of range (it has " + std::to_string(values.size()) + " values)";
            return p;
        }
        slots[i] = values[config[i]];
    }

    // Evaluates an expression to an integer; false with p.error set when it fails.
    auto integer = [&](const expr::Expression& e, const std::string& what, std::int64_t& out) {
        try {
            out = e.evaluateInt(slots.data());
            return true;
        } catch (const expr::ExprError& error) {
            p.error = what + ": " + spec::describeExprErrorInline(error);
            return false;
        }
    };
    auto quoted = [](const expr::Expression& e) { return " '" + e.source() + "'"; };

    for (std::size_t i = 0; i < 3; ++i) {
        const expr::Expression& e = x.local[i];
        if (!e.valid())
            continue;
        const std::string what = std::string("LocalSize.") + kAxes[i];
        if (!integer(e, what, p.block[i]))
            return p;
        if (p.block[i] < 1 || p.block[i] > kMax32) {
            p.error = what + quoted(e) + " is " + std::to_string(p.block[i]) + " threads (a block needs 1 or more" +
                      (p.block[i] < 1 ? ")" : ", and at most 2^31 - 1)");
            return p;
        }
    }
    if (p.block[0] * p.block[1] > kMax32 || p.block[0] * p.block[1] * p.block[2] > kMax32) {
        p.error = "the block of " + std::to_string(p.block[0]) + " x " + std::to_string(p.block[1]) + " x " +
                  std::to_string(p.block[2]) + " threads is beyond any device's limit";
        return p;
    }

    for (std::size_t i = 0; i < 3; ++i) {
        std::int64_t blocks = 1;
        std::string what;
        switch (x.rule) {
        case GridRule::GlobalSizeInBlocks: {
            const expr::Expression& e = x.global[i];
            if (!e.valid())
                break;
            what = std::string("GlobalSize.") + kAxes[i] + quoted(e) + ", in blocks";
            if (!integer(e, std::string("GlobalSize.") + kAxes[i], blocks))
                return p;
            break;
        }
        case GridRule::GlobalSizeInThreads: {
            const expr::Expression& e = x.global[i];
            if (!e.valid())
                break;
            std::int64_t threads = 0;
            if (!integer(e, std::string("GlobalSize.") + kAxes[i], threads))
                return p;
            what = std::string("GlobalSize.") + kAxes[i] + quoted(e) + " = " + std::to_string(threads) +
                   " threads over blocks of " + std::to_string(p.block[i]);
            if (threads < 1) {
                p.error = std::string("GlobalSize.") + kAxes[i] + quoted(e) + " is " + std::to_string(threads) +
                          " threads (the grid needs at least one block)";
                return p;
            }
            blocks = threads / p.block[i] + (threads % p.block[i] != 0 ? 1 : 0);
            break;
        }
        case GridRule::ProblemSizeOverGridDiv: {
            const std::int64_t size = x.problemSize[i];
            if (size < 1) {
                p.error = "ProblemSize[" + std::to_string(i) + "] is " + std::to_string(size) +
                          " (the grid needs at least one block)";
                return p;
            }
            what = "ProblemSize[" + std::to_string(i) + "] = " + std::to_string(size) + " over ";
            if (x.gridDiv[i].empty()) {
                // Kernel Tuner's default divisor: the parameter block_size_x/y/z, else 1.
                std::int64_t divisor = 1;
                if (x.defaultDivisor[i].valid()) {
                    if (!integer(x.defaultDivisor[i], x.defaultDivisor[i].source(), divisor))
                        return p;
                    if (divisor < 1) {
                        p.error = x.defaultDivisor[i].source() + " is " + std::to_string(divisor) +
                                  " (a grid divisor must be positive)";
                        return p;
                    }
                    what += x.defaultDivisor[i].source() + " = " + std::to_string(divisor);
                } else {
                    what += "1 (no GridDiv" + std::string(kAxes[i]) + ", no parameter block_size_" +
                            static_cast<char>('x' + i) + ")";
                }
                blocks = size / divisor + (size % divisor != 0 ? 1 : 0);
                break;
            }
            double product = 1;
            bool integral = true;
            std::string divisors;
            for (std::size_t k = 0; k < x.gridDiv[i].size(); ++k) {
                const expr::Expression& e = x.gridDiv[i][k];
                const std::string name = std::string("GridDiv") + kAxes[i] + "[" + std::to_string(k) + "]";
                double d = 0;
                try {
                    d = e.evaluateNumber(slots.data());
                } catch (const expr::ExprError& error) {
                    p.error = name + ": " + spec::describeExprErrorInline(error);
                    return p;
                }
                if (!(d > 0) || !std::isfinite(d)) {
                    p.error = name + quoted(e) + " is " + spec::exactNumber(d) + " (a grid divisor must be positive)";
                    return p;
                }
                product *= d;
                integral = integral && std::trunc(d) == d;
                divisors += (divisors.empty() ? "" : " * ") + e.source();
            }
            what += divisors;
            // Whole divisors divide exactly (a product below 2^53 is exact in a double), as
            // Kernel Tuner's ceil(float(size) / float(product)) does for any size it can hold.
            if (integral && product < 9007199254740992.0) {
                const auto divisor = static_cast<std::int64_t>(product);
                blocks = size / divisor + (size % divisor != 0 ? 1 : 0);
            } else {
                blocks = static_cast<std::int64_t>(std::min(std::ceil(static_cast<double>(size) / product), 9.0e18));
            }
            break;
        }
        }
        if (blocks < 1 || blocks > kMax32) {
            p.error = std::string("the grid's ") + kAxes[i] + " size is " + std::to_string(blocks) + " blocks" +
                      (what.empty() ? std::string() : " (" + what + ")") +
                      (blocks < 1 ? ": a grid needs at least one block" : ": more than 2^31 - 1");
            return p;
        }
        p.grid[i] = blocks;
    }

    if (x.shared.valid()) {
        if (!integer(x.shared, "SharedMemory", p.sharedDynamic))
            return p;
        if (p.sharedDynamic < 0 || p.sharedDynamic > kMax32) {
            p.error = "SharedMemory" + quoted(x.shared) + " is " + std::to_string(p.sharedDynamic) + " bytes" +
                      (p.sharedDynamic < 0 ? " (negative)" : " (more than any device has)");
            return p;
        }
    }
    return p;
}

} // namespace tilescope
