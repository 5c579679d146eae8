#include "spec/kernelscan.h"

#include "base/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace tilescope {

namespace {

bool isIdentStart(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool isIdent(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

} // namespace

std::string strippedSource(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    int continued = 0; // line breaks of joined lines, given back at the end of the joined line
    for (std::size_t i = 0; i < s.size();) {
        if (s.compare(i, 2, "//") == 0) {
            while (i < s.size() && s[i] != '\n')
                ++i;
        } else if (s.compare(i, 2, "/*") == 0) {
            const std::size_t end = s.find("*/", i + 2);
            for (std::size_t j = i; j < std::min(end, s.size()); ++j)
                if (s[j] == '\n')
                    out += '\n';
            i = end == std::string_view::npos ? s.size() : end + 2;
        } else if (s[i] == '"' || s[i] == '\'') {
            const char quote = s[i];
            out += quote;
            ++i;
            while (i < s.size() && s[i] != quote && s[i] != '\n') {
                i += s[i] == '\\' ? 2 : 1;
            }
            out += quote;
            ++i;
        } else if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == '\n') {
            i += 2; // a continued line
            ++continued;
        } else {
            if (s[i] == '\n') {
                out.append(static_cast<std::size_t>(continued), '\n');
                continued = 0;
            }
            out += s[i++];
        }
    }
    return out;
}

namespace {

std::vector<std::string> identifiers(std::string_view text) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < text.size();) {
        if (isIdentStart(text[i]) && (i == 0 || !isIdent(text[i - 1]))) {
            std::size_t j = i;
            while (j < text.size() && isIdent(text[j]))
                ++j;
            out.emplace_back(text.substr(i, j - i));
            i = j;
        } else if (std::isdigit(static_cast<unsigned char>(text[i]))) {
            while (i < text.size() && isIdent(text[i]))
                ++i; // a number, suffixes and all
        } else {
            ++i;
        }
    }
    return out;
}

std::string trim(std::string_view s) {
    std::size_t a = 0;
    std::size_t b = s.size();
    while (a < b && std::isspace(static_cast<unsigned char>(s[a])))
        ++a;
    while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1])))
        --b;
    return std::string(s.substr(a, b - a));
}

bool allCaps(const std::string& name) {
    bool letter = false;
    for (char c : name) {
        if (std::islower(static_cast<unsigned char>(c)))
            return false;
        letter = letter || std::isalpha(static_cast<unsigned char>(c));
    }
    return letter && name.size() >= 2;
}

// Names every CUDA source may use without defining them.
const std::set<std::string>& knownNames() {
    static const std::set<std::string> names = {
        "NULL",         "INT_MAX",      "INT_MIN",     "UINT_MAX",   "FLT_MAX",      "FLT_MIN",
        "DBL_MAX",      "DBL_MIN",      "LLONG_MAX",   "LLONG_MIN",  "ULLONG_MAX",   "M_PI",
        "M_E",          "FLT_EPSILON",  "DBL_EPSILON", "CHAR_BIT",   "RAND_MAX",     "EOF",
        "CUDART_INF_F", "CUDART_NAN_F", "CUDART_PI_F", "SIZE_MAX",   "INFINITY",     "NAN",
        "INT32_MAX",    "INT64_MAX",    "UINT32_MAX",  "UINT64_MAX", "FLT_MANT_DIG",
    };
    return names;
}

const std::set<std::string>& blockSizeNames() {
    static const std::set<std::string> names = {"block_size_x", "block_size_y", "block_size_z"};
    return names;
}

// The text between the bracket at `open` and its match; npos-terminated when unmatched.
std::size_t matching(const std::string& s, std::size_t open, char a, char b) {
    int depth = 0;
    for (std::size_t i = open; i < s.size(); ++i) {
        if (s[i] == a)
            ++depth;
        else if (s[i] == b && --depth == 0)
            return i;
    }
    return std::string::npos;
}

std::vector<std::string> splitTopLevel(const std::string& s) {
    std::vector<std::string> out;
    int depth = 0;
    std::string current;
    for (char c : s) {
        if (c == '<' || c == '(' || c == '[')
            ++depth;
        else if (c == '>' || c == ')' || c == ']')
            --depth;
        if (c == ',' && depth == 0) {
            out.push_back(trim(current));
            current.clear();
        } else {
            current += c;
        }
    }
    if (!trim(current).empty())
        out.push_back(trim(current));
    return out;
}

