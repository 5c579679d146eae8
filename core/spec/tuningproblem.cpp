#include "spec/tuningproblem.h"

#include "base/error.h"
#include "base/sha256.h"
#include "spec/t1common.h"
#include "spec/tritonscan.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cctype>
#include <cerrno>
#include <fstream>
#include <iterator>
#include <system_error>

namespace tilescope {

bool TuningParameter::operator==(const TuningParameter& o) const {
    if (name != o.name || type != o.type || valuesText != o.valuesText || values.size() != o.values.size())
        return false;
    for (std::size_t i = 0; i < values.size(); ++i) {
        // Python's == says 1 == 1.0 == True; a value list of the other kind is another list.
        if (values[i].kind != o.values[i].kind || !expr::equal(values[i], o.values[i]))
            return false;
    }
    return true;
}

std::string Shape::label() const {
    std::string out;
    for (const auto& [name, value] : dims) {
        if (!out.empty())
            out += ' ';
        out += name + '=' + std::to_string(value);
    }
    return out;
}

TuningProblem TuningProblem::load(const std::filesystem::path& path) {
    const std::string file = path.string();
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw InputError(file, "", "is a folder, not a problem file");
    errno = 0;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        const int error = errno;
        throw InputError(file, "",
                         "cannot open the file" +
                             (error != 0 ? ": " + std::generic_category().message(error) : std::string()));
    }
    std::string text;
    std::array<char, 1 << 16> buffer;
    while (in.read(buffer.data(), buffer.size()) || in.gcount() > 0)
        text.append(buffer.data(), static_cast<std::size_t>(in.gcount()));
    if (in.bad())
        throw InputError(file, "", "cannot read the file");

    std::filesystem::path dir = std::filesystem::absolute(path, ec).parent_path();
    if (dir.empty())
        dir = ".";
    TuningProblem problem = parse(text, file, dir);
    problem.problemPath = path;
    return problem;
}

void TuningProblem::save(const std::filesystem::path& path) const {
    const std::string file = path.string();
    const std::string text = toJson() + "\n";
    // Write beside the target and rename, so that a full disk never leaves half a problem.
    std::filesystem::path tmp = path;
    tmp += ".tmp";
    {
        errno = 0;
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) {
            const int error = errno;
            throw InputError(file, "",
                             "cannot write the file" +
                                 (error != 0 ? ": " + std::generic_category().message(error) : std::string()));
        }
        out << text;
        out.close();
        if (!out) {
            std::error_code ignored;
            std::filesystem::remove(tmp, ignored);
            throw InputError(file, "", "cannot write the file");
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::error_code ignored;
        std::filesystem::remove(tmp, ignored);
        throw InputError(file, "", "cannot write the file: " + ec.message());
    }
}

std::filesystem::path TuningProblem::kernelPath() const {
    const std::filesystem::path file(kernelFile);
    if (file.is_absolute() || baseDir.empty())
        return file;
    return baseDir / file;
}

expr::Scope TuningProblem::scope() const {
    expr::Scope scope;
    for (const TuningParameter& p : parameters) {
        scope.addVariable(p.name);
        scope.setValueList(p.name, p.values);
    }
    for (const Shape& shape : shapes) {
        for (const auto& dim : shape.dims)
            scope.addVariable(dim.first);
    }
    scope.addVariable("ProblemSize");
    for (const auto& [name, value] : implicitBlockSizes())
        scope.addConstant(name, expr::Value::ofInt(value));
    return scope;
}

std::vector<std::pair<std::string, std::int64_t>> TuningProblem::implicitBlockSizes() const {
    std::vector<std::pair<std::string, std::int64_t>> out;
    for (const auto& [name, value] :
         {std::pair<const char*, std::int64_t>{"block_size_x", 256}, {"block_size_y", 1}, {"block_size_z", 1}}) {
        bool taken = parameterIndex(name) >= 0;
        for (const Shape& shape : shapes) {
            for (const auto& dim : shape.dims)
                taken = taken || dim.first == name;
        }
        if (!taken)
            out.emplace_back(name, value);
    }
    return out;
}

ThreeD TuningProblem::blockExpressions() const {
    if (!localSize.x.empty())
        return localSize;
    if (isTriton())
        return ThreeD{parameterIndex("num_warps") >= 0 ? "num_warps * 32" : std::to_string(kTritonDefaultWarps * 32),
                      "1", "1"};
    return ThreeD{"block_size_x", "block_size_y", "block_size_z"};
}

