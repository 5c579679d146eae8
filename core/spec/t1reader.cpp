// Reading and validating a T1 problem file. Every error the file can cause becomes an
// InputError that points at the field (a JSON pointer) or, for bad JSON, at the line and column.

#include "base/error.h"
#include "base/jsonreader.h"
#include "spec/launchgeometry.h"
#include "spec/launchplan.h"
#include "spec/t1common.h"
#include "spec/tritonscan.h"
#include "spec/tuningproblem.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <new>
#include <set>
#include <span>
#include <string_view>
#include <system_error>
#include <unordered_map>

namespace tilescope {

namespace {

using spec::Json;

// About a century, in seconds: more than any tuning run, well within a clock's range.
constexpr std::int64_t kMaxDurationSeconds = 3'200'000'000;
// A Config stores the index of each parameter's value in 16 bits.
constexpr std::size_t kMaxValues = 65535;
// Larger than any kernel; a file past it is not source (compiling says so).
constexpr std::uintmax_t kMaxKernelBytes = 16u << 20;

constexpr std::array kParameterTypes = {"int", "uint", "float", "bool", "string"};
constexpr std::array kLanguages = {"CUDA", "OpenCL", "Vulkan"};
// T1's types, and bfloat16 and the two FP8 types (Tilescope additions: the T1 schema predates them).
constexpr std::array kArgumentTypes = {"bool",     "int8",        "uint8",       "int16",   "uint16",  "int32",
                                       "uint32",   "int64",       "uint64",      "half",    "half2",   "half4",
                                       "half8",    "half16",      "float",       "float2",  "float4",  "float8",
                                       "float16",  "double",      "double2",     "double4", "double8", "double16",
                                       "bfloat16", "float8_e4m3", "float8_e5m2", "custom"};
constexpr std::array kMemoryTypes = {"Scalar", "Vector", "Local", "Symbol"};
constexpr std::array kAccessTypes = {"ReadOnly", "WriteOnly", "ReadWrite"};
constexpr std::array kFillTypes = {"Constant", "Random", "Generator", "Script", "BinaryRaw", "BinaryHDF"};
constexpr std::array kValidationMethods = {"AbsoluteDifference", "SideBySideComparison",
                                           "SideBySideRelativeComparison"};
constexpr std::array kBudgetTypes = {"TuningDuration", "ConfigurationCount", "ConfigurationFraction"};
constexpr std::array kLoggingLevels = {"Off", "Error", "Warning", "Info", "Debug"};
constexpr std::array kTimeUnits = {"Nanoseconds", "Microseconds", "Milliseconds", "Seconds"};
constexpr std::array kOutputFormats = {"JSON", "XML"};

// Names an expression cannot bind to a parameter or a shape dimension: Python's keywords and
// the builtins of core/expr (expr::builtinNames(), plus `str` and `math`).
constexpr std::array kKeywords = {"False",  "None",   "True",    "and",      "as",       "assert", "async",
                                  "await",  "break",  "class",   "continue", "def",      "del",    "elif",
                                  "else",   "except", "finally", "for",      "from",     "global", "if",
                                  "import", "in",     "is",      "lambda",   "nonlocal", "not",    "or",
                                  "pass",   "raise",  "return",  "try",      "while",    "with",   "yield"};

template <std::size_t N>
bool contains(const std::array<const char*, N>& names, std::string_view name) {
    return std::any_of(names.begin(), names.end(), [&](const char* n) { return name == n; });
}

template <std::size_t N>
std::string joined(const std::array<const char*, N>& names) {
    std::string out;
    for (const char* n : names) {
        if (!out.empty())
            out += ", ";
        out += n;
    }
    return out;
}

std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) {
        if (!out.empty())
            out += ", ";
        out += n;
    }
    return out;
}

bool isIdentifier(std::string_view s) {
    if (s.empty())
        return false;
    auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
    auto digit = [](char c) { return c >= '0' && c <= '9'; };
    if (!alpha(s.front()))
        return false;
    return std::all_of(s.begin(), s.end(), [&](char c) { return alpha(c) || digit(c); });
}

/// Why `name` cannot name a parameter or a shape dimension, or nullptr if it can.
const char* reservedReason(std::string_view name) {
    if (contains(kKeywords, name))
        return "a Python keyword";
    const auto& builtins = expr::builtinNames();
    if (name == "str" || name == "math" || std::find(builtins.begin(), builtins.end(), name) != builtins.end())
        return "a builtin function";
    if (name == "ProblemSize")
        return "the name of the problem size list";
    return nullptr;
}

class Reader {
public:
    Reader(std::string file, std::filesystem::path baseDir)
        : m_file(std::move(file))
        , m_baseDir(std::move(baseDir)) {}

    TuningProblem read(const std::string& text) {
        m_p.fileName = m_file;
        m_p.baseDir = m_baseDir;
        const Json root = parseJson(text, m_file, {.rejectDuplicateKeys = true});
        const JsonNode top(root, m_file);
        top.expectObject();
        // Sections in a fixed order, so that a file with several mistakes reports the same one
        // every time.
        if (auto n = top.member("General"))
            readGeneral(*n);
        readConfigurationSpace(top.required("ConfigurationSpace"));
        readKernelSpecification(top.required("KernelSpecification"));
        if (auto n = top.member("Search"))
            readSearch(*n);
        if (auto n = top.member("Budget"))
            readBudget(*n);
        if (auto n = top.member("Tilescope"))
            readTilescope(*n);
        keepUnknown(top, {"General", "ConfigurationSpace", "KernelSpecification", "Search", "Budget", "Tilescope"});

        if (m_p.shapes.empty())
            m_p.shapes.emplace_back();
        checkNameClashes();
        compileExpressions();
        checkSizes();
        checkKernelFile();
        return std::move(m_p);
    }

private:
    [[noreturn]] void fail(const std::string& location, const std::string& message) const {
        throw InputError(m_file, location, message);
    }

    /// Something that stops the kernel from being compiled or launched, not the space from
    /// being read: kept for TuningProblem::requireLaunchable().
    void block(const std::string& location, const std::string& message) {
        m_p.launchBlockers.emplace_back(m_file, location, message);
    }

    std::string asNonEmptyString(const JsonNode& n, std::string_view field) const {
        std::string s = n.asString();
        if (s.empty())
            n.fail("empty " + std::string(field));
        return s;
    }

