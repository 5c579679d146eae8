#include "compile/kernelsource.h"

#include <algorithm>

namespace tilescope {

namespace {

bool isWordChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Python's \s on the ASCII range (str patterns): space, \t\n\v\f\r and the separators \x1c-\x1f.
bool isPythonSpace(char c) {
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
}

// re.sub(r"\n\s*#pragma\s+unroll\s+" + name, "\n", text): the leftmost matches, left to right.
// Like Kernel Tuner's pattern, nothing has to follow the name (a longer name that starts with it
// matches too, and keeps its tail).
std::string removeUnrollPragmas(const std::string& text, std::string_view name) {
    // The length of a match starting at `at` (a '\n'), or 0.
    auto matchAt = [&](std::size_t at) -> std::size_t {
        std::size_t i = at + 1;
        while (i < text.size() && isPythonSpace(text[i]))
            ++i;
        auto literal = [&](std::string_view word) {
            if (text.compare(i, word.size(), word) != 0)
                return false;
            i += word.size();
            return true;
        };
        auto spaces = [&] {
            const std::size_t from = i;
            while (i < text.size() && isPythonSpace(text[i]))
                ++i;
            return i > from;
        };
        if (!literal("#pragma") || !spaces() || !literal("unroll") || !spaces() || !literal(name))
            return 0;
        return i - at;
    };
    std::string out;
    out.reserve(text.size());
    std::size_t i = 0;
    while (i < text.size()) {
        if (text[i] == '\n') {
            if (const std::size_t length = matchAt(i)) {
                out += '\n';
                i += length;
                continue;
            }
        }
        out += text[i++];
    }
    return out;
}

} // namespace

std::string prepareKernelSource(std::string_view source, const Defines& defines) {
    std::string body(source);
    std::string prefix;
    for (const auto& [name, raw] : defines) {
        std::string value;
        value.reserve(raw.size());
        for (const char c : raw) {
            if (c == '\n')
                value += "\\\n";
            else
                value += c;
        }
        if (name.find("loop_unroll_factor") != std::string::npos) {
            // In CUDA "#pragma unroll N" wants a constant integer expression, which a macro is not
            // in every position: Kernel Tuner makes it a constexpr int, and 0 means "no factor".
            if (value == "0")
                body = removeUnrollPragmas(body, name);
            else
                prefix += "constexpr int " + name + " = " + value + ";\n";
        } else {
            prefix += "#define " + name + " " + value + "\n";
        }
    }
    if (!prefix.empty())
        prefix += "#line 1\n";
    return prefix + body;
}

std::string replaceParameterNames(std::string_view text, const Defines& parameters) {
    std::string out;
    std::size_t i = 0;
    while (i < text.size()) {
        if (!isWordChar(text[i])) {
            out += text[i++];
            continue;
        }
        std::size_t end = i;
        while (end < text.size() && isWordChar(text[end]))
            ++end;
        const std::string_view word = text.substr(i, end - i);
        const auto found = std::find_if(parameters.begin(), parameters.end(),
                                        [&](const auto& parameter) { return parameter.first == word; });
        if (found != parameters.end())
            out += found->second;
        else
            out += word;
        i = end;
    }
    return out;
}

std::unordered_set<std::string> wordsOf(std::string_view text) {
    std::unordered_set<std::string> words;
    std::size_t i = 0;
    while (i < text.size()) {
        if (!isWordChar(text[i])) {
            ++i;
            continue;
        }
        std::size_t end = i;
        while (end < text.size() && isWordChar(text[end]))
            ++end;
        words.emplace(text.substr(i, end - i));
        i = end;
    }
    return words;
}

} // namespace tilescope

namespace tilescope {

namespace {

// `source` with comments replaced by spaces (newlines kept, so lines keep their numbers) and
// backslash-newline continuations joined onto their first line (the newlines move to its end).
std::vector<std::string> logicalLines(std::string_view source) {
    std::string text;
    text.reserve(source.size());
    enum class State { Code, Line, Block, String, Char } state = State::Code;
    for (std::size_t i = 0; i < source.size(); ++i) {
        const char c = source[i];
        const char next = i + 1 < source.size() ? source[i + 1] : '\0';
        switch (state) {
        case State::Code:
            if (c == '/' && next == '/') {
                state = State::Line;
                text += "  ";
                ++i;
            } else if (c == '/' && next == '*') {
                state = State::Block;
                text += "  ";
                ++i;
            } else {
                if (c == '"')
                    state = State::String;
                else if (c == '\'')
                    state = State::Char;
                text += c;
            }
            break;
        case State::Line:
            if (c == '\n') {
                state = State::Code;
                text += c;
            } else {
                text += ' ';
            }
            break;
        case State::Block:
            if (c == '*' && next == '/') {
                state = State::Code;
                text += "  ";
                ++i;
            } else {
                text += c == '\n' ? '\n' : ' ';
            }
            break;
        case State::String:
        case State::Char:
            text += c;
            if (c == '\\' && next != '\0') {
                text += next;
                ++i;
            } else if (c == (state == State::String ? '"' : '\'') || c == '\n') {
                state = State::Code;
            }
            break;
        }
    }
    // Physical lines; a continued line takes the next ones' text and leaves them empty.
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = text.find('\n', start);
        lines.push_back(text.substr(start, (end == std::string::npos ? text.size() : end) - start));
        if (end == std::string::npos)
            break;
        start = end + 1;
    }
    for (std::size_t i = 0; i < lines.size(); ++i) {
        std::size_t j = i;
        while (j + 1 < lines.size() && !lines[i].empty() && lines[i].back() == '\\') {
            lines[i].pop_back();
            lines[i] += lines[j + 1];
            lines[++j].clear();
        }
        i = j;
    }
    return lines;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && isPythonSpace(s.front()))
        s.remove_prefix(1);
    while (!s.empty() && isPythonSpace(s.back()))
        s.remove_suffix(1);
    return s;
}