namespace {
bool languageIs(const std::string& language, std::string_view upperName) {
    std::string upper = language;
    for (char& c : upper)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return upper == upperName;
}
} // namespace

bool TuningProblem::isCuda() const {
    return languageIs(language, "CUDA");
}

bool TuningProblem::isTriton() const {
    return languageIs(language, "TRITON");
}

void TuningProblem::requireLaunchable() const {
    if (launchBlockers.empty())
        return;
    const InputError& first = launchBlockers.front();
    throw InputError(first.file(), first.location(),
                     first.message() +
                         ". Without a kernel to compile, 'space' still counts and samples this problem, and a "
                         "recording of it (a Kernel Tuner cache, T4, a Tilescope database) replays with "
                         "'tune --backend replay:FILE' and in the lab");
}

std::vector<expr::Value> TuningProblem::shapeSlots(std::size_t shapeIndex, expr::ValueList& storage) const {
    static const Shape kNoShape;
    // A problem made in memory may have no shape at all; it behaves as one empty shape.
    const Shape& shape = shapes.empty() && shapeIndex == 0 ? kNoShape : shapes.at(shapeIndex);
    const expr::Scope scope = this->scope();
    std::vector<expr::Value> slots(static_cast<std::size_t>(scope.slotCount()));
    const int firstShapeSlot = static_cast<int>(parameters.size());
    for (const auto& [name, value] : shape.dims) {
        const int slot = scope.slotOf(name);
        if (slot >= firstShapeSlot)
            slots[static_cast<std::size_t>(slot)] = expr::Value::ofInt(value);
    }

    storage = expr::ValueList();
    for (std::size_t i = 0; i < problemSize.size(); ++i) {
        try {
            const expr::Expression e = expr::Expression::compile(problemSize[i], scope);
            storage.push_back(expr::Value::ofInt(e.evaluateInt(slots.data())));
        } catch (const expr::ExprError& error) {
            std::string message = spec::describeExprError(error);
            if (!shape.dims.empty())
                message += " (shape " + shape.label() + ")";
            throw InputError(fileName, "/KernelSpecification/ProblemSize/" + std::to_string(i), message);
        }
    }
    slots[static_cast<std::size_t>(scope.slotOf("ProblemSize"))] = storage.value();
    return slots;
}

int TuningProblem::parameterIndex(std::string_view name) const {
    for (std::size_t i = 0; i < parameters.size(); ++i) {
        if (parameters[i].name == name)
            return static_cast<int>(i);
    }
    return -1;
}

std::string TuningProblem::specHash() const {
    nlohmann::ordered_json doc = nlohmann::ordered_json::parse(toJson());
    doc.erase("Budget");
    doc.erase("Search");
    if (const auto ts = doc.find("Tilescope"); ts != doc.end() && ts->is_object())
        for (const char* key : {"Shapes", "Objective", "Objectives", "Roofline", "Metrics", "Silence", "Configs"})
            ts->erase(key);
    return Sha256::hex(Sha256::hash(doc.dump()));
}

std::string TuningProblem::sourceHash() const {
    std::ifstream in(kernelPath(), std::ios::binary);
    if (!in)
        return {};
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    return Sha256::hex(Sha256::hash(bytes));
}

bool TuningProblem::operator==(const TuningProblem& o) const {
    return general == o.general && parameters == o.parameters && conditions == o.conditions && language == o.language &&
           kernelName == o.kernelName && kernelFile == o.kernelFile && compilerOptions == o.compilerOptions &&
           globalSize == o.globalSize && localSize == o.localSize && globalSizeType == o.globalSizeType &&
           gridDivX == o.gridDivX && gridDivY == o.gridDivY && gridDivZ == o.gridDivZ && problemSize == o.problemSize &&
           sharedMemory == o.sharedMemory && arguments == o.arguments && referenceArguments == o.referenceArguments &&
           device == o.device && profiling == o.profiling && simulationInput == o.simulationInput &&
           searchName == o.searchName && searchAttributes == o.searchAttributes && budget == o.budget &&
           shapes == o.shapes && shapesSource == o.shapesSource && objective == o.objective &&
           objectives == o.objectives && roofline == o.roofline && metrics == o.metrics &&
           silencedWarnings == o.silencedWarnings && configList == o.configList && partialOutputs == o.partialOutputs &&
           verifyWithin == o.verifyWithin && compiler == o.compiler && unknownFields == o.unknownFields;
}

} // namespace tilescope