    /// Keeps the members of `obj` that are not in `known`, for writing back.
    void keepUnknown(const JsonNode& obj, std::initializer_list<std::string_view> known) {
        Json unknown = Json::object();
        for (const auto& [key, value] : obj->items()) {
            if (std::find(known.begin(), known.end(), key) == known.end())
                unknown[key] = value;
        }
        if (!unknown.empty())
            m_p.unknownFields[obj.pointer()] = unknown.dump();
    }

    // ---- expressions ----

    /// Plain expressions must compile for the problem to load; Launch ones (geometry, argument
    /// sizes) are needed only to compile and run the kernel, so their failure blocks that alone.
    enum class Role { Plain, ProblemSize, Launch, TensorMap };
    struct Pending {
        std::string ptr;
        std::string source;
        Role role;
    };

    /// An expression to compile once the scope (parameters, shape names) is known.
    void expression(const JsonNode& n, const std::string& source, Role role = Role::Plain) {
        m_pending.push_back({n.pointer(), source, role});
    }

    void compileExpressions() {
        const expr::Scope scope = m_p.scope();
        const int firstShapeSlot = static_cast<int>(m_p.parameters.size());
        const int problemSizeSlot = scope.slotOf("ProblemSize");
        for (const Pending& pending : m_pending) {
            expr::Expression e;
            try {
                e = expr::Expression::compile(pending.source, scope);
            } catch (const expr::ExprError& error) {
                if (pending.role == Role::Launch || pending.role == Role::TensorMap) {
                    block(pending.ptr, spec::describeExprError(error));
                    continue;
                }
                fail(pending.ptr, spec::describeExprError(error));
            }
            if (pending.role == Role::TensorMap) {
                // The worker encodes a tensor map once per shape, before any config runs.
                for (int slot : e.usedSlots()) {
                    if (slot >= firstShapeSlot)
                        continue;
                    const std::string p = scope.nameOf(slot);
                    block(pending.ptr, "'" + pending.source + "' depends on the config (parameter '" + p +
                                           "'); a tensor map is built once per shape, so its Dims and Box may use "
                                           "the shape's names and min(" +
                                           p + ") or max(" + p + "), not the parameter itself");
                    break;
                }
                continue;
            }
            if (pending.role != Role::ProblemSize)
                continue;
            // ProblemSize is a fact of the shape, fixed before any config is chosen.
            for (int slot : e.usedSlots()) {
                if (slot >= firstShapeSlot && slot != problemSizeSlot)
                    continue;
                std::vector<std::string> shapeNames;
                for (int s = firstShapeSlot; s < problemSizeSlot; ++s)
                    shapeNames.push_back(scope.nameOf(s));
                fail(pending.ptr, "ProblemSize may use only the shape names (" +
                                      (shapeNames.empty() ? std::string("there are none") : joined(shapeNames)) +
                                      "), not '" + scope.nameOf(slot) + "', in '" + pending.source + "'");
            }
        }
        // Evaluate ProblemSize for every shape now, so that shapeSlots() cannot fail later.
        for (std::size_t s = 0; s < m_p.shapes.size(); ++s) {
            expr::ValueList storage;
            m_p.shapeSlots(s, storage);
        }
    }

    // Sizes written as expressions (an argument's Size, SharedMemory) are range-checked as a
    // number in the file is, for every shape, with the message a number gets and where the value
    // came from. A Size that reads a parameter directly (not through min() or max()) is checked
    // for each combination of the values it reads, up to a few thousand, naming the values: a
    // buffer is allocated once for every config. SharedMemory that reads one is checked for each
    // config as it is launched (conditions may keep the values out). An expression that fails
    // otherwise is left to the launch's checks, which name it; counting a space needs no buffer.
    void checkSizes() {
        for (std::size_t i = 0; i < m_p.arguments.size(); ++i) {
            const KernelArgument& a = m_p.arguments[i];
            if (!a.sizeIsNumber && !a.size.empty())
                checkRange(a.size, "/KernelSpecification/Arguments/" + std::to_string(i) + "/Size", true,
                           [&](double count) { return sizeOutOfRange(count, a.type); });
        }
        if (!m_p.sharedMemory.empty() && !spec::parseIntegerLiteral(m_p.sharedMemory))
            checkRange(m_p.sharedMemory, "/KernelSpecification/SharedMemory", false, sharedMemoryOutOfRange);
    }

    template <typename Rule>
    void checkRange(const std::string& source, const std::string& pointer, bool perParameterValue, const Rule& rule) {
        constexpr std::uint64_t kMaxCombinations = 4096;
        const int parameters = static_cast<int>(m_p.parameters.size());
        expr::Expression e;
        try {
            e = expr::Expression::compile(source, m_p.scope());
        } catch (const expr::ExprError&) {
            return; // a launch blocker already
        }
        std::vector<int> read; // the parameters it reads directly
        std::uint64_t combinations = 1;
        for (int slot : e.usedSlots()) {
            if (slot >= parameters)
                continue;
            if (!perParameterValue)
                return;
            read.push_back(slot);
            combinations *= m_p.parameters[static_cast<std::size_t>(slot)].values.size();
            if (combinations > kMaxCombinations)
                return;
        }
        for (std::size_t shape = 0; shape < m_p.shapes.size(); ++shape) {
            expr::ValueList storage;
            std::vector<expr::Value> slots = m_p.shapeSlots(shape, storage);
            std::vector<std::size_t> at(read.size(), 0); // the value of each parameter read
            for (std::uint64_t c = 0; c < combinations; ++c) {
                std::string config;
                for (std::size_t k = 0; k < read.size(); ++k) {
                    const TuningParameter& p = m_p.parameters[static_cast<std::size_t>(read[k])];
                    slots[static_cast<std::size_t>(read[k])] = p.values[at[k]];
                    config += (config.empty() ? "" : " ") + p.name + "=" + expr::repr(p.values[at[k]]);
                }
                expr::Value v;
                expr::EvalStatus status;
                std::string why;
                if (!e.tryEvaluate(slots.data(), v, status)) {
                    if (status.kind == expr::ErrorKind::Overflow) { // past 64 bits (10**20): past every limit
                        why = rule(std::numeric_limits<double>::max());
                        why = why.substr(0, why.rfind(", got ")) + ", got a number past 64 bits";
                    }
                } else if (v.isNumber()) {
                    why = rule(v.kind == expr::Kind::Float ? v.f : static_cast<double>(v.i));
                }
                if (!why.empty()) {
                    const Shape& s = m_p.shapes[shape];
                    std::string context = "from '" + source + "'";
                    if (!s.dims.empty())
                        context += " for shape " + s.label();
                    if (!config.empty())
                        context += (s.dims.empty() ? " for " : " and ") + config;
                    fail(pointer, why + " (" + context + ")");
                }
                for (std::size_t k = 0; k < read.size(); ++k) { // the next combination
                    if (++at[k] < m_p.parameters[static_cast<std::size_t>(read[k])].values.size())
                        break;
                    at[k] = 0;
                }
            }
        }
    }

