// Reading and validating a T1 problem file. Every error the file can cause becomes an
// InputError that points at the field (a JSON pointer) or, for bad JSON, at the line and column.

#include "base/error.h"
#include "base/jsonwords.h"
#include "spec/launchgeometry.h"
#include "spec/t1common.h"
#include "spec/tuningproblem.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
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

// Deep nesting cannot crash the parser (it keeps its own stack), but dumping, comparing and
// copying JSON recurse; no honest problem file comes near this.
constexpr int kMaxDepth = 64;
// About a century, in seconds: more than any tuning run, well within a clock's range.
constexpr std::int64_t kMaxDurationSeconds = 3'200'000'000;
// A Config stores the index of each parameter's value in 16 bits.
constexpr std::size_t kMaxValues = 65535;

constexpr std::array kParameterTypes = {"int", "uint", "float", "bool", "string"};
constexpr std::array kLanguages = {"CUDA", "OpenCL", "Vulkan"};
// T1's types, and bfloat16 (a Tilescope addition: the T1 schema predates it).
constexpr std::array kArgumentTypes = {"bool",    "int8",    "uint8",    "int16",    "uint16",  "int32",  "uint32",
                                       "int64",   "uint64",  "half",     "half2",    "half4",   "half8",  "half16",
                                       "float",   "float2",  "float4",   "float8",   "float16", "double", "double2",
                                       "double4", "double8", "double16", "bfloat16", "custom"};
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

