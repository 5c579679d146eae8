#include "spec/tritonscan.h"

#include "spec/tuningproblem.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace tilescope {

namespace {

bool pyIdentStart(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || static_cast<unsigned char>(c) >= 0x80;
}
bool pyIdent(char c) {
    return pyIdentStart(c) || std::isdigit(static_cast<unsigned char>(c));
}

std::string_view pyTrimmed(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

// One logical line of Python: its physical lines joined (inside brackets, after a backslash),
// comments left out, strings kept as written; the physical line of each character.
struct PyLogicalLine {
    std::string text;
    std::vector<int> lines;
    int indent = 0; // columns of blanks before it on its first line

    void add(char c, int line) {
        text += c;
        lines.push_back(line);
    }
};

// The end of the string literal whose opening quote is at `at` (one past its closing quote, or
// the end of the text for one that never closes).
std::size_t pyStringEnd(std::string_view s, std::size_t at) {
    const char quote = s[at];
    const bool triple = s.compare(at, 3, std::string(3, quote)) == 0;
    std::size_t i = at + (triple ? 3 : 1);
    while (i < s.size()) {
        if (s[i] == '\\') {
            i += 2;
        } else if (triple ? s.compare(i, 3, std::string(3, quote)) == 0 : s[i] == quote) {
            return i + (triple ? 3 : 1);
        } else if (!triple && s[i] == '\n') {
            return i; // an unterminated one-line string: Python refuses it; here it ends the line
        } else {
            ++i;
        }
    }
    return s.size();
}

std::vector<PyLogicalLine> pyLogicalLines(std::string_view s) {
    std::vector<PyLogicalLine> out;
    PyLogicalLine current;
    int depth = 0;
    int line = 1;
    bool atLineStart = true; // no character of the current logical line yet on this physical line
    int column = 0;
    auto finish = [&] {
        if (!pyTrimmed(current.text).empty())
            out.push_back(std::move(current));
        current = PyLogicalLine();
        depth = 0;
    };
    for (std::size_t i = 0; i < s.size();) {
        const char c = s[i];
        if (c == '\n') {
            ++line;
            ++i;
            column = 0;
            if (depth > 0) {
                current.add(' ', line - 1);
                continue;
            }
            finish();
            atLineStart = true;
            continue;
        }
        if (atLineStart && current.text.empty() && (c == ' ' || c == '\t' || c == '\f' || c == '\r')) {
            column += c == '\t' ? 8 - column % 8 : 1;
            ++i;
            continue;
        }
        if (current.text.empty() && c != '#')
            current.indent = column;
        atLineStart = false;
        if (c == '#') {
            while (i < s.size() && s[i] != '\n')
                ++i;
            continue;
        }
        if (c == '\\' && i + 1 < s.size() &&
            (s[i + 1] == '\n' || (s[i + 1] == '\r' && i + 2 < s.size() && s[i + 2] == '\n'))) {
            i += s[i + 1] == '\n' ? 2 : 3;
            ++line;
            current.add(' ', line - 1);
            continue;
        }
        if (c == '"' || c == '\'') {
            const std::size_t end = pyStringEnd(s, i);
            for (; i < end; ++i) {
                current.add(s[i], line);
                if (s[i] == '\n')
                    ++line;
            }
            continue;
        }
        if (pyIdentStart(c)) {
            std::size_t j = i;
            while (j < s.size() && pyIdent(s[j]))
                ++j;
            // A string's prefix (r, f, b, ...) is a word like any other: its quote comes next.
            for (; i < j; ++i)
                current.add(s[i], line);
            continue;
        }
        if (c == '(' || c == '[' || c == '{')
            ++depth;
        else if ((c == ')' || c == ']' || c == '}') && depth > 0)
            --depth;
        current.add(c, line);
        ++i;
    }
    finish();
    return out;
}

// Calls f(begin, end) for each piece of text[from, to) between commas outside brackets and
// strings.
template <typename F>
void pySplitTopLevel(std::string_view text, char separator, F&& f) {
    int depth = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i < text.size();) {
        const char c = text[i];
        if (c == '"' || c == '\'') {
            i = pyStringEnd(text, i);
            continue;
        }
        if (c == '(' || c == '[' || c == '{')
            ++depth;
        else if ((c == ')' || c == ']' || c == '}') && depth > 0)
            --depth;
        else if (c == separator && depth == 0) {
            f(start, i);
            start = i + 1;
        }
        ++i;
    }
    f(start, text.size());
}

// The offset of the bracket that closes the one at `open`, or npos.
std::size_t pyClosingBracket(std::string_view text, std::size_t open) {
    int depth = 0;
    for (std::size_t i = open; i < text.size();) {
        const char c = text[i];
        if (c == '"' || c == '\'') {
            i = pyStringEnd(text, i);
            continue;
        }
        if (c == '(' || c == '[' || c == '{')
            ++depth;
        else if (c == ')' || c == ']' || c == '}') {
            if (--depth == 0)
                return i;
        }
        ++i;
    }
    return std::string_view::npos;
}

// The first '=' of a parameter that assigns its default (not ==, <=, >=, !=) and the first ':'
// before it (the annotation's), outside brackets and strings.
void pyAnnotationAndDefault(std::string_view piece, std::size_t& colon, std::size_t& equals) {
    colon = equals = std::string_view::npos;
    int depth = 0;
    for (std::size_t i = 0; i < piece.size();) {
        const char c = piece[i];
        if (c == '"' || c == '\'') {
            i = pyStringEnd(piece, i);
            continue;
        }
        if (c == '(' || c == '[' || c == '{') {
            ++depth;
        } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
            --depth;
        } else if (depth == 0 && c == ':' && colon == std::string_view::npos) {
            colon = i;
        } else if (depth == 0 && c == '=') {
            const bool comparison =
                (i + 1 < piece.size() && piece[i + 1] == '=') ||
                (i > 0 && (piece[i - 1] == '<' || piece[i - 1] == '>' || piece[i - 1] == '!' || piece[i - 1] == '='));
            if (!comparison) {
                equals = i;
                return;
            }
            if (i + 1 < piece.size() && piece[i + 1] == '=')
                ++i;
        }
        ++i;
    }
}