ScannedArgument readArgument(const std::string& text) {
    ScannedArgument a;
    a.pointer = text.find('*') != std::string::npos || text.find('[') != std::string::npos;
    static const std::set<std::string> qualifiers = {"const",  "__restrict__", "__restrict", "restrict", "volatile",
                                                     "struct", "unsigned",     "signed",     "long",     "short"};
    std::vector<std::string> words = identifiers(text.substr(0, text.find('=')));
    if (!words.empty()) {
        a.name = words.back();
        words.pop_back();
    }
    std::string base;
    bool isUnsigned = false;
    int longs = 0;
    for (const std::string& w : words) {
        if (w == "const")
            a.isConst = true;
        else if (w == "unsigned")
            isUnsigned = true;
        else if (w == "long")
            ++longs;
        else if (!qualifiers.count(w))
            base = w;
    }
    if (base.empty())
        base = longs ? "long" : "int";
    if (longs >= 2 && base == "int")
        base = "long long";
    a.baseType = (isUnsigned ? "unsigned " : "") + base;
    // `const float* p`: the pointee is const; `float* const p` is not.
    a.isConst = a.isConst && a.pointer && text.find("const") < text.find('*');
    return a;
}

// T1's type for a C++ base type; "" when there is none.
std::string t1Type(const std::string& base) {
    static const std::map<std::string, std::string> types = {
        {"float", "float"},
        {"double", "double"},
        {"half", "half"},
        {"__half", "half"},
        {"__nv_bfloat16", "bfloat16"},
        {"nv_bfloat16", "bfloat16"},
        {"__nv_fp8_e4m3", "float8_e4m3"},
        {"__nv_fp8_e5m2", "float8_e5m2"},
        {"bool", "bool"},
        {"char", "int8"},
        {"unsigned char", "uint8"},
        {"int8_t", "int8"},
        {"uint8_t", "uint8"},
        {"short", "int16"},
        {"unsigned short", "uint16"},
        {"int16_t", "int16"},
        {"uint16_t", "uint16"},
        {"int", "int32"},
        {"unsigned int", "uint32"},
        {"unsigned", "uint32"},
        {"int32_t", "int32"},
        {"uint32_t", "uint32"},
        {"long", "int64"},
        {"long long", "int64"},
        {"unsigned long", "uint64"},
        {"unsigned long long", "uint64"},
        {"int64_t", "int64"},
        {"uint64_t", "uint64"},
        {"size_t", "uint64"},
        {"float2", "float2"},
        {"float4", "float4"},
        {"double2", "double2"},
        {"half2", "half2"},
        {"__half2", "half2"},
    };
    const auto it = types.find(base);
    return it == types.end() ? std::string() : it->second;
}

} // namespace