// The first word of `s` (letters, digits, '_'), and what follows it.
std::pair<std::string_view, std::string_view> firstWord(std::string_view s) {
    s = trim(s);
    std::size_t end = 0;
    while (end < s.size() && isWordChar(s[end]))
        ++end;
    return {s.substr(0, end), trim(s.substr(end))};
}

} // namespace

const std::vector<std::string>& kernelTunerDefines() {
    static const std::vector<std::string> names = {"grid_size_x",  "grid_size_y",  "grid_size_z", "block_size_x",
                                                   "block_size_y", "block_size_z", "kernel_tuner"};
    return names;
}

std::vector<Redefinition> findRedefinitions(std::string_view source, const std::vector<std::string>& names,
                                            const std::vector<std::string>& defined) {
    std::unordered_set<std::string> macros(defined.begin(), defined.end());
    macros.insert(names.begin(), names.end());
    const std::unordered_set<std::string> wanted(names.begin(), names.end());
    // One entry per open conditional: whether its current branch surely runs, surely does not,
    // or cannot be told, and whether a branch of it surely ran already.
    enum class Branch { Taken, Skipped, Unknown };
    struct Level {
        Branch branch;
        bool taken;
    };
    std::vector<Level> levels;
    auto reached = [&] {
        return std::all_of(levels.begin(), levels.end(), [](const Level& l) { return l.branch == Branch::Taken; });
    };
    // "#if" conditions it decides: defined(X), defined X, !defined(X), 0 and 1.
    auto decide = [&](std::string_view condition) -> Branch {
        condition = trim(condition);
        bool negate = false;
        if (!condition.empty() && condition.front() == '!') {
            negate = true;
            condition = trim(condition.substr(1));
        }
        if (condition == "0" || condition == "1")
            return (condition == "1") != negate ? Branch::Taken : Branch::Skipped;
        auto [word, rest] = firstWord(condition);
        if (word != "defined")
            return Branch::Unknown;
        bool parenthesised = false;
        if (!rest.empty() && rest.front() == '(') {
            parenthesised = true;
            rest = trim(rest.substr(1));
        }
        auto [name, after] = firstWord(rest);
        if (name.empty())
            return Branch::Unknown;
        if (parenthesised) {
            if (after.empty() || after.front() != ')')
                return Branch::Unknown;
            after = trim(after.substr(1));
        }
        if (!after.empty())
            return Branch::Unknown;
        return (macros.count(std::string(name)) > 0) != negate ? Branch::Taken : Branch::Skipped;
    };

    std::vector<Redefinition> found;
    const std::vector<std::string> lines = logicalLines(source);
    for (std::size_t n = 0; n < lines.size(); ++n) {
        std::string_view line = trim(lines[n]);
        if (line.empty() || line.front() != '#')
            continue;
        auto [directive, rest] = firstWord(line.substr(1));
        if (directive == "ifdef" || directive == "ifndef") {
            const std::string name(firstWord(rest).first);
            const bool isDefined = macros.count(name) > 0;
            const Branch b = isDefined == (directive == "ifdef") ? Branch::Taken : Branch::Skipped;
            levels.push_back({b, b == Branch::Taken});
        } else if (directive == "if") {
            const Branch b = decide(rest);
            levels.push_back({b, b == Branch::Taken});
        } else if (directive == "elif") {
            if (!levels.empty()) {
                Level& l = levels.back();
                l.branch = l.taken ? Branch::Skipped : Branch::Unknown;
            }
        } else if (directive == "else") {
            if (!levels.empty()) {
                Level& l = levels.back();
                l.branch = l.taken ? Branch::Skipped : l.branch == Branch::Skipped ? Branch::Taken : Branch::Unknown;
            }
        } else if (directive == "endif") {
            if (!levels.empty())
                levels.pop_back();
        } else if ((directive == "define" || directive == "undef") && reached()) {
            const std::string name(firstWord(rest).first);
            if (wanted.count(name) > 0)
                found.push_back({name, static_cast<int>(n + 1), std::string(line)});
            if (directive == "define")
                macros.insert(name);
            else
                macros.erase(name);
        }
        // A define in a branch that may not run leaves the set as it was: later tests of that
        // name are then decided as if it had not run.
    }
    return found;
}

} // namespace tilescope