    // ---- sections ----

    void readGeneral(const JsonNode& general) {
        general.expectObject();
        for (const auto& [key, value] : general->items()) {
            const JsonNode n = general.child(key, value);
            if (key == "FormatVersion")
                n.asInt();
            else if (key == "LoggingLevel")
                n.asEnum(key, kLoggingLevels);
            else if (key == "TimeUnit")
                n.asEnum(key, kTimeUnits);
            else if (key == "OutputFile")
                n.asString();
            else if (key == "OutputFormat")
                n.asEnum(key, kOutputFormats);
            m_p.general[key] = value.dump();
        }
    }

    void readConfigurationSpace(const JsonNode& space) {
        space.expectObject();
        const JsonNode params = space.required("TuningParameters");
        params.expectArray();
        std::map<std::string, std::string> firstAt;
        for (std::size_t i = 0; i < params->size(); ++i) {
            const JsonNode pn = params.item(i);
            pn.expectObject();
            TuningParameter tp;
            const JsonNode nameNode = pn.required("Name");
            tp.name = nameNode.asString();
            checkName(nameNode, tp.name, "parameter name");
            if (auto [it, fresh] = firstAt.emplace(tp.name, pn.pointer()); !fresh)
                nameNode.fail("duplicate parameter name '" + tp.name + "' (first at " + it->second + ")");
            tp.type = pn.required("Type").asEnum("Type", kParameterTypes);
            const JsonNode valuesNode = pn.required("Values");
            if (valuesNode->is_array()) {
                // Not T1 (Values is Python text there), but written often enough: kept as an array.
                tp.valuesText = valuesNode->dump();
                tp.valuesAsArray = true;
            } else {
                tp.valuesText = valuesNode.asString();
            }
            readValues(valuesNode, tp);
            keepUnknown(pn, {"Name", "Type", "Values"});
            m_p.parameters.push_back(std::move(tp));
        }

        if (auto conditions = space.member("Conditions")) {
            conditions->expectArray();
            for (std::size_t i = 0; i < (*conditions)->size(); ++i) {
                const JsonNode cn = conditions->item(i);
                cn.expectObject();
                Condition c;
                c.parameters = cn.required("Parameters").asStringArray();
                const JsonNode en = cn.required("Expression");
                c.expression = en.asString();
                expression(en, c.expression);
                keepUnknown(cn, {"Parameters", "Expression"});
                m_p.conditions.push_back(std::move(c));
            }
        }
        keepUnknown(space, {"TuningParameters", "Conditions"});
    }

    void checkName(const JsonNode& n, const std::string& name, std::string_view what) const {
        if (!isIdentifier(name))
            n.fail(std::string(what) + " '" + name +
                   "' is not a valid identifier (letters, digits and '_', not starting with a digit)");
        if (const char* reason = reservedReason(name))
            n.fail(std::string(what) + " '" + name + "' is reserved (" + reason + ")");
    }

    void readValues(const JsonNode& n, TuningParameter& tp) const {
        std::vector<std::unique_ptr<std::string>> strings;
        std::vector<expr::Value> values;
        if (tp.valuesAsArray) {
            for (std::size_t i = 0; i < n->size(); ++i) {
                const JsonNode item = n.item(i);
                if (item->is_boolean()) {
                    values.push_back(expr::Value::ofBool(item->get<bool>()));
                } else if (item->is_number_integer()) {
                    values.push_back(expr::Value::ofInt(item.asInt()));
                } else if (item->is_number_float()) {
                    values.push_back(expr::Value::ofFloat(item->get<double>()));
                } else if (item->is_string()) {
                    strings.push_back(std::make_unique<std::string>(item->get<std::string>()));
                    values.push_back(expr::Value::ofStr(strings.back().get()));
                } else {
                    item.fail(std::string("expected a number, a string or a boolean, got ") + describeJson(*item));
                }
            }
        } else {
            try {
                values = expr::parseValueList(tp.valuesText, strings);
            } catch (const expr::ExprError& e) {
                n.fail(spec::describeExprError(e));
            }
        }
        if (values.empty())
            n.fail("empty value list in '" + tp.valuesText + "'");
        if (values.size() > kMaxValues)
            n.fail("too many values (" + std::to_string(values.size()) + "; at most " + std::to_string(kMaxValues) +
                   ")");

        auto article = [](expr::Kind k) { return k == expr::Kind::Int ? "an " : "a "; };
        std::map<std::int64_t, std::size_t> ints;
        std::map<double, std::size_t> floats;
        std::map<std::string, std::size_t> strs;
        for (std::size_t i = 0; i < values.size(); ++i) {
            const expr::Value& v = values[i];
            bool ok = false;
            if (tp.type == "int" || tp.type == "uint")
                ok = v.kind == expr::Kind::Int;
            else if (tp.type == "float")
                ok = v.kind == expr::Kind::Int || v.kind == expr::Kind::Float;
            else if (tp.type == "bool")
                ok = v.kind == expr::Kind::Bool;
            else if (tp.type == "string")
                ok = v.kind == expr::Kind::Str;
            if (v.kind == expr::Kind::List)
                n.fail("value " + std::to_string(i) + " is a list, but Type is '" + tp.type + "'");
            if (!ok)
                n.fail("value " + expr::repr(v) + " is " + article(v.kind) + expr::typeName(v.kind) +
                       ", but Type is '" + tp.type + "'");
            if (v.kind == expr::Kind::Float && !std::isfinite(v.f))
                n.fail("value " + expr::repr(v) + " is not a finite number");
            if (tp.type == "uint" && v.i < 0)
                n.fail("value " + expr::repr(v) + " is negative, but Type is 'uint'");

            // Python's == decides what a duplicate is (1 == 1.0).
            std::size_t first = i;
            if (v.kind == expr::Kind::Str) {
                first = strs.emplace(*v.s, i).first->second;
            } else if (v.kind == expr::Kind::Float && !(std::trunc(v.f) == v.f && std::fabs(v.f) < 9.2e18)) {
                first = floats.emplace(v.f, i).first->second;
            } else {
                const auto key = v.kind == expr::Kind::Float ? static_cast<std::int64_t>(v.f) : v.i;
                first = ints.emplace(key, i).first->second;
            }
            if (first != i)
                n.fail("duplicate value " + expr::repr(v) + " in the value list (at indices " + std::to_string(first) +
                       " and " + std::to_string(i) + ")");
        }
        tp.values = std::move(values);
        tp.strings = std::make_shared<const std::vector<std::unique_ptr<std::string>>>(std::move(strings));
    }