KernelScan scanKernel(std::string_view source) {
    KernelScan scan;
    const std::string text = strippedSource(source);

    // Directives: what is tested, what is defined (and whether only under its own #ifndef).
    std::map<std::string, std::size_t> order; // name -> first position
    std::set<std::string> tested;
    std::set<std::string> defined;                   // defined anywhere
    std::map<std::string, std::string> guardDefault; // defined right under `#ifndef NAME`
    std::set<std::string> guards;                    // include guards: #ifndef X / #define X (empty)
    std::string code;                                // the lines that are not directives
    std::istringstream lines(text);
    std::string line;
    std::string openIfndef;
    std::size_t position = 0; // of the line being read
    std::string directiveText;
    // Where a name first appears: its directive's position, then its place in the directive.
    auto note = [&](const std::string& name) { order.emplace(name, position + directiveText.find(name)); };
    for (; std::getline(lines, line); position += line.size() + 1) {
        const std::string t = trim(line);
        if (t.empty() || t[0] != '#') {
            code += line + '\n';
            if (!t.empty())
                openIfndef.clear();
            continue;
        }
        const std::string directive = trim(std::string_view(t).substr(1));
        directiveText = directive;
        const std::vector<std::string> words = identifiers(directive);
        if (words.empty())
            continue;
        const std::string& kind = words[0];
        if (kind == "ifndef" || kind == "ifdef") {
            if (words.size() > 1) {
                tested.insert(words[1]);
                note(words[1]);
                openIfndef = kind == "ifndef" ? words[1] : std::string();
            }
        } else if (kind == "if" || kind == "elif") {
            for (std::size_t w = 1; w < words.size(); ++w) {
                if (words[w] != "defined") {
                    tested.insert(words[w]);
                    note(words[w]);
                }
            }
            openIfndef.clear();
        } else if (kind == "define" && words.size() > 1) {
            const std::string& name = words[1];
            const std::size_t at = directive.find(name) + name.size();
            const bool functionLike = at < directive.size() && directive[at] == '(';
            const std::string value = functionLike ? std::string() : trim(std::string_view(directive).substr(at));
            if (name == openIfndef) {
                if (value.empty())
                    guards.insert(name);
                else
                    guardDefault.emplace(name, value);
            } else {
                defined.insert(name);
            }
            openIfndef.clear();
        } else if (kind != "endif") {
            openIfndef.clear();
        }
    }

    // The kernel: the first __global__ function, its template parameters and arguments.
    const std::optional<KernelLocation> kernel = locateKernel(code);
    std::vector<std::string> templateNames;
    std::map<std::string, std::string> templateDefaults;
    if (kernel) {
        const std::size_t global = kernel->start;
        // `template <...>` right before it (only whitespace between).
        const std::size_t tmpl = code.rfind("template", global);
        if (tmpl != std::string::npos) {
            const std::size_t open = code.find('<', tmpl);
            const std::size_t close = open == std::string::npos ? open : matching(code, open, '<', '>');
            if (close != std::string::npos &&
                trim(std::string_view(code).substr(close + 1, global - close - 1)).empty()) {
                for (const std::string& p : splitTopLevel(code.substr(open + 1, close - open - 1))) {
                    const std::size_t eq = p.find('=');
                    const std::vector<std::string> words = identifiers(p.substr(0, eq));
                    if (words.empty())
                        continue;
                    scan.templateParameters.push_back(words.back());
                    if (words.front() != "typename" && words.front() != "class") {
                        templateNames.push_back(words.back());
                        if (eq != std::string::npos)
                            templateDefaults[words.back()] = trim(std::string_view(p).substr(eq + 1));
                    }
                }
            }
        }
        scan.kernelName = kernel->name;
        scan.arguments = kernel->arguments;
    }

    // Parameters, in order of first appearance.
    std::vector<std::pair<std::size_t, ScannedParameter>> found;
    std::set<std::string> taken;
    auto add = [&](const std::string& name, std::size_t at, std::optional<std::string> value, const char* origin) {
        if (!taken.insert(name).second)
            return;
        found.push_back({at, ScannedParameter{name, std::move(value), origin}});
    };
    for (const std::string& name : tested) {
        if (defined.count(name) || guards.count(name) || name.rfind("__", 0) == 0 || knownNames().count(name))
            continue;
        const auto d = guardDefault.find(name);
        add(name, order[name], d == guardDefault.end() ? std::nullopt : std::optional<std::string>(d->second),
            d == guardDefault.end() ? "#if" : "#ifndef guard");
    }
    const std::vector<std::string> used = identifiers(code);
    for (std::size_t i = 0; i < used.size(); ++i) {
        const std::string& name = used[i];
        if (defined.count(name) || guardDefault.count(name) || guards.count(name) || knownNames().count(name) ||
            name.rfind("__", 0) == 0)
            continue;
        if (blockSizeNames().count(name) || allCaps(name))
            add(name, text.size() + i, std::nullopt, "used, not defined");
    }
    for (std::size_t i = 0; i < templateNames.size(); ++i) {
        const auto d = templateDefaults.find(templateNames[i]);
        // A template parameter named like a macro above is the same parameter.
        taken.erase(templateNames[i]);
        found.erase(std::remove_if(found.begin(), found.end(),
                                   [&](const auto& f) { return f.second.name == templateNames[i]; }),
                    found.end());
        add(templateNames[i], 2 * text.size() + i,
            d == templateDefaults.end() ? std::nullopt : std::optional<std::string>(d->second), "template parameter");
    }
    std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& f : found)
        scan.parameters.push_back(std::move(f.second));
    return scan;
}