const char* describe(const Json& j) {
    switch (j.type()) {
    case Json::value_t::null:
        return "null";
    case Json::value_t::boolean:
        return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
        return "a number";
    case Json::value_t::string:
        return "a string";
    case Json::value_t::array:
        return "an array";
    case Json::value_t::object:
        return "an object";
    default:
        return "an unsupported value";
    }
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

/// "line L, column C" of nlohmann's byte offset: the 1-based index of the last character read
/// (size + 1 at the end).
std::string lineColumn(const std::string& text, std::size_t byte) {
    return lineColumnAt(text, byte == 0 ? 0 : byte - 1);
}

/// nlohmann's message without its "[json.exception.parse_error.101] parse error at ...: " prefix.
std::string jsonMessage(const std::string& what) {
    std::size_t start = 0;
    if (!what.empty() && what.front() == '[') {
        const std::size_t close = what.find("] ");
        if (close != std::string::npos)
            start = close + 2;
    }
    std::string rest = what.substr(start);
    if (rest.rfind("parse error", 0) == 0) {
        const std::size_t colon = rest.find(": ");
        if (colon != std::string::npos)
            rest = rest.substr(colon + 2);
    }
    return rest;
}

/// A JSON value and where it is.
struct Node {
    const Json* json;
    std::string ptr;

    const Json& operator*() const { return *json; }
    const Json* operator->() const { return json; }
};

Node childOf(const Node& obj, std::string_view key) {
    return {&obj->at(std::string(key)), obj.ptr + "/" + spec::escapePointerToken(key)};
}

Node itemOf(const Node& arr, std::size_t i) {
    return {&arr->at(i), arr.ptr + "/" + std::to_string(i)};
}

class Reader {
public:
    Reader(std::string file, std::filesystem::path baseDir)
        : m_file(std::move(file))
        , m_baseDir(std::move(baseDir)) {}

    TuningProblem read(const std::string& text) {
        m_p.fileName = m_file;
        m_p.baseDir = m_baseDir;
        const Json root = parseJson(text);
        const Node top{&root, ""};
        expectObject(top);
        // Sections in a fixed order, so that a file with several mistakes reports the same one
        // every time.
        if (auto n = member(top, "General"))
            readGeneral(*n);
        readConfigurationSpace(required(top, "ConfigurationSpace"));
        readKernelSpecification(required(top, "KernelSpecification"));
        if (auto n = member(top, "Search"))
            readSearch(*n);
        if (auto n = member(top, "Budget"))
            readBudget(*n);
        if (auto n = member(top, "Tilescope"))
            readTilescope(*n);
        keepUnknown(top, {"General", "ConfigurationSpace", "KernelSpecification", "Search", "Budget", "Tilescope"});

        if (m_p.shapes.empty())
            m_p.shapes.emplace_back();
        checkNameClashes();
        compileExpressions();
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

    // ---- JSON ----

    Json parseJson(const std::string& text) {
        // Tracks where the parser is, to name a duplicate key by its pointer and to refuse
        // absurd nesting before anything recursive touches it.
        struct Frame {
            bool isArray;
            std::string ptr;
            std::size_t count = 0;
            std::string key;
            std::set<std::string> keys;
        };
        std::vector<Frame> frames;
        auto childPtr = [&]() -> std::string {
            if (frames.empty())
                return "";
            Frame& top = frames.back();
            if (top.isArray)
                return top.ptr + "/" + std::to_string(top.count++);
            return top.ptr + "/" + spec::escapePointerToken(top.key);
        };
        Json::parser_callback_t callback = [&](int depth, nlohmann::detail::parse_event_t event, Json& parsed) {
            using E = nlohmann::detail::parse_event_t;
            switch (event) {
            case E::object_start:
            case E::array_start: {
                std::string ptr = childPtr();
                if (depth >= kMaxDepth)
                    fail(ptr, "nested more than " + std::to_string(kMaxDepth) + " levels deep");
                frames.push_back({event == E::array_start, std::move(ptr), 0, {}, {}});
                break;
            }
            case E::object_end:
            case E::array_end:
                if (!frames.empty())
                    frames.pop_back();
                break;
            case E::key:
                if (!frames.empty() && parsed.is_string()) {
                    Frame& top = frames.back();
                    top.key = parsed.get<std::string>();
                    if (!top.keys.insert(top.key).second)
                        fail(top.ptr + "/" + spec::escapePointerToken(top.key),
                             "duplicate key '" + top.key + "' (a later one would silently replace the first)");
                }
                break;
            case E::value:
                if (!frames.empty() && frames.back().isArray)
                    ++frames.back().count;
                break;
            }
            return true;
        };
        try {
            return Json::parse(text, callback);
        } catch (const Json::parse_error& e) {
            const auto [start, word] = nonFiniteWordAt(text, e.byte > 0 ? e.byte - 1 : 0);
            if (!word.empty())
                fail(lineColumn(text, start + 1),
                     std::string(word) + " is not JSON: JSON has no NaN or Infinity (Python's json module writes "
                                         "them); expected a number");
            fail(lineColumn(text, e.byte), jsonMessage(e.what()));
        } catch (const Json::exception& e) {
            // out_of_range 406, "number overflow parsing '1e400'", comes without a position:
            // find the number in the text instead.
            std::string message = jsonMessage(e.what());
            const std::size_t open = message.find('\'');
            const std::size_t close = message.rfind('\'');
            if (open != std::string::npos && close > open + 1) {
                const std::string number = message.substr(open + 1, close - open - 1);
                if (e.id == 406)
                    message += ": too large for a double (at most 1.8e308)";
                const std::size_t at = text.find(number);
                if (at != std::string::npos)
                    fail(lineColumn(text, at + 1), message);
            }
            fail("", message);
        }
    }

    void expectObject(const Node& n) const {
        if (!n->is_object())
            fail(n.ptr, std::string("expected an object, got ") + describe(*n));
    }

    void expectArray(const Node& n) const {
        if (!n->is_array())
            fail(n.ptr, std::string("expected an array, got ") + describe(*n));
    }

    std::optional<Node> member(const Node& obj, std::string_view key) const {
        if (!obj->contains(key))
            return std::nullopt;
        return childOf(obj, key);
    }

    Node required(const Node& obj, std::string_view key) const {
        expectObject(obj);
        if (auto n = member(obj, key))
            return *n;
        std::string message = "missing required field '" + std::string(key) + "'";
        // The commonest way to lose a field is to spell it in another case.
        for (const auto& [name, value] : obj->items()) {
            if (name.size() == key.size() && std::equal(name.begin(), name.end(), key.begin(), [](char a, char b) {
                    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
                })) {
                message += " (found '" + name + "'; field names are case-sensitive)";
                break;
            }
        }
        fail(obj.ptr, message);
    }

    std::string asString(const Node& n) const {
        if (!n->is_string())
            fail(n.ptr, std::string("expected a string, got ") + describe(*n));
        return n->get<std::string>();
    }

    std::string asNonEmptyString(const Node& n, std::string_view field) const {
        std::string s = asString(n);
        if (s.empty())
            fail(n.ptr, "empty " + std::string(field));
        return s;
    }

    std::int64_t asInt(const Node& n) const {
        if (n->is_number_unsigned()) {
            const auto u = n->get<std::uint64_t>();
            if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
                fail(n.ptr, "integer " + n->dump() + " is out of range (more than 64 bits)");
            return static_cast<std::int64_t>(u);
        }
        if (n->is_number_integer())
            return n->get<std::int64_t>();
        if (n->is_number_float())
            fail(n.ptr, "expected an integer, got " + n->dump());
        fail(n.ptr, std::string("expected an integer, got ") + describe(*n));
    }

    double asNumber(const Node& n) const {
        if (!n->is_number())
            fail(n.ptr, std::string("expected a number, got ") + describe(*n));
        return n->get<double>();
    }

    bool asBool(const Node& n) const {
        if (!n->is_boolean())
            fail(n.ptr, std::string("expected true or false, got ") + describe(*n));
        return n->get<bool>();
    }

    template <std::size_t N>
    std::string asEnum(const Node& n, std::string_view field, const std::array<const char*, N>& allowed) const {
        std::string s = asString(n);
        if (!contains(allowed, s))
            fail(n.ptr, "unknown " + std::string(field) + " '" + s + "' (expected one of " + joined(allowed) + ")");
        return s;
    }

    std::vector<std::string> asStringArray(const Node& n) const {
        expectArray(n);
        std::vector<std::string> out;
        for (std::size_t i = 0; i < n->size(); ++i)
            out.push_back(asString(itemOf(n, i)));
        return out;
    }

    /// Keeps the members of `obj` that are not in `known`, for writing back.
    void keepUnknown(const Node& obj, std::initializer_list<std::string_view> known) {
        Json unknown = Json::object();
        for (const auto& [key, value] : obj->items()) {
            if (std::find(known.begin(), known.end(), key) == known.end())
                unknown[key] = value;
        }
        if (!unknown.empty())
            m_p.unknownFields[obj.ptr] = unknown.dump();
    }

    // ---- expressions ----

    /// Plain expressions must compile for the problem to load; Launch ones (geometry, argument
    /// sizes) are needed only to compile and run the kernel, so their failure blocks that alone.
    enum class Role { Plain, ProblemSize, Launch };
    struct Pending {
        std::string ptr;
        std::string source;
        Role role;
    };

    /// An expression to compile once the scope (parameters, shape names) is known.
    void expression(const Node& n, const std::string& source, Role role = Role::Plain) {
        m_pending.push_back({n.ptr, source, role});
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
                if (pending.role == Role::Launch) {
                    block(pending.ptr, spec::describeExprError(error));
                    continue;
                }
                fail(pending.ptr, spec::describeExprError(error));
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

    // ---- sections ----

    void readGeneral(const Node& general) {
        expectObject(general);
        for (const auto& [key, value] : general->items()) {
            const Node n = childOf(general, key);
            if (key == "FormatVersion")
                asInt(n);
            else if (key == "LoggingLevel")
                asEnum(n, key, kLoggingLevels);
            else if (key == "TimeUnit")
                asEnum(n, key, kTimeUnits);
            else if (key == "OutputFile")
                asString(n);
            else if (key == "OutputFormat")
                asEnum(n, key, kOutputFormats);
            m_p.general[key] = value.dump();
        }
    }

    void readConfigurationSpace(const Node& space) {
        expectObject(space);
        const Node params = required(space, "TuningParameters");
        expectArray(params);
        std::map<std::string, std::string> firstAt;
        for (std::size_t i = 0; i < params->size(); ++i) {
            const Node pn = itemOf(params, i);
            expectObject(pn);
            TuningParameter tp;
            const Node nameNode = required(pn, "Name");
            tp.name = asString(nameNode);
            checkName(nameNode, tp.name, "parameter name");
            if (auto [it, fresh] = firstAt.emplace(tp.name, pn.ptr); !fresh)
                fail(nameNode.ptr, "duplicate parameter name '" + tp.name + "' (first at " + it->second + ")");
            tp.type = asEnum(required(pn, "Type"), "Type", kParameterTypes);
            const Node valuesNode = required(pn, "Values");
            if (valuesNode->is_array()) {
                // Not T1 (Values is Python text there), but written often enough: kept as an array.
                tp.valuesText = valuesNode->dump();
                tp.valuesAsArray = true;
            } else {
                tp.valuesText = asString(valuesNode);
            }
            readValues(valuesNode, tp);
            keepUnknown(pn, {"Name", "Type", "Values"});
            m_p.parameters.push_back(std::move(tp));
        }

        if (auto conditions = member(space, "Conditions")) {
            expectArray(*conditions);
            for (std::size_t i = 0; i < (*conditions)->size(); ++i) {
                const Node cn = itemOf(*conditions, i);
                expectObject(cn);
                Condition c;
                c.parameters = asStringArray(required(cn, "Parameters"));
                const Node en = required(cn, "Expression");
                c.expression = asString(en);
                expression(en, c.expression);
                keepUnknown(cn, {"Parameters", "Expression"});
                m_p.conditions.push_back(std::move(c));
            }
        }
        keepUnknown(space, {"TuningParameters", "Conditions"});
    }

    void checkName(const Node& n, const std::string& name, std::string_view what) const {
        if (!isIdentifier(name))
            fail(n.ptr, std::string(what) + " '" + name +
                            "' is not a valid identifier (letters, digits and '_', not starting with a digit)");
        if (const char* reason = reservedReason(name))
            fail(n.ptr, std::string(what) + " '" + name + "' is reserved (" + reason + ")");
    }

    void readValues(const Node& n, TuningParameter& tp) const {
        std::vector<std::unique_ptr<std::string>> strings;
        std::vector<expr::Value> values;
        if (tp.valuesAsArray) {
            for (std::size_t i = 0; i < n->size(); ++i) {
                const Node item = itemOf(n, i);
                if (item->is_boolean()) {
                    values.push_back(expr::Value::ofBool(item->get<bool>()));
                } else if (item->is_number_integer()) {
                    values.push_back(expr::Value::ofInt(asInt(item)));
                } else if (item->is_number_float()) {
                    values.push_back(expr::Value::ofFloat(item->get<double>()));
                } else if (item->is_string()) {
                    strings.push_back(std::make_unique<std::string>(item->get<std::string>()));
                    values.push_back(expr::Value::ofStr(strings.back().get()));
                } else {
                    fail(item.ptr, std::string("expected a number, a string or a boolean, got ") + describe(*item));
                }
            }
        } else {
            try {
                values = expr::parseValueList(tp.valuesText, strings);
            } catch (const expr::ExprError& e) {
                fail(n.ptr, spec::describeExprError(e));
            }
        }
        if (values.empty())
            fail(n.ptr, "empty value list in '" + tp.valuesText + "'");
        if (values.size() > kMaxValues)
            fail(n.ptr,
                 "too many values (" + std::to_string(values.size()) + "; at most " + std::to_string(kMaxValues) + ")");

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
                fail(n.ptr, "value " + std::to_string(i) + " is a list, but Type is '" + tp.type + "'");
            if (!ok)
                fail(n.ptr, "value " + expr::repr(v) + " is " + article(v.kind) + expr::typeName(v.kind) +
                                ", but Type is '" + tp.type + "'");
            if (v.kind == expr::Kind::Float && !std::isfinite(v.f))
                fail(n.ptr, "value " + expr::repr(v) + " is not a finite number");
            if (tp.type == "uint" && v.i < 0)
                fail(n.ptr, "value " + expr::repr(v) + " is negative, but Type is 'uint'");

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
                fail(n.ptr, "duplicate value " + expr::repr(v) + " in the value list (at indices " +
                                std::to_string(first) + " and " + std::to_string(i) + ")");
        }
        tp.values = std::move(values);
        tp.strings = std::make_shared<const std::vector<std::unique_ptr<std::string>>>(std::move(strings));
    }

    void readKernelSpecification(const Node& ks) {
        expectObject(ks);
        // Any language reads (counting needs no kernel); Tilescope compiles CUDA only.
        const Node languageNode = required(ks, "Language");
        m_p.language = asNonEmptyString(languageNode, "Language");
        if (!m_p.isCuda())
            block(languageNode.ptr,
                  "the kernel is " + m_p.language + ", and Tilescope compiles and runs CUDA kernels only");
        if (auto n = member(ks, "CompilerOptions"))
            m_p.compilerOptions = asStringArray(*n);
        m_p.kernelName = asNonEmptyString(required(ks, "KernelName"), "KernelName");
        m_p.kernelFile = asNonEmptyString(required(ks, "KernelFile"), "KernelFile");
        m_kernelFilePtr = childOf(ks, "KernelFile").ptr;
        if (auto n = member(ks, "GlobalSizeType"))
            m_p.globalSizeType = asEnum(*n, "GlobalSizeType", kLanguages);
        // T1 requires both, but Kernel Tuner's loader reads neither (it takes ProblemSize, GridDiv
        // and the block_size_x/y/z parameters): files written for it may leave them out.
        if (auto n = member(ks, "GlobalSize"))
            m_p.globalSize = readThreeD(*n);
        if (auto n = member(ks, "LocalSize"))
            m_p.localSize = readThreeD(*n);
        m_p.gridDivX = readExpressionList(ks, "GridDivX");
        m_p.gridDivY = readExpressionList(ks, "GridDivY");
        m_p.gridDivZ = readExpressionList(ks, "GridDivZ");
        if (auto n = member(ks, "ProblemSize")) {
            // Kernel Tuner also takes a single number.
            if ((*n)->is_number_integer() || (*n)->is_string()) {
                m_p.problemSize.push_back(asExpressionText(*n));
                expression(*n, m_p.problemSize.back(), Role::ProblemSize);
            } else {
                expectArray(*n);
                for (std::size_t i = 0; i < (*n)->size(); ++i) {
                    const Node item = itemOf(*n, i);
                    m_p.problemSize.push_back(asExpressionText(item));
                    expression(item, m_p.problemSize.back(), Role::ProblemSize);
                }
            }
        }
        if (auto n = member(ks, "SharedMemory")) {
            if ((*n)->is_number_integer()) {
                const std::int64_t bytes = asInt(*n);
                if (bytes < 0)
                    fail(n->ptr, "SharedMemory must not be negative, got " + std::to_string(bytes));
                m_p.sharedMemory = std::to_string(bytes);
            } else if ((*n)->is_string()) {
                m_p.sharedMemory = (*n)->get<std::string>();
                expression(*n, m_p.sharedMemory, Role::Launch);
            } else {
                fail(n->ptr, std::string("expected an integer or a string, got ") + describe(**n));
            }
        }
        if (auto n = member(ks, "Device"))
            m_p.device = readDevice(*n);
        if (auto n = member(ks, "Profiling"))
            m_p.profiling = asBool(*n);
        if (auto n = member(ks, "SimulationInput"))
            m_p.simulationInput = asString(*n);
        if (auto n = member(ks, "Arguments"))
            readArguments(*n);
        if (auto n = member(ks, "ReferenceArguments"))
            readReferenceArguments(*n);
        keepUnknown(ks, {"Language", "CompilerOptions", "KernelName", "KernelFile", "GlobalSizeType", "GlobalSize",
                         "LocalSize", "GridDivX", "GridDivY", "GridDivZ", "ProblemSize", "SharedMemory", "Device",
                         "Profiling", "SimulationInput", "Arguments", "ReferenceArguments"});
    }

    /// An expression written as a string, or an integer (kept as its digits).
    std::string asExpressionText(const Node& n) const {
        if (n->is_number_integer())
            return std::to_string(asInt(n));
        if (!n->is_string())
            fail(n.ptr, std::string("expected an integer or a string, got ") + describe(*n));
        return n->get<std::string>();
    }

    ThreeD readThreeD(const Node& n) {
        expectObject(n);
        ThreeD d;
        const Node x = required(n, "X");
        d.x = asExpressionText(x);
        expression(x, d.x, Role::Launch);
        if (auto y = member(n, "Y")) {
            d.y = asExpressionText(*y);
            expression(*y, d.y, Role::Launch);
        }
        if (auto z = member(n, "Z")) {
            d.z = asExpressionText(*z);
            expression(*z, d.z, Role::Launch);
        }
        keepUnknown(n, {"X", "Y", "Z"});
        return d;
    }

    /// GridDivX and friends: a list of expressions; null is absent (Kernel Tuner's None).
    std::vector<std::string> readExpressionList(const Node& ks, std::string_view key) {
        std::vector<std::string> out;
        auto n = member(ks, key);
        if (!n || (*n)->is_null())
            return out;
        expectArray(*n);
        for (std::size_t i = 0; i < (*n)->size(); ++i) {
            out.push_back(asExpressionText(itemOf(*n, i)));
            expression(itemOf(*n, i), out.back(), Role::Launch);
        }
        return out;
    }

    DeviceSpec readDevice(const Node& n) {
        expectObject(n);
        DeviceSpec d;
        if (auto v = member(n, "PlatformId"))
            d.platformId = asInt(*v);
        if (auto v = member(n, "DeviceId"))
            d.deviceId = asInt(*v);
        if (auto v = member(n, "Name"))
            d.name = asString(*v);
        keepUnknown(n, {"PlatformId", "DeviceId", "Name"});
        return d;
    }

    void readArguments(const Node& args) {
        expectArray(args);
        std::map<std::string, std::string> firstAt;
        for (std::size_t i = 0; i < args->size(); ++i) {
            const Node an = itemOf(args, i);
            expectObject(an);
            KernelArgument a;
            if (auto n = member(an, "Name")) {
                a.name = asString(*n);
                if (!a.name.empty()) {
                    if (auto [it, fresh] = firstAt.emplace(a.name, an.ptr); !fresh)
                        fail(n->ptr, "duplicate argument name '" + a.name + "' (first at " + it->second + ")");
                }
            }
            a.type = asEnum(required(an, "Type"), "Type", kArgumentTypes);
            a.memoryType = asEnum(required(an, "MemoryType"), "MemoryType", kMemoryTypes);
            if (auto n = member(an, "AccessType"))
                a.accessType = asEnum(*n, "AccessType", kAccessTypes);
            if (auto n = member(an, "Size")) {
                if ((*n)->is_number_integer()) {
                    const std::int64_t size = asInt(*n);
                    if (size < 0)
                        fail(n->ptr, "Size must not be negative, got " + std::to_string(size));
                    a.size = std::to_string(size);
                    a.sizeIsNumber = true;
                } else if ((*n)->is_string()) {
                    a.size = (*n)->get<std::string>();
                    expression(*n, a.size, Role::Launch);
                } else {
                    fail(n->ptr, std::string("expected an integer or a string, got ") + describe(**n));
                }
            } else if (a.memoryType == "Vector") {
                fail(an.ptr, "missing required field 'Size' (a Vector argument needs one)");
            }
            if (auto n = member(an, "TypeSize")) {
                a.typeSize = asInt(*n);
                if (*a.typeSize <= 0)
                    fail(n->ptr, "TypeSize must be positive, got " + std::to_string(*a.typeSize));
            }
            if (auto n = member(an, "FillType"))
                a.fillType = asEnum(*n, "FillType", kFillTypes);
            if (auto n = member(an, "FillValue"))
                a.fillValue = asNumber(*n);
            if (auto n = member(an, "DataSource"))
                a.dataSource = asString(*n);
            if (auto n = member(an, "RandomSeed"))
                a.randomSeed = asInt(*n);
            if (auto n = member(an, "Value")) {
                if (a.memoryType != "Scalar")
                    fail(n->ptr, "Value is for Scalar arguments only (this one is " + a.memoryType + ")");
                a.value = asString(*n);
                expression(*n, a.value, Role::Launch);
            }
            if (auto n = member(an, "MemType")) {
                a.memType = asString(*n);
                if (a.memType != "Constant" && a.memType != "Global")
                    fail(n->ptr, "unknown MemType '" + a.memType + "' (expected Constant or Global)");
                if (a.memType == "Constant" && a.memoryType != "Vector")
                    fail(n->ptr, "MemType Constant is for Vector arguments (this one is " + a.memoryType + ")");
                if (a.memType == "Constant" && a.name.empty())
                    fail(n->ptr, "a MemType Constant argument needs a Name: the __constant__ variable it fills");
            }
            if (auto n = member(an, "Output")) {
                if ((*n)->is_boolean())
                    a.output = (*n)->get<bool>();
                else if ((*n)->is_number_integer() && (asInt(*n) == 0 || asInt(*n) == 1))
                    a.output = asInt(*n) == 1;
                else
                    fail(n->ptr, std::string("expected 0, 1, true or false, got ") + (*n)->dump());
            }
            if (auto n = member(an, "TensorMap")) {
                if (a.memoryType != "Scalar")
                    fail(n->ptr, "TensorMap is for Scalar arguments (a tensor map is passed by value; this one is " +
                                     a.memoryType + ")");
                if (!a.value.empty())
                    fail(n->ptr, "an argument is a TensorMap or has a Value, not both");
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
            const std::string ptr = args.ptr + "/" + std::to_string(i) + "/TensorMap/Tensor";
            const auto target = std::find_if(m_p.arguments.begin(), m_p.arguments.end(),
                                             [&](const KernelArgument& t) { return t.name == a.tensorMap->tensor; });
            if (target == m_p.arguments.end())
                fail(ptr, "'" + a.tensorMap->tensor + "' is not the name of an argument");
            if (target->memoryType != "Vector")
                fail(ptr, "'" + a.tensorMap->tensor + "' is a " + target->memoryType +
                              " argument; a tensor map maps a Vector argument's buffer");
            if (target->type != a.type)
                fail(args.ptr + "/" + std::to_string(i) + "/Type", "a tensor map's Type is its tensor's ('" +
                                                                       a.tensorMap->tensor + "' is " + target->type +
                                                                       ", this is " + a.type + ")");
        }
    }

    TensorMapSpec readTensorMap(const Node& tn) {
        expectObject(tn);
        TensorMapSpec t;
        t.tensor = asString(required(tn, "Tensor"));
        auto list = [&](const char* key, std::vector<std::string>& out) {
            const Node ln = required(tn, key);
            expectArray(ln);
            if (ln->empty() || ln->size() > 5)
                fail(ln.ptr, std::string(key) + " needs 1 to 5 entries (one per dimension, innermost first), got " +
                                 std::to_string(ln->size()));
            for (std::size_t i = 0; i < ln->size(); ++i) {
                const Node item = itemOf(ln, i);
                out.push_back(asExpressionText(item));
                expression(item, out.back(), Role::Launch);
            }
            return ln;
        };
        list("Dims", t.dims);
        const Node boxNode = list("Box", t.box);
        if (t.box.size() != t.dims.size())
            fail(boxNode.ptr, "Box has " + std::to_string(t.box.size()) + " entries and Dims " +
                                  std::to_string(t.dims.size()) + "; they need one each per dimension");
        if (auto n = member(tn, "Swizzle")) {
            t.swizzle = static_cast<int>(asInt(*n));
            if (t.swizzle != 0 && t.swizzle != 32 && t.swizzle != 64 && t.swizzle != 128)
                fail(n->ptr, "Swizzle is 0, 32, 64 or 128 (bytes), got " + std::to_string(t.swizzle));
        }
        keepUnknown(tn, {"Tensor", "Dims", "Box", "Swizzle"});
        return t;
    }

    void readReferenceArguments(const Node& refs) {
        expectArray(refs);
        for (std::size_t i = 0; i < refs->size(); ++i) {
            const Node rn = itemOf(refs, i);
            expectObject(rn);
            ReferenceArgument r;
            r.name = asString(required(rn, "Name"));
            const Node target = required(rn, "TargetName");
            r.targetName = asString(target);
            const bool known = std::any_of(m_p.arguments.begin(), m_p.arguments.end(),
                                           [&](const KernelArgument& a) { return a.name == r.targetName; });
            if (!known) {
                std::vector<std::string> names;
                for (const auto& a : m_p.arguments) {
                    if (!a.name.empty())
                        names.push_back(a.name);
                }
                fail(target.ptr, "TargetName '" + r.targetName + "' is not the name of an argument" +
                                     (names.empty() ? std::string(" (there are no named arguments)")
                                                    : " (expected one of " + joined(names) + ")"));
            }
            r.fillType = asEnum(required(rn, "FillType"), "FillType", kFillTypes);
            if (auto n = member(rn, "FillValue"))
                r.fillValue = asNumber(*n);
            if (auto n = member(rn, "DataSource"))
                r.dataSource = asString(*n);
            if (auto n = member(rn, "RandomSeed"))
                r.randomSeed = asInt(*n);
            if (auto n = member(rn, "ValidationMethod"))
                r.validationMethod = asEnum(*n, "ValidationMethod", kValidationMethods);
            if (auto n = member(rn, "ValidationThreshold")) {
                r.validationThreshold = asNumber(*n);
                if (*r.validationThreshold < 0)
                    fail(n->ptr, "ValidationThreshold must not be negative");
            }
            keepUnknown(rn, {"Name", "TargetName", "FillType", "FillValue", "DataSource", "RandomSeed",
                             "ValidationMethod", "ValidationThreshold"});
            m_p.referenceArguments.push_back(std::move(r));
        }
    }

    void readSearch(const Node& search) {
        expectObject(search);
        m_p.searchName = asNonEmptyString(required(search, "Name"), "search Name");
        if (auto attrs = member(search, "Attributes")) {
            expectArray(*attrs);
            for (std::size_t i = 0; i < (*attrs)->size(); ++i) {
                const Node an = itemOf(*attrs, i);
                expectObject(an);
                TuningProblem::SearchAttribute attribute;
                attribute.name = asString(required(an, "Name"));
                const Node value = required(an, "Value");
                if (value->is_number() || value->is_boolean()) {
                    attribute.value = value->dump();
                    attribute.valueIsJson = true;
                } else {
                    attribute.value = asString(value);
                }
                keepUnknown(an, {"Name", "Value"});
                m_p.searchAttributes.push_back(std::move(attribute));
            }
        }
        keepUnknown(search, {"Name", "Attributes"});
    }

    void readBudget(const Node& budget) {
        expectArray(budget);
        for (std::size_t i = 0; i < budget->size(); ++i) {
            const Node bn = itemOf(budget, i);
            expectObject(bn);
            BudgetEntry b;
            b.type = asEnum(required(bn, "Type"), "Type", kBudgetTypes);
            const Node vn = required(bn, "BudgetValue");
            b.value = asNumber(vn);
            if (!(b.value > 0))
                fail(vn.ptr, b.type + " must be positive, got " + vn->dump());
            if (b.type == "ConfigurationFraction" && b.value > 1)
                fail(vn.ptr, "ConfigurationFraction must be at most 1, got " + vn->dump());
            if (b.type == "ConfigurationCount" && std::trunc(b.value) != b.value)
                fail(vn.ptr, "ConfigurationCount must be a whole number, got " + vn->dump());
            // Counts are exact in a double up to 2^53; durations beyond a century are a typo
            // (and past 292 years would not fit the clocks' 64-bit nanoseconds).
            if (b.type == "ConfigurationCount" && b.value > 9007199254740992.0)
                fail(vn.ptr, "ConfigurationCount is too large (at most 2^53 = 9007199254740992), got " + vn->dump());
            if (b.type == "TuningDuration" && b.value > static_cast<double>(kMaxDurationSeconds))
                fail(vn.ptr, "TuningDuration is too large (at most " + std::to_string(kMaxDurationSeconds) +
                                 " s, about a century), got " + vn->dump());
            keepUnknown(bn, {"Type", "BudgetValue"});
            m_p.budget.push_back(b);
        }
    }

    void readTilescope(const Node& ts) {
        expectObject(ts);
        if (auto n = member(ts, "Shapes"))
            readShapes(*n);
        if (auto on = member(ts, "Objective")) {
            expectObject(*on);
            Objective o;
            o.name = asNonEmptyString(required(*on, "Name"), "objective Name");
            const Node count = required(*on, "Count");
            o.count = asString(count);
            expression(count, o.count);
            if (auto s = member(*on, "Scale")) {
                o.scale = asNumber(*s);
                if (!(o.scale > 0))
                    fail(s->ptr, "Scale must be positive, got " + (*s)->dump());
            }
            keepUnknown(*on, {"Name", "Count", "Scale"});
            m_p.objective = std::move(o);
        }
        if (auto rn = member(ts, "Roofline"))
            readRoofline(*rn);
        if (auto n = member(ts, "Metrics")) {
            m_p.metrics = asStringArray(*n);
            for (std::size_t i = 0; i < m_p.metrics.size(); ++i) {
                if (m_p.metrics[i].empty())
                    fail(itemOf(*n, i).ptr, "empty metric name");
            }
        }
        if (auto n = member(ts, "Silence")) {
            m_p.silencedWarnings = asStringArray(*n);
            for (std::size_t i = 0; i < m_p.silencedWarnings.size(); ++i) {
                if (!isLaunchWarningName(m_p.silencedWarnings[i]))
                    fail(itemOf(*n, i).ptr, "'" + m_p.silencedWarnings[i] + "' is no warning's name (" +
                                                std::string(launchWarningNames()) + ")");
            }
        }
        keepUnknown(ts, {"Shapes", "Objective", "Roofline", "Metrics", "Silence"});
    }

    void readRoofline(const Node& rn) {
        expectObject(rn);
        RooflineSpec r;
        for (auto [key, target] : {std::pair{"Bytes", &r.bytes}, std::pair{"Flops", &r.flops}}) {
            if (auto n = member(rn, key)) {
                *target = (*n)->is_number() ? (*n)->dump() : asString(*n);
                expression(*n, *target);
            }
        }
        if (r.bytes.empty() && r.flops.empty())
            fail(rn.ptr, "a Roofline needs Bytes, Flops or both (the work of one launch)");
        if (auto n = member(rn, "Compute")) {
            r.compute = asString(*n);
            static const std::vector<std::string> kinds{"float", "tf32", "half", "bfloat16", "int8"};
            if (std::find(kinds.begin(), kinds.end(), r.compute) == kinds.end())
                fail(n->ptr, "Compute '" + r.compute +
                                 "' is not one of float, tf32, half, bfloat16, int8 (the "
                                 "arithmetic whose peak is the compute roof)");
        } else if (!r.flops.empty()) {
            fail(rn.ptr, "Flops needs Compute (float, tf32, half, bfloat16 or int8): the arithmetic whose peak is "
                         "the compute roof");
        }
        keepUnknown(rn, {"Bytes", "Flops", "Compute"});
        m_p.roofline = std::move(r);
    }

    void readShapes(const Node& shapes) {
        expectArray(shapes);
        if (shapes->empty())
            fail(shapes.ptr, "empty shape list (leave Shapes out for a problem without shapes)");
        std::set<std::string> firstKeys;
        bool generated = false;
        for (std::size_t i = 0; i < shapes->size(); ++i) {
            const Node sn = itemOf(shapes, i);
            expectObject(sn);
            // Each dim one integer, or a list of them (a JSON array, or a string Python's eval reads
            // as one: "[2**i for i in range(0, 13)]"): the entry stands for the product.
            std::vector<std::pair<std::string, std::vector<std::int64_t>>> lists;
            std::set<std::string> keys;
            for (const auto& [key, value] : sn->items()) {
                const Node dim = childOf(sn, key);
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
                fail(sn.ptr, message);
            }
            std::size_t count = 1;
            for (const auto& [key, values] : lists) {
                count *= values.size();
                if (count > kMaxShapes)
                    fail(sn.ptr, "the entry generates more than " + std::to_string(kMaxShapes) + " shapes");
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
                    fail(shapes.ptr, "more than " + std::to_string(kMaxShapes) + " shapes");
            }
        }
        if (generated)
            m_p.shapesSource = shapes->dump();
    }

    static constexpr std::size_t kMaxShapes = 100000;

    /// A shape dim's values: an integer, an array of integers, or a string that is a list of
    /// integers in Python's syntax.
    std::vector<std::int64_t> shapeValues(const Node& dim) {
        std::vector<std::int64_t> values;
        if (dim->is_number()) {
            values.push_back(asInt(dim)); // says what a fraction or an out-of-range number is
        } else if (dim->is_array()) {
            for (std::size_t i = 0; i < dim->size(); ++i)
                values.push_back(asInt(itemOf(dim, i)));
        } else if (dim->is_string()) {
            const std::string& text = dim->get<std::string>();
            if (!text.empty() && text.find_first_not_of("0123456789+- ") == std::string::npos)
                fail(dim.ptr, "expected an integer, got a string (\"" + text +
                                  "\"; a string here is a list of values such as \"[2**i for i in range(0, 13)]\")");
            std::vector<std::unique_ptr<std::string>> strings;
            std::vector<expr::Value> list;
            try {
                list = expr::parseValueList(dim->get<std::string>(), strings);
            } catch (const expr::ExprError& e) {
                fail(dim.ptr, spec::describeExprErrorInline(e));
            }
            for (const expr::Value& v : list) {
                if (v.kind != expr::Kind::Int)
                    fail(dim.ptr, "the list holds " + expr::repr(v) + "; a shape's dims are integers");
                values.push_back(v.i);
            }
        } else {
            fail(dim.ptr, std::string("expected an integer, a list of integers or a string that makes one, got ") +
                              describe(*dim));
        }
        if (values.empty())
            fail(dim.ptr, "an empty list of values (a shape dim needs at least one)");
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
                             spec::escapePointerToken(dim) + ")");
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