    void readKernelSpecification(const JsonNode& ks) {
        ks.expectObject();
        // Any language reads (counting needs no kernel); Tilescope compiles CUDA and Triton.
        const JsonNode languageNode = ks.required("Language");
        m_p.language = asNonEmptyString(languageNode, "Language");
        if (!m_p.isCuda() && !m_p.isTriton())
            block(languageNode.pointer(),
                  "the kernel is " + m_p.language + ", and Tilescope compiles and runs CUDA and Triton kernels only");
        if (auto n = ks.member("CompilerOptions"))
            m_p.compilerOptions = n->asStringArray();
        m_p.kernelName = asNonEmptyString(ks.required("KernelName"), "KernelName");
        m_p.kernelFile = asNonEmptyString(ks.required("KernelFile"), "KernelFile");
        m_kernelFilePtr = ks.child("KernelFile").pointer();
        if (auto n = ks.member("GlobalSizeType"))
            m_p.globalSizeType = n->asEnum("GlobalSizeType", kLanguages);
        // T1 requires both, but Kernel Tuner's loader reads neither (it takes ProblemSize, GridDiv
        // and the block_size_x/y/z parameters): files written for it may leave them out.
        if (auto n = ks.member("GlobalSize"))
            m_p.globalSize = readThreeD(*n);
        if (auto n = ks.member("LocalSize"))
            m_p.localSize = readThreeD(*n);
        m_p.gridDivX = readExpressionList(ks, "GridDivX");
        m_p.gridDivY = readExpressionList(ks, "GridDivY");
        m_p.gridDivZ = readExpressionList(ks, "GridDivZ");
        if (auto n = ks.member("ProblemSize")) {
            // Kernel Tuner also takes a single number.
            if ((*n)->is_number_integer() || (*n)->is_string()) {
                m_p.problemSize.push_back(asExpressionText(*n));
                expression(*n, m_p.problemSize.back(), Role::ProblemSize);
            } else {
                n->expectArray();
                for (std::size_t i = 0; i < (*n)->size(); ++i) {
                    const JsonNode item = n->item(i);
                    m_p.problemSize.push_back(asExpressionText(item));
                    expression(item, m_p.problemSize.back(), Role::ProblemSize);
                }
            }
        }
        if (auto n = ks.member("SharedMemory")) {
            // A number out of range gets the message an expression's value gets (checkSizes).
            if ((*n)->is_number() && !(*n)->is_number_integer() &&
                std::trunc((*n)->get<double>()) == (*n)->get<double>())
                if (const std::string why = sharedMemoryOutOfRange((*n)->get<double>()); !why.empty())
                    n->fail(why);
            if ((*n)->is_number_unsigned() && (*n)->get<std::uint64_t>() > std::uint64_t(INT64_MAX))
                n->fail(sharedMemoryOutOfRange(static_cast<double>((*n)->get<std::uint64_t>())));
            if ((*n)->is_number_integer()) {
                const std::int64_t bytes = n->asInt();
                if (const std::string why = sharedMemoryOutOfRange(static_cast<double>(bytes)); !why.empty())
                    n->fail(why);
                m_p.sharedMemory = std::to_string(bytes);
            } else if ((*n)->is_string()) {
                m_p.sharedMemory = (*n)->get<std::string>();
                expression(*n, m_p.sharedMemory, Role::Launch);
            } else {
                n->fail(std::string("expected an integer or a string, got ") + describeJson(**n));
            }
        }
        if (auto n = ks.member("Device"))
            m_p.device = readDevice(*n);
        if (auto n = ks.member("Profiling"))
            m_p.profiling = n->asBool();
        if (auto n = ks.member("SimulationInput"))
            m_p.simulationInput = n->asString();
        if (auto n = ks.member("Arguments"))
            readArguments(*n);
        if (auto n = ks.member("ReferenceArguments"))
            readReferenceArguments(*n);
        keepUnknown(ks, {"Language", "CompilerOptions", "KernelName", "KernelFile", "GlobalSizeType", "GlobalSize",
                         "LocalSize", "GridDivX", "GridDivY", "GridDivZ", "ProblemSize", "SharedMemory", "Device",
                         "Profiling", "SimulationInput", "Arguments", "ReferenceArguments"});
    }

    /// An expression written as a string, or an integer (kept as its digits).
    std::string asExpressionText(const JsonNode& n) const {
        if (n->is_number_integer())
            return std::to_string(n.asInt());
        if (!n->is_string())
            n.fail(std::string("expected an integer or a string, got ") + describeJson(*n));
        return n->get<std::string>();
    }

    ThreeD readThreeD(const JsonNode& n) {
        n.expectObject();
        ThreeD d;
        const JsonNode x = n.required("X");
        d.x = asExpressionText(x);
        expression(x, d.x, Role::Launch);
        if (auto y = n.member("Y")) {
            d.y = asExpressionText(*y);
            expression(*y, d.y, Role::Launch);
        }
        if (auto z = n.member("Z")) {
            d.z = asExpressionText(*z);
            expression(*z, d.z, Role::Launch);
        }
        keepUnknown(n, {"X", "Y", "Z"});
        return d;
    }

    /// GridDivX and friends: a list of expressions; null is absent (Kernel Tuner's None).
    std::vector<std::string> readExpressionList(const JsonNode& ks, std::string_view key) {
        std::vector<std::string> out;
        auto n = ks.member(key);
        if (!n || (*n)->is_null())
            return out;
        n->expectArray();
        for (std::size_t i = 0; i < (*n)->size(); ++i) {
            out.push_back(asExpressionText(n->item(i)));
            expression(n->item(i), out.back(), Role::Launch);
        }
        return out;
    }

    DeviceSpec readDevice(const JsonNode& n) {
        n.expectObject();
        DeviceSpec d;
        if (auto v = n.member("PlatformId"))
            d.platformId = v->asInt();
        if (auto v = n.member("DeviceId"))
            d.deviceId = v->asInt();
        if (auto v = n.member("Name"))
            d.name = v->asString();
        keepUnknown(n, {"PlatformId", "DeviceId", "Name"});
        return d;
    }