std::optional<KernelLocation> locateKernel(std::string_view view, std::string_view name) {
    const std::string code(view);
    if (const std::size_t angle = name.find('<'); angle != std::string_view::npos)
        name = name.substr(0, angle);
    while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back())))
        name.remove_suffix(1);
    for (std::size_t global = code.find("__global__"); global != std::string::npos;
         global = code.find("__global__", global + 1)) {
        if ((global > 0 && isIdent(code[global - 1])) || (global + 10 < code.size() && isIdent(code[global + 10])))
            continue;
        // The name: the last identifier before the argument list that is not a qualifier (skips
        // `__launch_bounds__(...)`).
        KernelLocation k;
        k.start = global;
        std::size_t open = code.find('(', global);
        while (open != std::string::npos) {
            const std::vector<std::string> before = identifiers(code.substr(global, open - global));
            if (!before.empty() && before.back() == "__launch_bounds__") {
                const std::size_t close = matching(code, open, '(', ')');
                open = close == std::string::npos ? close : code.find('(', close + 1);
                continue;
            }
            if (!before.empty())
                k.name = before.back();
            break;
        }
        if (open == std::string::npos || k.name.empty() || (!name.empty() && k.name != name))
            continue;
        const std::size_t close = matching(code, open, '(', ')');
        if (close == std::string::npos)
            continue;
        k.argumentsOpen = open;
        k.argumentsClose = close;
        for (const std::string& a : splitTopLevel(code.substr(open + 1, close - open - 1))) {
            if (a != "void")
                k.arguments.push_back(readArgument(a));
        }
        const std::size_t body = code.find_first_not_of(" \t\r\n", close + 1);
        k.bodyOpen = k.bodyClose = std::string::npos;
        if (body != std::string::npos && code[body] == '{') {
            k.bodyOpen = body;
            k.bodyClose = matching(code, body, '{', '}');
        }
        return k;
    }
    return std::nullopt;
}

TuningProblem proposeProblem(const std::filesystem::path& kernelFile) {
    std::ifstream in(kernelFile, std::ios::binary);
    if (!in)
        throw InputError(kernelFile.string(), "", "cannot read the kernel file");
    std::ostringstream buffer;
    buffer << in.rdbuf();
    const KernelScan scan = scanKernel(buffer.str());
    if (scan.kernelName.empty())
        throw InputError(kernelFile.string(), "", "no __global__ function found: nothing to tune");

    using Json = nlohmann::ordered_json;
    Json parameters = Json::array();
    for (const ScannedParameter& p : scan.parameters) {
        const std::string value = p.defaultValue.value_or("1");
        std::string type = "int";
        std::string values = "[" + value + "]";
        if (value.find_first_not_of("0123456789+-") != std::string::npos) {
            const bool number = value.find_first_not_of("0123456789+-.eEfF") == std::string::npos;
            type = number ? "float" : "string";
            values = number ? "[" + value.substr(0, value.find_last_not_of("fF") + 1) + "]" : "['" + value + "']";
        }
        parameters.push_back({{"Name", p.name}, {"Type", type}, {"Values", values}});
    }
    std::string kernelName = scan.kernelName;
    if (!scan.templateParameters.empty()) {
        std::string list;
        for (const std::string& t : scan.templateParameters)
            list += (list.empty() ? "" : ", ") + t;
        kernelName += "<" + list + ">";
    }
    Json arguments = Json::array();
    for (const ScannedArgument& a : scan.arguments) {
        std::string type = t1Type(a.baseType);
        if (type.empty())
            type = "custom";
        if (a.pointer) {
            Json arg{{"Name", a.name},
                     {"Type", type},
                     {"MemoryType", "Vector"},
                     {"AccessType", a.isConst ? "ReadOnly" : "ReadWrite"},
                     {"Size", "ProblemSize[0]"}};
            if (a.isConst)
                arg["FillType"] = "Random";
            else {
                arg["FillType"] = "Constant";
                arg["FillValue"] = 0;
            }
            arguments.push_back(std::move(arg));
        } else {
            Json arg{{"Name", a.name}, {"Type", type}, {"MemoryType", "Scalar"}};
            const std::string lower = [&] {
                std::string l = a.name;
                std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return std::tolower(c); });
                return l;
            }();
            if (lower == "n" || lower.find("size") != std::string::npos || lower.find("count") != std::string::npos ||
                lower == "len" || lower == "length")
                arg["Value"] = "ProblemSize[0]";
            else {
                arg["FillType"] = "Constant";
                arg["FillValue"] = 1;
            }
            arguments.push_back(std::move(arg));
        }
    }
    Json problem{
        {"General", {{"FormatVersion", 1}}},
        {"ConfigurationSpace", {{"TuningParameters", parameters}, {"Conditions", Json::array()}}},
        {"KernelSpecification",
         {{"Language", "CUDA"},
          {"KernelName", kernelName},
          {"KernelFile", kernelFile.filename().string()},
          {"ProblemSize", Json::array({4096})},
          {"Arguments", arguments}}},
    };
    const std::filesystem::path dir = kernelFile.parent_path();
    const std::string name = kernelFile.stem().string() + ".json";
    return TuningProblem::parse(problem.dump(2), (dir / name).string(), dir);
}

} // namespace tilescope