bool isJitDecorator(std::string_view decorator) {
    std::string callee;
    for (char c : decorator.substr(0, decorator.find('('))) {
        if (!std::isspace(static_cast<unsigned char>(c)))
            callee += c;
    }
    return callee == "jit" || (callee.size() > 4 && callee.ends_with(".jit"));
}

// The function a top-level `def` line defines.
std::optional<TritonFunction> pyParseDef(const PyLogicalLine& l) {
    std::string_view text = l.text;
    std::size_t at = 0;
    auto skipSpace = [&] {
        while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at])))
            ++at;
    };
    if (text.compare(0, 6, "async ") == 0) {
        at = 6;
        skipSpace();
    }
    if (text.compare(at, 3, "def") != 0 || at + 3 >= text.size() || pyIdent(text[at + 3]))
        return std::nullopt;
    at += 3;
    skipSpace();
    const std::size_t nameStart = at;
    while (at < text.size() && pyIdent(text[at]))
        ++at;
    if (at == nameStart)
        return std::nullopt;
    TritonFunction f;
    f.name = std::string(text.substr(nameStart, at - nameStart));
    f.line = l.lines[nameStart];
    skipSpace();
    if (at >= text.size() || text[at] != '(')
        return std::nullopt;
    const std::size_t open = at;
    const std::size_t close = pyClosingBracket(text, open);
    if (close == std::string_view::npos)
        return std::nullopt;
    const std::string_view inside = text.substr(open + 1, close - open - 1);
    pySplitTopLevel(inside, ',', [&](std::size_t begin, std::size_t end) {
        std::string_view piece = inside.substr(begin, end - begin);
        std::size_t lead = 0;
        while (lead < piece.size() && std::isspace(static_cast<unsigned char>(piece[lead])))
            ++lead;
        piece = pyTrimmed(piece);
        if (piece.empty() || piece == "/" || piece == "*")
            return;
        if (piece.front() == '*') {
            if (f.unsupported.empty())
                f.unsupported = "its parameter '" + std::string(piece.substr(0, piece.find_first_of(":=", 0))) +
                                "' takes any number of arguments, which a kernel cannot";
            return;
        }
        TritonParameter p;
        std::size_t colon = 0, equals = 0;
        pyAnnotationAndDefault(piece, colon, equals);
        const std::size_t nameEnd = std::min({colon, equals, piece.size()});
        p.name = std::string(pyTrimmed(piece.substr(0, nameEnd)));
        if (colon != std::string_view::npos)
            p.annotation = std::string(pyTrimmed(
                piece.substr(colon + 1, (equals == std::string_view::npos ? piece.size() : equals) - colon - 1)));
        if (equals != std::string_view::npos)
            p.defaultText = std::string(pyTrimmed(piece.substr(equals + 1)));
        p.isConstexpr = p.annotation.find("constexpr") != std::string::npos;
        p.line = l.lines[open + 1 + begin + lead];
        f.parameters.push_back(std::move(p));
    });
    return f;
}

std::string pyJoined(const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& n : names)
        out += (out.empty() ? "" : ", ") + n;
    return out;
}

} // namespace

std::vector<const TritonParameter*> TritonFunction::runtimeParameters() const {
    std::vector<const TritonParameter*> out;
    for (const TritonParameter& p : parameters)
        if (!p.isConstexpr)
            out.push_back(&p);
    return out;
}

const TritonParameter* TritonFunction::parameter(std::string_view wanted) const {
    for (const TritonParameter& p : parameters)
        if (p.name == wanted)
            return &p;
    return nullptr;
}

std::vector<TritonFunction> scanPythonFunctions(std::string_view source) {
    std::vector<TritonFunction> functions;
    std::vector<std::string> decorators; // of the def to come
    for (const PyLogicalLine& l : pyLogicalLines(source)) {
        if (l.indent > 0)
            continue; // a function's body, a class's: not the module's top level
        const std::string_view text = pyTrimmed(l.text);
        if (text.front() == '@') {
            decorators.emplace_back(pyTrimmed(text.substr(1)));
            continue;
        }
        if (std::optional<TritonFunction> f = pyParseDef(l)) {
            f->decorators = std::move(decorators);
            f->jit = std::any_of(f->decorators.begin(), f->decorators.end(),
                                 [](const std::string& d) { return isJitDecorator(d); });
            functions.push_back(std::move(*f));
        }
        decorators.clear();
    }
    return functions;
}