    void readArguments(const JsonNode& args) {
        args.expectArray();
        std::map<std::string, std::string> firstAt;
        for (std::size_t i = 0; i < args->size(); ++i) {
            const JsonNode an = args.item(i);
            an.expectObject();
            KernelArgument a;
            if (auto n = an.member("Name")) {
                a.name = n->asString();
                if (!a.name.empty()) {
                    if (auto [it, fresh] = firstAt.emplace(a.name, an.pointer()); !fresh)
                        n->fail("duplicate argument name '" + a.name + "' (first at " + it->second + ")");
                }
            }
            a.type = an.required("Type").asEnum("Type", kArgumentTypes);
            a.memoryType = an.required("MemoryType").asEnum("MemoryType", kMemoryTypes);
            if (auto n = an.member("AccessType"))
                a.accessType = n->asEnum("AccessType", kAccessTypes);
            if (auto n = an.member("Size")) {
                // A number out of range gets the message an expression's value gets (checkSizes).
                if ((*n)->is_number() && !(*n)->is_number_integer() &&
                    std::trunc((*n)->get<double>()) == (*n)->get<double>())
                    if (const std::string why = sizeOutOfRange((*n)->get<double>(), a.type); !why.empty())
                        n->fail(why);
                if ((*n)->is_number_unsigned() && (*n)->get<std::uint64_t>() > std::uint64_t(INT64_MAX))
                    n->fail(sizeOutOfRange(static_cast<double>((*n)->get<std::uint64_t>()), a.type));
                if ((*n)->is_number_integer()) {
                    const std::int64_t size = n->asInt();
                    if (const std::string why = sizeOutOfRange(static_cast<double>(size), a.type); !why.empty())
                        n->fail(why);
                    a.size = std::to_string(size);
                    a.sizeIsNumber = true;
                } else if ((*n)->is_string()) {
                    a.size = (*n)->get<std::string>();
                    expression(*n, a.size, Role::Launch);
                } else {
                    n->fail(std::string("expected an integer or a string, got ") + describeJson(**n));
                }
            } else if (a.memoryType == "Vector") {
                an.fail("missing required field 'Size' (a Vector argument needs one)");
            }
            if (auto n = an.member("TypeSize")) {
                a.typeSize = n->asInt();
                if (*a.typeSize <= 0)
                    n->fail("TypeSize must be positive, got " + std::to_string(*a.typeSize));
            }
            if (auto n = an.member("FillType"))
                a.fillType = n->asEnum("FillType", kFillTypes);
            if (auto n = an.member("FillValue"))
                a.fillValue = n->asNumber();
            if (auto n = an.member("DataSource"))
                a.dataSource = n->asString();
            if (auto n = an.member("RandomSeed"))
                a.randomSeed = n->asInt();
            if (auto n = an.member("Value")) {
                if (a.memoryType != "Scalar")
                    n->fail("Value is for Scalar arguments only (this one is " + a.memoryType + ")");
                a.value = n->asString();
                expression(*n, a.value, Role::Launch);
            }
            if (auto n = an.member("MemType")) {
                a.memType = n->asString();
                if (a.memType != "Constant" && a.memType != "Global")
                    n->fail("unknown MemType '" + a.memType + "' (expected Constant or Global)");
                if (a.memType == "Constant" && a.memoryType != "Vector")
                    n->fail("MemType Constant is for Vector arguments (this one is " + a.memoryType + ")");
                if (a.memType == "Constant" && a.name.empty())
                    n->fail("a MemType Constant argument needs a Name: the __constant__ variable it fills");
            }
            if (auto n = an.member("Output")) {
                if ((*n)->is_boolean())
                    a.output = (*n)->get<bool>();
                else if ((*n)->is_number_integer() && (n->asInt() == 0 || n->asInt() == 1))
                    a.output = n->asInt() == 1;
                else
                    n->fail(std::string("expected 0, 1, true or false, got ") + (*n)->dump());
            }
            if (auto n = an.member("TensorMap")) {
                if (a.memoryType != "Scalar")
                    n->fail("TensorMap is for Scalar arguments (a tensor map is passed by value; this one is " +
                            a.memoryType + ")");
                if (!a.value.empty())
                    n->fail("an argument is a TensorMap or has a Value, not both");
                a.tensorMap = readTensorMap(*n);
            }
            keepUnknown(an, {"Name", "Type", "MemoryType", "AccessType", "Size", "TypeSize", "FillType", "FillValue",
                             "DataSource", "RandomSeed", "Value", "MemType", "Output", "TensorMap"});
            m_p.arguments.push_back(std::move(a));
        }
        // A tensor map's buffer may come after it in the list.
        for (std::size_t i = 0; i < m_p.arguments.size(); ++i) {
            const KernelArgument& a = m_p.arguments[i];
            if (!a.tensorMap)
                continue;
            const std::string ptr = args.pointer() + "/" + std::to_string(i) + "/TensorMap/Tensor";
            const auto target = std::find_if(m_p.arguments.begin(), m_p.arguments.end(),
                                             [&](const KernelArgument& t) { return t.name == a.tensorMap->tensor; });
            if (target == m_p.arguments.end())
                fail(ptr, "'" + a.tensorMap->tensor + "' is not the name of an argument");
            if (target->memoryType != "Vector")
                fail(ptr, "'" + a.tensorMap->tensor + "' is a " + target->memoryType +
                              " argument; a tensor map maps a Vector argument's buffer");
            if (target->type != a.type)
                fail(args.pointer() + "/" + std::to_string(i) + "/Type",
                     "a tensor map's Type is its tensor's ('" + a.tensorMap->tensor + "' is " + target->type +
                         ", this is " + a.type + ")");
        }
    }

    TensorMapSpec readTensorMap(const JsonNode& tn) {
        tn.expectObject();
        TensorMapSpec t;
        t.tensor = tn.required("Tensor").asString();
        auto list = [&](const char* key, std::vector<std::string>& out) {
            const JsonNode ln = tn.required(key);
            ln.expectArray();
            if (ln->empty() || ln->size() > 5)
                ln.fail(std::string(key) + " needs 1 to 5 entries (one per dimension, innermost first), got " +
                        std::to_string(ln->size()));
            for (std::size_t i = 0; i < ln->size(); ++i) {
                const JsonNode item = ln.item(i);
                out.push_back(asExpressionText(item));
                expression(item, out.back(), Role::TensorMap);
            }
            return ln;
        };
        list("Dims", t.dims);
        const JsonNode boxNode = list("Box", t.box);
        if (t.box.size() != t.dims.size())
            boxNode.fail("Box has " + std::to_string(t.box.size()) + " entries and Dims " +
                         std::to_string(t.dims.size()) + "; they need one each per dimension");
        if (auto n = tn.member("Swizzle")) {
            t.swizzle = static_cast<int>(n->asInt());
            if (t.swizzle != 0 && t.swizzle != 32 && t.swizzle != 64 && t.swizzle != 128)
                n->fail("Swizzle is 0, 32, 64 or 128 (bytes), got " + std::to_string(t.swizzle));
        }
        keepUnknown(tn, {"Tensor", "Dims", "Box", "Swizzle"});
        return t;
    }

