#include "exchange/cppheader.h"

#include "base/textformat.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

namespace tilescope {

using Json = nlohmann::ordered_json;

namespace {

std::string quote(const std::string& s) {
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"' || c == '\\')
            out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out + "\"";
}

std::string cppNumber(double v) {
    if (!std::isfinite(v))
        return std::string("0.0");
    std::string text = Json(v).dump();
    if (text.find_first_of(".eE") == std::string::npos)
        text += ".0";
    return text;
}

} // namespace

std::string cppIdentifier(const std::string& name, const std::string& fallback) {
    std::string out;
    for (const char c : name)
        out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
    if (out.empty())
        out = fallback;
    if (std::isdigit(static_cast<unsigned char>(out[0])))
        out = "k" + out;
    static const std::set<std::string> kReserved = {
        "and",      "bool",     "break",    "case",      "char",       "class",        "const",    "continue",
        "default",  "delete",   "do",       "double",    "else",       "enum",         "false",    "float",
        "for",      "if",       "in",       "int",       "is",         "long",         "not",      "or",
        "return",   "short",    "signed",   "sizeof",    "static",     "struct",       "switch",   "true",
        "typedef",  "union",    "unsigned", "void",      "while",      "None",         "True",     "False",
        "def",      "import",   "from",     "lambda",    "pass",       "with",         "yield",    "global",
        "template", "this",     "new",      "auto",      "namespace",  "operator",     "private",  "public",
        "using",    "virtual",  "device",   "lookup",    "Config",     "Entry",        "kEntries", "detail",
        "time_ms",  "lookupOn", "config",   "e",         "find",       "findOn",       "i",        "dispatch",
        "nearest",  "kShapes",  "kDims",    "kDimNames", "TunedShape", "dims",         "entry",    "regret",
        "s",        "d",        "a",        "b",         "best",       "bestDistance", "distance"};
    if (kReserved.count(out))
        out += '_';
    return out;
}

CppConfigLayout::CppConfigLayout(const std::vector<const ConfigValues*>& configs) {
    // Parameters in the first config's order, then any the others add.
    for (const ConfigValues* c : configs)
        for (const auto& [name, value] : *c)
            if (std::find(m_params.begin(), m_params.end(), name) == m_params.end())
                m_params.push_back(name);
    // A C++ type per parameter from the values it takes.
    for (const std::string& p : m_params) {
        bool allInt = true, allBool = true, anyString = false;
        for (const ConfigValues* c : configs) {
            const ConfigValue* it = c->find(p);
            if (!it)
                continue;
            allInt = allInt && it->isInt();
            allBool = allBool && it->isBool();
            anyString = anyString || !(it->isNumber() || it->isBool());
        }
        m_types.push_back(anyString ? "const char*" : allBool ? "bool" : allInt ? "long long" : "double");
        m_ids.push_back(cppIdentifier(p, "param"));
    }
}

std::string CppConfigLayout::structDefinition() const {
    std::string out = "struct Config {\n";
    for (std::size_t p = 0; p < m_params.size(); ++p)
        out += "    " + m_types[p] + " " + m_ids[p] + ";\n";
    if (m_params.empty())
        out += "    int unused;\n";
    return out + "};\n";
}

std::string CppConfigLayout::initializer(const ConfigValues& config) const {
    std::string out = "{";
    for (std::size_t p = 0; p < m_params.size(); ++p) {
        const ConfigValue* it = config.find(m_params[p]);
        const std::string& type = m_types[p];
        std::string v;
        if (!it)
            v = type == "const char*" ? "\"\"" : type == "bool" ? "false" : "0";
        else if (type == "const char*")
            v = quote(it->plain());
        else if (type == "bool")
            v = it->asBool() ? "true" : "false";
        else if (type == "long long")
            v = it->json() + "LL";
        else
            v = cppNumber(it->asNumber());
        out += (p ? ", " : "") + v;
    }
    if (m_params.empty())
        out += "0";
    return out + "}";
}

std::string writeCppHeader(const std::vector<BestConfig>& best, const std::string& guardName) {
    std::map<std::string, std::vector<const BestConfig*>> byKernel;
    for (const BestConfig& b : best)
        byKernel[b.kernel].push_back(&b);
    std::string out;
    out += "// Tuned configs exported by Tilescope " + std::string(TILESCOPE_VERSION) +
           ": the best config per (shape, device).\n";
    out += "// Self-contained C++17. Per kernel: lookup(shape...) gives the best config of the first device\n";
    out += "// tuned for that shape, lookupOn(device, shape...) that of one device; nullptr when not tuned.\n";
    out += "// find() and findOn() give the index in kEntries (-1: not tuned) and work at compile time.\n";
    out += "// The line below is for `tilescope-cli check`: where and from what each entry was tuned.\n";
    out += bestConfigsMetadataLine(best, "//");
    out += "#pragma once\n\n#include <cstdint>\n\n";
    const std::string ns = cppIdentifier(guardName, "tilescope_tuned");
    out += "namespace " + ns + " {\n\n";
    out += "namespace detail {\n";
    out += "constexpr bool sameText(const char* a, const char* b) {\n";
    out += "    while (*a != '\\0' && *a == *b) {\n        ++a;\n        ++b;\n    }\n    return *a == *b;\n}\n";
    out += "} // namespace detail\n";

    for (const auto& [kernel, entries] : byKernel) {
        std::vector<const ConfigValues*> configs;
        for (const BestConfig* b : entries)
            configs.push_back(&b->config);
        const CppConfigLayout layout(configs);
        std::vector<std::string> dims;
        for (const BestConfig* b : entries) {
            for (const auto& [name, value] : b->shape)
                if (std::find(dims.begin(), dims.end(), name) == dims.end())
                    dims.push_back(name);
        }
        std::size_t sizeDims = 0;
        for (const BestConfig* b : entries)
            if (b->shape.empty())
                sizeDims = std::max(sizeDims, b->problemSize.size());
        if (dims.empty())
            for (std::size_t i = 0; i < sizeDims; ++i)
                dims.push_back("problem_size_" + std::to_string(i));

        std::vector<std::string> dimIds;
        for (const std::string& d : dims)
            dimIds.push_back(cppIdentifier(d, "dim"));

        out += "\nnamespace " + cppIdentifier(kernel, "kernel") + " {\n\n";
        out += layout.structDefinition() + "\n";
        out += "struct Entry {\n";
        for (const std::string& d : dimIds)
            out += "    std::int64_t " + d + ";\n";
        out += "    const char* device;\n    Config config;\n    double time_ms;\n};\n\n";
        out += "inline constexpr Entry kEntries[] = {\n";
        for (const BestConfig* b : entries) {
            std::string row = "    {";
            for (std::size_t d = 0; d < dims.size(); ++d) {
                std::int64_t v = 0;
                if (!b->shape.empty()) {
                    for (const auto& [name, value] : b->shape)
                        if (name == dims[d])
                            v = value;
                } else if (d < b->problemSize.size()) {
                    v = b->problemSize[d];
                }
                row += std::to_string(v) + ", ";
            }
            row += quote(b->device) + ", " + layout.initializer(b->config) + ", " + cppNumber(b->timeMs) + "},";
            std::string label;
            for (const auto& [name, value] : b->shape)
                label += (label.empty() ? "" : " ") + name + "=" + std::to_string(value);
            if (b->ciHighMs > 0) // the winner's 95 % interval, as measured (metadata for people)
                label += (label.empty() ? "" : "; ") + std::string("95 %: ") + formatDouble("%.4f", b->ciLowMs) + "-" +
                         formatDouble("%.4f", b->ciHighMs) + " ms";
            if (b->energyJ)
                label += (label.empty() ? "" : "; ") + formatDouble("%.4g", *b->energyJ) + " J a launch";
            if (b->analysed) // time_ms is 0: nothing was timed
                label += (label.empty() ? "" : "; ") + describeAnalysed(*b);
            out += row + (label.empty() ? "" : "  // " + label) + "\n";
        }
        out += "};\n\n";

        std::string args, match, names;
        for (std::size_t d = 0; d < dimIds.size(); ++d) {
            args += (d ? ", " : "") + std::string("std::int64_t ") + dimIds[d];
            names += (d ? ", " : "") + dimIds[d];
            match += "kEntries[i]." + dimIds[d] + " == " + dimIds[d] + " && ";
        }
        // find() is constexpr for compile-time use; lookup() returns a pointer and is not, because
        // GCC's -Waddress warns about comparing a constant-folded table address with nullptr.
        const std::string count = "int(sizeof kEntries / sizeof kEntries[0])";
        out += "/// The index in kEntries of the best config for this shape on `device`, or -1.\n";
        out += "constexpr int findOn(const char* device" + (args.empty() ? "" : ", " + args) + ") {\n";
        out += "    for (int i = 0; i < " + count + "; ++i)\n";
        out += "        if (" + match + "detail::sameText(kEntries[i].device, device))\n";
        out += "            return i;\n    return -1;\n}\n\n";
        out += "/// The index in kEntries of the best config for this shape (the first device tuned for it), or -1.\n";
        out += "constexpr int find(" + args + ") {\n";
        if (match.empty()) {
            out += "    return 0;\n}\n\n"; // no shape: the first entry (there is at least one)
        } else {
            out += "    for (int i = 0; i < " + count + "; ++i)\n";
            out += "        if (" + match.substr(0, match.size() - 4) + ")\n            return i;\n";
            out += "    return -1;\n}\n\n";
        }
        out += "/// The best config for this shape on `device`, or nullptr when that was not tuned.\n";
        out += "inline const Config* lookupOn(const char* device" + (args.empty() ? "" : ", " + args) + ") {\n";
        out += "    const int i = findOn(device" + (names.empty() ? "" : ", " + names) + ");\n";
        out += "    return i < 0 ? nullptr : &kEntries[i].config;\n}\n\n";
        out += "/// The best config for this shape (of the first device tuned for it), or nullptr.\n";
        out += "inline const Config* lookup(" + args + ") {\n";
        out += "    const int i = find(" + names + ");\n";
        out += "    return i < 0 ? nullptr : &kEntries[i].config;\n}\n\n";
        out += "} // namespace " + cppIdentifier(kernel, "kernel") + "\n";
    }
    out += "\n} // namespace " + ns + "\n";
    return out;
}

} // namespace tilescope