const std::vector<std::string>& tritonCompileOptions() {
    static const std::vector<std::string> options = {"num_warps", "num_stages", "num_ctas", "maxnreg"};
    return options;
}

bool isTritonCompileOption(std::string_view name) {
    const auto& options = tritonCompileOptions();
    return std::find(options.begin(), options.end(), name) != options.end();
}

TritonFunction checkTritonKernel(const TuningProblem& problem, std::string_view source) {
    const std::string file = std::filesystem::path(problem.kernelFile).filename().string();
    const std::vector<TritonFunction> functions = scanPythonFunctions(source);
    const TritonFunction* kernel = nullptr;
    std::vector<std::string> jitNames;
    for (const TritonFunction& f : functions) {
        if (f.name == problem.kernelName)
            kernel = &f; // Python keeps the last definition of a name
        if (f.jit && std::find(jitNames.begin(), jitNames.end(), f.name) == jitNames.end())
            jitNames.push_back(f.name);
    }
    if (!kernel)
        throw InputError(problem.fileName, "/KernelSpecification/KernelName",
                         "no function '" + problem.kernelName + "' at the top level of the kernel file " + file +
                             (jitNames.empty() ? std::string(", which defines no @triton.jit function")
                                               : " (its @triton.jit functions: " + pyJoined(jitNames) + ")"));
    const std::string where = kernel->name + " (" + file + " line " + std::to_string(kernel->line) + ")";
    if (!kernel->jit)
        throw InputError(
            problem.fileName, "/KernelSpecification/KernelName",
            "the function " + where + " is not a Triton kernel: it is not decorated with @triton.jit" +
                (jitNames.empty() ? std::string() : " (the file's @triton.jit functions: " + pyJoined(jitNames) + ")"));
    if (!kernel->unsupported.empty())
        throw InputError(problem.fileName, "/KernelSpecification/KernelName",
                         "the Triton kernel " + where + " cannot be tuned: " + kernel->unsupported);

    const std::string options = pyJoined(tritonCompileOptions());
    for (std::size_t i = 0; i < problem.parameters.size(); ++i) {
        const std::string& name = problem.parameters[i].name;
        const std::string pointer = "/ConfigurationSpace/TuningParameters/" + std::to_string(i) + "/Name";
        const TritonParameter* p = kernel->parameter(name);
        if (p && p->isConstexpr)
            continue;
        if (p)
            throw InputError(problem.fileName, pointer,
                             "tuning parameter '" + name + "' is a parameter of " + kernel->name +
                                 " that is not tl.constexpr (" + file + " line " + std::to_string(p->line) +
                                 "): Triton takes its value from the call's arguments (the problem's Arguments) when "
                                 "the kernel runs, so it cannot be tuned; annotate it '" +
                                 name + ": tl.constexpr' to make it a compile-time value");
        if (isTritonCompileOption(name))
            continue;
        throw InputError(problem.fileName, pointer,
                         "tuning parameter '" + name + "' is neither a tl.constexpr parameter of " + where +
                             " nor one of Triton's compile options (" + options + ")");
    }

    const std::vector<const TritonParameter*> runtime = kernel->runtimeParameters();
    if (runtime.size() != problem.arguments.size()) {
        std::vector<std::string> names;
        for (const TritonParameter* p : runtime)
            names.push_back(p->name);
        throw InputError(problem.fileName, "/KernelSpecification/Arguments",
                         "the Triton kernel " + where + " takes " + std::to_string(runtime.size()) +
                             (runtime.size() == 1 ? " argument" : " arguments") + " that " +
                             (runtime.size() == 1 ? "is" : "are") + " not tl.constexpr" +
                             (names.empty() ? std::string() : " (" + pyJoined(names) + ")") + ", and Arguments has " +
                             std::to_string(problem.arguments.size()) +
                             ": one Argument for each of them, in the order of the signature");
    }

    for (const TritonParameter& p : kernel->parameters) {
        if (!p.isConstexpr || p.defaultText || problem.parameterIndex(p.name) >= 0)
            continue;
        const bool shapeName = !problem.shapes.empty() &&
                               std::any_of(problem.shapes.front().dims.begin(), problem.shapes.front().dims.end(),
                                           [&](const auto& dim) { return dim.first == p.name; });
        if (shapeName)
            continue;
        throw InputError(problem.fileName, "/ConfigurationSpace/TuningParameters",
                         "the tl.constexpr parameter '" + p.name + "' of " + kernel->name + " (" + file + " line " +
                             std::to_string(p.line) +
                             ") has no value: give it as a tuning parameter (one value will do), a shape of that "
                             "name or a default in the signature");
    }
    return *kernel;
}

} // namespace tilescope