    void readReferenceArguments(const JsonNode& refs) {
        refs.expectArray();
        for (std::size_t i = 0; i < refs->size(); ++i) {
            const JsonNode rn = refs.item(i);
            rn.expectObject();
            ReferenceArgument r;
            r.name = rn.required("Name").asString();
            const JsonNode target = rn.required("TargetName");
            r.targetName = target.asString();
            const bool known = std::any_of(m_p.arguments.begin(), m_p.arguments.end(),
                                           [&](const KernelArgument& a) { return a.name == r.targetName; });
            if (!known) {
                std::vector<std::string> names;
                for (const auto& a : m_p.arguments) {
                    if (!a.name.empty())
                        names.push_back(a.name);
                }
                target.fail("TargetName '" + r.targetName + "' is not the name of an argument" +
                            (names.empty() ? std::string(" (there are no named arguments)")
                                           : " (expected one of " + joined(names) + ")"));
            }
            r.fillType = rn.required("FillType").asEnum("FillType", kFillTypes);
            if (auto n = rn.member("FillValue"))
                r.fillValue = n->asNumber();
            if (auto n = rn.member("DataSource"))
                r.dataSource = n->asString();
            if (auto n = rn.member("RandomSeed"))
                r.randomSeed = n->asInt();
            if (auto n = rn.member("ValidationMethod"))
                r.validationMethod = n->asEnum("ValidationMethod", kValidationMethods);
            if (auto n = rn.member("ValidationThreshold")) {
                r.validationThreshold = n->asNumber();
                if (*r.validationThreshold < 0)
                    n->fail("ValidationThreshold must not be negative");
            }
            keepUnknown(rn, {"Name", "TargetName", "FillType", "FillValue", "DataSource", "RandomSeed",
                             "ValidationMethod", "ValidationThreshold"});
            m_p.referenceArguments.push_back(std::move(r));
        }
    }

    void readSearch(const JsonNode& search) {
        search.expectObject();
        m_p.searchName = asNonEmptyString(search.required("Name"), "search Name");
        if (auto attrs = search.member("Attributes")) {
            attrs->expectArray();
            for (std::size_t i = 0; i < (*attrs)->size(); ++i) {
                const JsonNode an = attrs->item(i);
                an.expectObject();
                TuningProblem::SearchAttribute attribute;
                attribute.name = an.required("Name").asString();
                const JsonNode value = an.required("Value");
                if (value->is_number() || value->is_boolean()) {
                    attribute.value = value->dump();
                    attribute.valueIsJson = true;
                } else {
                    attribute.value = value.asString();
                }
                keepUnknown(an, {"Name", "Value"});
                m_p.searchAttributes.push_back(std::move(attribute));
            }
        }
        keepUnknown(search, {"Name", "Attributes"});
    }

    void readBudget(const JsonNode& budget) {
        budget.expectArray();
        for (std::size_t i = 0; i < budget->size(); ++i) {
            const JsonNode bn = budget.item(i);
            bn.expectObject();
            BudgetEntry b;
            b.type = bn.required("Type").asEnum("Type", kBudgetTypes);
            const JsonNode vn = bn.required("BudgetValue");
            b.value = vn.asNumber();
            if (!(b.value > 0))
                vn.fail(b.type + " must be positive, got " + vn->dump());
            if (b.type == "ConfigurationFraction" && b.value > 1)
                vn.fail("ConfigurationFraction must be at most 1, got " + vn->dump());
            if (b.type == "ConfigurationCount" && std::trunc(b.value) != b.value)
                vn.fail("ConfigurationCount must be a whole number, got " + vn->dump());
            // Counts are exact in a double up to 2^53; durations beyond a century are a typo
            // (and past 292 years would not fit the clocks' 64-bit nanoseconds).
            if (b.type == "ConfigurationCount" && b.value > 9007199254740992.0)
                vn.fail("ConfigurationCount is too large (at most 2^53 = 9007199254740992), got " + vn->dump());
            if (b.type == "TuningDuration" && b.value > static_cast<double>(kMaxDurationSeconds))
                vn.fail("TuningDuration is too large (at most " + std::to_string(kMaxDurationSeconds) +
                        " s, about a century), got " + vn->dump());
            keepUnknown(bn, {"Type", "BudgetValue"});
            m_p.budget.push_back(b);
        }
    }

    void readTilescope(const JsonNode& ts) {
        ts.expectObject();
        if (auto n = ts.member("Shapes"))
            readShapes(*n);
        if (auto on = ts.member("Objective")) {
            on->expectObject();
            Objective o;
            o.name = asNonEmptyString(on->required("Name"), "objective Name");
            const JsonNode count = on->required("Count");
            o.count = count.asString();
            expression(count, o.count);
            if (auto s = on->member("Scale")) {
                o.scale = s->asNumber();
                if (!(o.scale > 0))
                    s->fail("Scale must be positive, got " + (*s)->dump());
            }
            if (auto per = on->member("Per")) {
                o.per = per->asString();
                if (o.per != "second" && o.per != "joule" && o.per != "joule-second")
                    per->fail("Per must be second, joule or joule-second, got '" + o.per + "'");
            }
            keepUnknown(*on, {"Name", "Count", "Scale", "Per"});
            m_p.objective = std::move(o);
        }
        if (auto rn = ts.member("Roofline"))
            readRoofline(*rn);
        if (auto n = ts.member("Metrics")) {
            m_p.metrics = n->asStringArray();
            for (std::size_t i = 0; i < m_p.metrics.size(); ++i) {
                if (m_p.metrics[i].empty())
                    n->item(i).fail("empty metric name");
            }
        }
        if (auto n = ts.member("Silence")) {
            m_p.silencedWarnings = n->asStringArray();
            for (std::size_t i = 0; i < m_p.silencedWarnings.size(); ++i) {
                if (!isLaunchWarningName(m_p.silencedWarnings[i]))
                    n->item(i).fail("'" + m_p.silencedWarnings[i] + "' is no warning's name (" +
                                    std::string(launchWarningNames()) + ")");
            }
        }
        if (auto n = ts.member("Objectives")) {
            m_p.objectives = n->asStringArray();
            for (std::size_t i = 0; i < m_p.objectives.size(); ++i) {
                const std::string& o = m_p.objectives[i];
                if (o != "time" && o != "energy" && o != "edp")
                    n->item(i).fail("'" + o + "' is no objective (time, energy or edp)");
                if (std::count(m_p.objectives.begin(), m_p.objectives.begin() + static_cast<std::ptrdiff_t>(i), o) > 0)
                    n->item(i).fail("'" + o + "' is named twice");
            }
        }
        if (auto n = ts.member("Configs"))
            readConfigList(*n);
        if (auto n = ts.member("Partial")) {
            m_p.partialOutputs = n->asStringArray();
            for (std::size_t i = 0; i < m_p.partialOutputs.size(); ++i) {
                const std::string& name = m_p.partialOutputs[i];
                const auto& args = m_p.arguments;
                const auto it =
                    std::find_if(args.begin(), args.end(), [&](const KernelArgument& a) { return a.name == name; });
                if (it == args.end())
                    n->item(i).fail("'" + name + "' is not the Name of an argument");
                if (it->memoryType != "Vector")
                    n->item(i).fail("'" + name + "' is a " + it->memoryType +
                                    " argument; only Vector arguments hold output that can be partly written");
            }
        }
        if (auto n = ts.member("VerifyWithin")) {
            m_p.verifyWithin = n->asStringArray();
            for (std::size_t i = 0; i < m_p.verifyWithin.size(); ++i) {
                const std::string& name = m_p.verifyWithin[i];
                if (m_p.parameterIndex(name) < 0)
                    n->item(i).fail("'" + name + "' is not the name of a tuning parameter");
                if (std::count(m_p.verifyWithin.begin(), m_p.verifyWithin.begin() + static_cast<std::ptrdiff_t>(i),
                               name) > 0)
                    n->item(i).fail("'" + name + "' is named twice");
            }
        }
        if (auto n = ts.member("Compiler")) {
            // Named as Kernel Tuner names its compilers ("nvcc"), in any case.
            std::string name = n->asString();
            std::transform(name.begin(), name.end(), name.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            if (name != "nvrtc" && name != "nvcc")
                n->fail("Compiler must be nvrtc or nvcc, got '" + n->asString() + "'");
            if (name == "nvcc" && m_p.isTriton())
                n->fail("a Triton kernel is compiled by Triton; Compiler nvcc is for CUDA kernels");
            m_p.compiler = name;
        }
        keepUnknown(ts, {"Shapes", "Objective", "Objectives", "Roofline", "Metrics", "Silence", "Configs", "Partial",
                         "VerifyWithin", "Compiler"});
    }

    // Tilescope.Configs: [[v1, v2, ...], ...], the values in TuningParameters order. Each value
    // must be one of its parameter's values (1 and 1.0 are the same number, as in Python).
    void readConfigList(const JsonNode& n) {
        n.expectArray();
        std::vector<Config> list;
        list.reserve(n->size());
        const std::size_t P = m_p.parameters.size();
        for (std::size_t i = 0; i < n->size(); ++i) {
            const JsonNode entry = n.item(i);
            entry.expectArray();
            if (entry->size() != P)
                entry.fail("a config of " + std::to_string(entry->size()) + " values; the problem has " +
                           std::to_string(P) + " parameters (give one value per parameter, in their order)");
            Config c(P);
            for (std::size_t p = 0; p < P; ++p)
                c[p] = configValueIndex(entry.item(p), m_p.parameters[p]);
            list.push_back(std::move(c));
        }
        m_p.configList = std::move(list);
    }

    static std::uint16_t configValueIndex(const JsonNode& item, const TuningParameter& tp) {
        std::string text;
        expr::Value v;
        if (item->is_boolean()) {
            v = expr::Value::ofBool(item->get<bool>());
        } else if (item->is_number_integer()) {
            v = expr::Value::ofInt(item.asInt());
        } else if (item->is_number_float()) {
            v = expr::Value::ofFloat(item->get<double>());
        } else if (item->is_string()) {
            text = item->get<std::string>();
            v = expr::Value::ofStr(&text);
        } else {
            item.fail(std::string("expected a number, a string or a boolean, got ") + describeJson(*item));
        }
        // The same kind first (True and 1 are equal in Python, but a parameter may hold both).
        for (int pass = 0; pass < 2; ++pass)
            for (std::size_t k = 0; k < tp.values.size(); ++k)
                if ((pass == 1 || tp.values[k].kind == v.kind) && expr::equal(tp.values[k], v))
                    return static_cast<std::uint16_t>(k);
        item.fail(item->dump() + " is not a value of parameter '" + tp.name + "' (" + tp.valuesText + ")");
    }

    void readRoofline(const JsonNode& rn) {
        rn.expectObject();
        RooflineSpec r;
        for (auto [key, target] : {std::pair{"Bytes", &r.bytes}, std::pair{"Flops", &r.flops}}) {
            if (auto n = rn.member(key)) {
                *target = (*n)->is_number() ? (*n)->dump() : n->asString();
                expression(*n, *target);
            }
        }
        if (r.bytes.empty() && r.flops.empty())
            rn.fail("a Roofline needs Bytes, Flops or both (the work of one launch)");
        if (auto n = rn.member("Compute")) {
            r.compute = n->asString();
            static const std::vector<std::string> kinds{"float", "tf32", "half", "bfloat16", "float8", "int8"};
            if (std::find(kinds.begin(), kinds.end(), r.compute) == kinds.end())
                n->fail("Compute '" + r.compute +
                        "' is not one of float, tf32, half, bfloat16, float8, int8 (the "
                        "arithmetic whose peak is the compute roof)");
        } else if (!r.flops.empty()) {
            rn.fail("Flops needs Compute (float, tf32, half, bfloat16, float8 or int8): the arithmetic whose peak "
                    "is the compute roof");
        }
        keepUnknown(rn, {"Bytes", "Flops", "Compute"});
        m_p.roofline = std::move(r);
    }

    void readShapes(const JsonNode& shapes) {
        shapes.expectArray();
        if (shapes->empty())
            shapes.fail("empty shape list (leave Shapes out for a problem without shapes)");
        std::set<std::string> firstKeys;
        bool generated = false;
        for (std::size_t i = 0; i < shapes->size(); ++i) {
            const JsonNode sn = shapes.item(i);
            sn.expectObject();
            // Each dim one integer, or a list of them (a JSON array, or a string Python's eval reads
            // as one: "[2**i for i in range(0, 13)]"): the entry stands for the product.
            std::vector<std::pair<std::string, std::vector<std::int64_t>>> lists;
            std::set<std::string> keys;
            for (const auto& [key, value] : sn->items()) {
                const JsonNode dim = sn.child(key, value);
                checkName(dim, key, "shape name");
                lists.emplace_back(key, shapeValues(dim));
                generated = generated || !dim->is_number_integer();
                keys.insert(key);
            }
            if (i == 0) {
                firstKeys = keys;
            } else if (keys != firstKeys) {
                std::vector<std::string> missing, extra;
                std::set_difference(firstKeys.begin(), firstKeys.end(), keys.begin(), keys.end(),
                                    std::back_inserter(missing));
                std::set_difference(keys.begin(), keys.end(), firstKeys.begin(), firstKeys.end(),
                                    std::back_inserter(extra));
                std::string message = "shape has other names than the first shape:";
                if (!missing.empty())
                    message += " missing " + joined(missing) + (extra.empty() ? "" : ";");
                if (!extra.empty())
                    message += " unexpected " + joined(extra);
                sn.fail(message);
            }
            std::size_t count = 1;
            for (const auto& [key, values] : lists) {
                count *= values.size();
                if (count > kMaxShapes)
                    sn.fail("the entry generates more than " + std::to_string(kMaxShapes) + " shapes");
            }
            // The product, the first dim varying slowest.
            for (std::size_t n = 0; n < count; ++n) {
                Shape shape;
                std::size_t rest = n;
                for (std::size_t d = lists.size(); d-- > 0;) {
                    const auto& values = lists[d].second;
                    shape.dims.emplace_back(lists[d].first, values[rest % values.size()]);
                    rest /= values.size();
                }
                std::reverse(shape.dims.begin(), shape.dims.end());
                m_p.shapes.push_back(std::move(shape));
                if (m_p.shapes.size() > kMaxShapes)
                    shapes.fail("more than " + std::to_string(kMaxShapes) + " shapes");
            }
        }
        if (generated)
            m_p.shapesSource = shapes->dump();
    }

    static constexpr std::size_t kMaxShapes = 100000;

    /// A shape dim's values: an integer, an array of integers, or a string that is a list of
    /// integers in Python's syntax.
    std::vector<std::int64_t> shapeValues(const JsonNode& dim) {
        std::vector<std::int64_t> values;
        if (dim->is_number()) {
            values.push_back(dim.asInt()); // says what a fraction or an out-of-range number is
        } else if (dim->is_array()) {
            for (std::size_t i = 0; i < dim->size(); ++i)
                values.push_back(dim.item(i).asInt());
        } else if (dim->is_string()) {
            const std::string& text = dim->get<std::string>();
            if (!text.empty() && text.find_first_not_of("0123456789+- ") == std::string::npos)
                dim.fail("expected an integer, got a string (\"" + text +
                         "\"; a string here is a list of values such as \"[2**i for i in range(0, 13)]\")");
            std::vector<std::unique_ptr<std::string>> strings;
            std::vector<expr::Value> list;
            try {
                list = expr::parseValueList(dim->get<std::string>(), strings);
            } catch (const expr::ExprError& e) {
                dim.fail(spec::describeExprErrorInline(e));
            }
            for (const expr::Value& v : list) {
                if (v.kind != expr::Kind::Int)
                    dim.fail("the list holds " + expr::repr(v) + "; a shape's dims are integers");
                values.push_back(v.i);
            }
        } else {
            dim.fail(std::string("expected an integer, a list of integers or a string that makes one, got ") +
                     describeJson(*dim));
        }
        if (values.empty())
            dim.fail("an empty list of values (a shape dim needs at least one)");
        return values;
    }

    // ---- checks across sections ----

    void checkNameClashes() const {
        if (m_p.shapes.empty() || m_p.shapes.front().dims.empty())
            return;
        for (std::size_t i = 0; i < m_p.parameters.size(); ++i) {
            const std::string& name = m_p.parameters[i].name;
            for (const auto& [dim, value] : m_p.shapes.front().dims) {
                if (dim == name)
                    fail("/ConfigurationSpace/TuningParameters/" + std::to_string(i) + "/Name",
                         "parameter name '" + name + "' is also a shape name (/Tilescope/Shapes/0/" +
                             escapePointerToken(dim) + ")");
            }
        }
    }

    void checkKernelFile() {
        if (m_baseDir.empty())
            return;
        const std::filesystem::path file(m_p.kernelFile);
        std::error_code ec;
        const std::filesystem::path dir = std::filesystem::absolute(m_baseDir, ec).lexically_normal();
        const std::filesystem::path resolved = file.is_absolute() ? file : dir / file;
        const auto status = std::filesystem::status(resolved, ec);
        if (!std::filesystem::exists(status)) {
            block(m_kernelFilePtr, "kernel file '" + m_p.kernelFile + "' not found" +
                                       (file.is_absolute() ? std::string() : " (looked in " + dir.string() + ")"));
        } else if (!std::filesystem::is_regular_file(status)) {
            block(m_kernelFilePtr, "kernel file '" + m_p.kernelFile + "' is not a regular file");
        } else if (m_p.isTriton()) {
            checkTritonKernelFile(resolved);
        }
    }

    // A Triton kernel's signature decides what the problem may say (its tuning parameters, its
    // Arguments): a mismatch stops compiling, as a kernel file that is missing does. A file that
    // cannot be read is left to the compile, which says why.
    void checkTritonKernelFile(const std::filesystem::path& path) {
        std::error_code ec;
        if (std::filesystem::file_size(path, ec) > kMaxKernelBytes || ec)
            return;
        std::ifstream in(path, std::ios::binary);
        const std::string source{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
        if (!in && !in.eof())
            return;
        try {
            checkTritonKernel(m_p, source);
        } catch (const InputError& e) {
            block(e.location(), e.message());
        }
    }

    std::string m_file;
    std::filesystem::path m_baseDir;
    TuningProblem m_p;
    std::vector<Pending> m_pending;
    std::string m_kernelFilePtr = "/KernelSpecification/KernelFile";
};

} // namespace

TuningProblem TuningProblem::parse(const std::string& text, const std::string& fileName,
                                   const std::filesystem::path& baseDir) {
    try {
        return Reader(fileName, baseDir).read(text);
    } catch (const InputError&) {
        throw;
    } catch (const std::bad_alloc&) {
        throw;
    } catch (const std::exception& e) {
        // A safety net: whatever slipped past the checks above is still the file's fault, and
        // must not take the program down.
        throw InputError(fileName, "", std::string("cannot read the problem: ") + e.what());
    }
}

} // namespace tilescope
