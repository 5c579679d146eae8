#include "analysis/boundsreach.h"

#include "expr/expr.h"
#include "spec/kernelscan.h"
#include "spec/tuningproblem.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <system_error>

namespace tilescope {

namespace {

struct Token {
    std::string text;
    std::size_t at = 0; // offset in the stripped source
};

bool identStart(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool identChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool isName(const std::string& t) {
    return !t.empty() && identStart(t[0]);
}

std::vector<Token> tokenize(std::string_view s, std::size_t base) {
    static const std::array<std::string_view, 22> operators = {
        "<<=", ">>=", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=",
        "&&",  "||",  "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "::"};
    std::vector<Token> out;
    for (std::size_t i = 0; i < s.size();) {
        const char c = s[i];
        if (std::isspace(static_cast<unsigned char>(c))) {
            ++i;
        } else if (identStart(c)) {
            std::size_t j = i;
            while (j < s.size() && identChar(s[j]))
                ++j;
            out.push_back({std::string(s.substr(i, j - i)), base + i});
            i = j;
        } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                   (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
            std::size_t j = i;
            while (j < s.size() && (identChar(s[j]) || s[j] == '.' ||
                                    ((s[j] == '+' || s[j] == '-') && (s[j - 1] == 'e' || s[j - 1] == 'E') &&
                                     s.substr(i, 2) != "0x" && s.substr(i, 2) != "0X")))
                ++j;
            out.push_back({std::string(s.substr(i, j - i)), base + i});
            i = j;
        } else {
            std::size_t length = 1;
            for (std::string_view op : operators) {
                if (s.substr(i, op.size()) == op) {
                    length = op.size();
                    break;
                }
            }
            out.push_back({std::string(s.substr(i, length)), base + i});
            i += length;
        }
    }
    return out;
}

std::vector<Token> tokenize(std::string_view s) {
    return tokenize(s, 0);
}

std::string spaced(const std::vector<Token>& tokens, std::size_t from, std::size_t to) {
    std::string out;
    for (std::size_t i = from; i < to && i < tokens.size(); ++i)
        out += (out.empty() ? "" : " ") + tokens[i].text;
    return out;
}

bool opens(const std::string& t) {
    return t == "(" || t == "[" || t == "{";
}
bool closes(const std::string& t) {
    return t == ")" || t == "]" || t == "}";
}

// The token that closes the bracket at `open`; tokens.size() when unmatched.
std::size_t matchingToken(const std::vector<Token>& tokens, std::size_t open) {
    int depth = 0;
    for (std::size_t i = open; i < tokens.size(); ++i) {
        if (opens(tokens[i].text))
            ++depth;
        else if (closes(tokens[i].text) && --depth == 0)
            return i;
    }
    return tokens.size();
}

// The last token of the statement that starts at `i`.
std::size_t statementEnd(const std::vector<Token>& tokens, std::size_t i, int depthLeft = 64) {
    const std::size_t n = tokens.size();
    if (i >= n || depthLeft == 0)
        return n == 0 ? 0 : n - 1;
    const std::string& t = tokens[i].text;
    if (t == "{")
        return std::min(matchingToken(tokens, i), n - 1);
    if (t == "else")
        return statementEnd(tokens, i + 1, depthLeft - 1);
    if ((t == "if" || t == "for" || t == "while" || t == "switch") && i + 1 < n && tokens[i + 1].text == "(") {
        const std::size_t close = matchingToken(tokens, i + 1);
        std::size_t end = statementEnd(tokens, close + 1, depthLeft - 1);
        if (t == "if" && end + 1 < n && tokens[end + 1].text == "else")
            end = statementEnd(tokens, end + 2, depthLeft - 1);
        return end;
    }
    int depth = 0;
    for (std::size_t j = i; j < n; ++j) {
        if (opens(tokens[j].text)) {
            ++depth;
        } else if (closes(tokens[j].text)) {
            if (--depth < 0)
                return j - 1;
        } else if (tokens[j].text == ";" && depth == 0) {
            return j;
        }
    }
    return n - 1;
}

// [from, to) split at the tokens `separator` outside brackets.
std::vector<std::pair<std::size_t, std::size_t>> splitTop(const std::vector<Token>& tokens, std::size_t from,
                                                          std::size_t to, const std::string& separator) {
    std::vector<std::pair<std::size_t, std::size_t>> parts;
    int depth = 0;
    std::size_t start = from;
    for (std::size_t i = from; i < to; ++i) {
        if (opens(tokens[i].text))
            ++depth;
        else if (closes(tokens[i].text))
            --depth;
        else if (depth == 0 && tokens[i].text == separator) {
            parts.emplace_back(start, i);
            start = i + 1;
        }
    }
    parts.emplace_back(start, to);
    return parts;
}

struct Bound {
    std::string name;
    std::string bound; // exclusive
    std::string check; // as written
};

// A comparison that bounds a name from above: `x < n`, `x <= n`, `n > x`, `n >= x`; with
// `whenTrueLeaves` (the check of `if (...) return;`), its negation: `x >= n`, `x > n`, ...
std::optional<Bound> readBound(const std::vector<Token>& tokens, std::size_t from, std::size_t to,
                               bool whenTrueLeaves) {
    while (to > from + 1 && tokens[from].text == "(" && matchingToken(tokens, from) == to - 1) {
        ++from;
        --to;
    }
    std::size_t at = to;
    int depth = 0;
    for (std::size_t i = from; i < to; ++i) {
        const std::string& t = tokens[i].text;
        if (opens(t))
            ++depth;
        else if (closes(t))
            --depth;
        else if (depth == 0 && (t == "<" || t == "<=" || t == ">" || t == ">=")) {
            if (at != to)
                return std::nullopt; // two comparisons: a template or a chain, not followed
            at = i;
        }
    }
    if (at == to || at == from || at + 1 == to)
        return std::nullopt;
    const std::string op = tokens[at].text;
    const bool leftName = at == from + 1 && isName(tokens[from].text);
    const bool rightName = at + 2 == to && isName(tokens[at + 1].text);
    const std::string left = spaced(tokens, from, at);
    const std::string right = spaced(tokens, at + 1, to);
    const std::string check = spaced(tokens, from, to);
    const auto plusOne = [](const std::string& e) { return "(" + e + ") + 1"; };
    if (!whenTrueLeaves) {
        if ((op == "<" || op == "<=") && leftName)
            return Bound{left, op == "<" ? right : plusOne(right), check};
        if ((op == ">" || op == ">=") && rightName)
            return Bound{right, op == ">" ? left : plusOne(left), check};
    } else {
        if ((op == ">=" || op == ">") && leftName)
            return Bound{left, op == ">=" ? right : plusOne(right), check};
        if ((op == "<=" || op == "<") && rightName)
            return Bound{right, op == "<=" ? left : plusOne(left), check};
    }
    return std::nullopt;
}

struct Region {
    std::size_t from = 0, to = 0; // tokens, inclusive
    std::vector<Bound> bounds;
};

// The object-like #defines of stripped source `text` into `defines` (a name defined twice with
// different values into `twice`); with `blank`, every directive line is blanked out of `text`.
void readDefines(std::string& text, std::map<std::string, std::string>& defines, std::set<std::string>& twice,
                 bool blank) {
    for (std::size_t start = 0; start < text.size();) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos)
            end = text.size();
        const std::size_t first = text.find_first_not_of(" \t", start);
        if (first < end && text[first] == '#') {
            const std::vector<Token> words = tokenize(std::string_view(text).substr(first + 1, end - first - 1));
            if (words.size() >= 2 && words[0].text == "define" && isName(words[1].text)) {
                const std::size_t nameEnd = first + 1 + words[1].at + words[1].text.size();
                const bool functionLike = nameEnd < end && text[nameEnd] == '(';
                if (!functionLike) {
                    const std::string value = spaced(words, 2, words.size());
                    const auto [it, added] = defines.emplace(words[1].text, value);
                    if (!added && it->second != value)
                        twice.insert(words[1].text);
                }
            }
            if (blank)
                std::fill(text.begin() + static_cast<std::ptrdiff_t>(first),
                          text.begin() + static_cast<std::ptrdiff_t>(end), ' ');
        }
        start = end + 1;
    }
}

// The names of the `#include "name"` lines of `source` (comments aside; `stripped` is
// strippedSource(source), whose lines are the source's but whose string literals are emptied).
std::vector<std::string> quotedIncludes(std::string_view source, std::string_view stripped) {
    std::vector<std::string> names;
    std::size_t rawStart = 0;
    for (std::size_t start = 0; start < stripped.size() && rawStart <= source.size();) {
        std::size_t end = stripped.find('\n', start);
        if (end == std::string_view::npos)
            end = stripped.size();
        std::size_t rawEnd = source.find('\n', rawStart);
        if (rawEnd == std::string_view::npos)
            rawEnd = source.size();
        const std::vector<Token> words = tokenize(stripped.substr(start, end - start));
        if (words.size() >= 2 && words[0].text == "#" && words[1].text == "include") {
            const std::string_view raw = source.substr(rawStart, rawEnd - rawStart);
            const std::size_t open = raw.find('"');
            const std::size_t close = open == std::string_view::npos ? open : raw.find('"', open + 1);
            if (close != std::string_view::npos && close > open + 1)
                names.emplace_back(raw.substr(open + 1, close - open - 1));
        }
        start = end + 1;
        rawStart = rawEnd + 1;
    }
    return names;
}

std::optional<std::string> readHeader(const std::filesystem::path& path) {
    constexpr std::uintmax_t kMaxHeaderBytes = 4u << 20;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec) || std::filesystem::file_size(path, ec) > kMaxHeaderBytes || ec)
        return std::nullopt;
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in)
        return std::nullopt;
    return text.str();
}

// The #defines of the headers `source` (the file headers.file) includes with quotes, and of the
// headers those include, each header once.
void readHeaderDefines(std::string_view source, const HeaderSearch& headers,
                       std::map<std::string, std::string>& defines, std::set<std::string>& twice) {
    constexpr int kMaxDepth = 8;
    constexpr std::size_t kMaxHeaders = 64;
    if (headers.file.empty())
        return;
    std::set<std::filesystem::path> seen;
    std::error_code ec;
    seen.insert(std::filesystem::weakly_canonical(headers.file, ec));
    std::function<void(std::string_view, const std::filesystem::path&, int)> follow;
    follow = [&](std::string_view text, const std::filesystem::path& file, int depth) {
        if (depth > kMaxDepth)
            return;
        const std::string stripped = strippedSource(text);
        for (const std::string& name : quotedIncludes(text, stripped)) {
            std::vector<std::filesystem::path> candidates;
            const std::filesystem::path named(name);
            if (named.is_absolute()) {
                candidates.push_back(named);
            } else {
                candidates.push_back(file.parent_path() / named);
                for (const std::filesystem::path& dir : headers.dirs)
                    candidates.push_back(dir / named);
            }
            for (const std::filesystem::path& candidate : candidates) {
                std::optional<std::string> header = readHeader(candidate);
                if (!header)
                    continue;
                if (seen.size() < kMaxHeaders && seen.insert(std::filesystem::weakly_canonical(candidate, ec)).second) {
                    std::string headerText = strippedSource(*header);
                    readDefines(headerText, defines, twice, false);
                    follow(*header, candidate, depth + 1);
                }
                break; // the first found is the one included
            }
        }
    };
    follow(source, headers.file, 1);
}

bool isIntegerType(const std::string& t) {
    static const std::set<std::string> types = {"int",     "unsigned", "signed",  "long",     "short",    "size_t",
                                                "int32_t", "uint32_t", "int64_t", "uint64_t", "ptrdiff_t"};
    return types.count(t) > 0;
}

bool changes(const std::string& t) {
    static const std::set<std::string> ops = {
        "=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^=", "++", "--"};
    return ops.count(t) > 0;
}

} // namespace

HeaderSearch headerSearch(const TuningProblem& problem) {
    HeaderSearch search;
    search.file = problem.kernelPath();
    std::error_code ec;
    const std::filesystem::path absolute = std::filesystem::absolute(search.file, ec);
    if (!ec)
        search.dirs.push_back(absolute.parent_path());
    const std::vector<std::string>& options = problem.compilerOptions;
    for (std::size_t i = 0; i < options.size(); ++i) {
        const std::string& o = options[i];
        if ((o == "-I" || o == "--include-path") && i + 1 < options.size())
            search.dirs.emplace_back(options[++i]);
        else if (o.rfind("--include-path=", 0) == 0)
            search.dirs.emplace_back(o.substr(15));
        else if (o.rfind("-I", 0) == 0 && o.size() > 2)
            search.dirs.emplace_back(o.substr(2));
    }
    return search;
}

KernelReach::KernelReach(std::string_view source, std::string_view kernelName, const HeaderSearch& headers) {
    std::string text = strippedSource(source);

    // Object-like #defines (one definition each, among the kernel's and its headers'), then
    // directives blanked out of the code.
    std::set<std::string> twice;
    readHeaderDefines(source, headers, m_defines, twice);
    readDefines(text, m_defines, twice, true);
    for (const std::string& name : twice)
        m_defines.erase(name);

    const std::optional<KernelLocation> kernel = locateKernel(text, kernelName);
    if (!kernel || kernel->bodyOpen == std::string::npos || kernel->bodyClose == std::string::npos)
        return;
    std::set<std::string> pointers;
    for (const ScannedArgument& a : kernel->arguments) {
        m_arguments.push_back(a.name);
        m_pointees.push_back(a.pointer ? a.baseType : std::string());
        if (a.pointer)
            pointers.insert(a.name);
    }
    const std::vector<Token> t =
        tokenize(std::string_view(text).substr(kernel->bodyOpen + 1, kernel->bodyClose - kernel->bodyOpen - 1),
                 kernel->bodyOpen + 1);
    const std::size_t n = t.size();

    // Integer constants: `[const] int NAME = ...;`, declared once, never changed.
    std::map<std::string, int> declared;
    std::set<std::size_t> declarations; // the tokens of their names
    std::set<std::string> changed;
    for (std::size_t i = 0; i < n; ++i) {
        if (!isIntegerType(t[i].text) || (i > 0 && isIntegerType(t[i - 1].text)))
            continue;
        std::size_t j = i;
        while (j < n && isIntegerType(t[j].text))
            ++j;
        if (j + 1 >= n || !isName(t[j].text) || t[j + 1].text != "=")
            continue;
        ++declared[t[j].text];
        declarations.insert(j);
        const std::size_t end = statementEnd(t, j);
        const auto parts = splitTop(t, j + 2, end, ",");
        if (parts.size() == 1 && end < n && t[end].text == ";")
            m_locals[t[j].text] = spaced(t, j + 2, end);
        else
            changed.insert(t[j].text); // several declarators: not followed
    }
    for (std::size_t i = 0; i < n; ++i) {
        if (!isName(t[i].text) || declarations.count(i))
            continue;
        if ((i + 1 < n && changes(t[i + 1].text)) || (i > 0 && (t[i - 1].text == "++" || t[i - 1].text == "--")))
            changed.insert(t[i].text);
    }
    for (auto it = m_locals.begin(); it != m_locals.end();) {
        if (declared[it->first] != 1 || changed.count(it->first))
            it = m_locals.erase(it);
        else
            ++it;
    }

    // The checks and the code they bound.
    std::vector<Region> regions;
    const auto boundsOf = [&](std::size_t from, std::size_t to, bool leaves, const std::string& joiner) {
        std::vector<Bound> out;
        for (const auto& [a, b] : splitTop(t, from, to, joiner)) {
            if (std::optional<Bound> bound = readBound(t, a, b, leaves))
                out.push_back(std::move(*bound));
        }
        return out;
    };
    for (std::size_t i = 0; i + 1 < n; ++i) {
        if ((t[i].text != "if" && t[i].text != "for") || t[i + 1].text != "(")
            continue;
        const std::size_t close = matchingToken(t, i + 1);
        if (close + 1 >= n)
            continue;
        if (t[i].text == "if") {
            const bool leaves = t[close + 1].text == "return" && close + 2 < n && t[close + 2].text == ";";
            if (leaves) {
                // `if (i >= n) return;`: bounds the rest of its block.
                if (splitTop(t, i + 2, close, "&&").size() > 1)
                    continue;
                std::size_t end = close + 3;
                for (int depth = 0; end < n; ++end) {
                    if (t[end].text == "{")
                        ++depth;
                    else if (t[end].text == "}" && depth-- == 0)
                        break;
                }
                regions.push_back({close + 3, end == 0 ? 0 : end - 1, boundsOf(i + 2, close, true, "||")});
            } else {
                if (splitTop(t, i + 2, close, "||").size() > 1)
                    continue;
                regions.push_back({close + 1, statementEnd(t, close + 1), boundsOf(i + 2, close, false, "&&")});
            }
        } else {
            const auto parts = splitTop(t, i + 2, close, ";");
            if (parts.size() != 3)
                continue;
            const std::string step = spaced(t, parts[2].first, parts[2].second);
            const bool upward = (step.find("++") != std::string::npos || step.find("+=") != std::string::npos) &&
                                step.find("--") == std::string::npos && step.find("-=") == std::string::npos;
            if (!upward || splitTop(t, parts[1].first, parts[1].second, "||").size() > 1)
                continue;
            regions.push_back(
                {close + 1, statementEnd(t, close + 1), boundsOf(parts[1].first, parts[1].second, false, "&&")});
        }
    }
    // `(y < h && x < w) ? in[y * w + x] : 0`: the check bounds the first branch.
    for (std::size_t q = 1; q + 1 < n; ++q) {
        if (t[q].text != "?" || t[q - 1].text != ")")
            continue;
        std::size_t open = q - 1;
        for (int depth = 0;; --open) {
            if (t[open].text == ")")
                ++depth;
            else if (t[open].text == "(" && --depth == 0)
                break;
            if (open == 0)
                break;
        }
        if (t[open].text != "(" || splitTop(t, open + 1, q - 1, "||").size() > 1)
            continue;
        std::size_t colon = q + 1;
        for (int depth = 0, nested = 0; colon < n; ++colon) {
            const std::string& x = t[colon].text;
            if (opens(x))
                ++depth;
            else if (closes(x) && --depth < 0)
                break;
            else if (depth == 0 && x == "?")
                ++nested;
            else if (depth == 0 && x == ":" && nested-- == 0)
                break;
        }
        if (colon < n && t[colon].text == ":")
            regions.push_back({q + 1, colon - 1, boundsOf(open + 1, q - 1, false, "&&")});
    }
    std::stable_sort(regions.begin(), regions.end(),
                     [](const Region& a, const Region& b) { return a.from != b.from ? a.from < b.from : a.to > b.to; });

    // The indexes into pointer arguments: `p[...]` and `p + ...`.
    const auto lineOf = [&](std::size_t offset) {
        return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
    };
    static const std::set<std::string> ends = {
        ",", ";", "?", ":", "=", "==", "!=", "<", ">", "<=", ">=", "&&", "||", "]", "}", "{", "+=", "-=", "*=", "/="};
    for (std::size_t i = 0; i + 2 < n; ++i) {
        if (!pointers.count(t[i].text) || (i > 0 && (t[i - 1].text == "." || t[i - 1].text == "->")))
            continue;
        std::size_t from = i + 2, to = 0, last = 0;
        if (t[i + 1].text == "[") {
            to = matchingToken(t, i + 1);
            last = to;
        } else if (t[i + 1].text == "+") {
            int depth = 0;
            for (to = i + 2; to < n; ++to) {
                const std::string& x = t[to].text;
                if (x == "(" || x == "[") {
                    ++depth;
                } else if (x == ")" || x == "]") {
                    if (--depth < 0)
                        break;
                } else if (depth == 0 && ends.count(x)) {
                    break;
                }
            }
            last = to - 1;
        } else {
            continue;
        }
        if (to >= n || to <= from)
            continue;
        BoundedIndex index;
        index.argument = static_cast<std::size_t>(std::find(m_arguments.begin(), m_arguments.end(), t[i].text) -
                                                  m_arguments.begin());
        index.access = spaced(t, i, last + 1);
        index.index = spaced(t, from, to);
        index.line = lineOf(t[i].at);
        for (const Region& r : regions) {
            if (r.from <= i && i <= r.to) {
                for (const Bound& b : r.bounds) {
                    index.bounds.emplace_back(b.name, b.bound);
                    index.checks += (index.checks.empty() ? "" : " && ") + b.check;
                }
            }
        }
        m_indexes.push_back(std::move(index));
    }
}

std::optional<std::int64_t> KernelReach::largest(const BoundedIndex& index,
                                                 const std::map<std::string, std::string>& values) const {
    std::map<std::string, std::string> bounds;
    for (const auto& [name, bound] : index.bounds)
        bounds[name] = bound; // the innermost check wins
    // C text -> the expression language's, every name replaced by what it stands for.
    std::function<std::optional<std::string>(const std::string&, int)> expand;
    expand = [&](const std::string& c, int depthLeft) -> std::optional<std::string> {
        if (depthLeft == 0)
            return std::nullopt;
        std::string out;
        for (const Token& token : tokenize(c)) {
            const std::string& x = token.text;
            if (isName(x)) {
                std::optional<std::string> inner;
                if (const auto b = bounds.find(x); b != bounds.end()) {
                    inner = expand(b->second, depthLeft - 1);
                    if (inner)
                        inner = "(" + *inner + ") - 1";
                } else if (const auto v = values.find(x); v != values.end()) {
                    inner = expand(v->second, depthLeft - 1);
                } else if (const auto d = m_defines.find(x); d != m_defines.end()) {
                    inner = expand(d->second, depthLeft - 1);
                } else if (const auto l = m_locals.find(x); l != m_locals.end()) {
                    inner = expand(l->second, depthLeft - 1);
                }
                if (!inner)
                    return std::nullopt;
                out += "(" + *inner + ")";
            } else if (std::isdigit(static_cast<unsigned char>(x[0]))) {
                std::string digits = x;
                while (!digits.empty() &&
                       (digits.back() == 'u' || digits.back() == 'U' || digits.back() == 'l' || digits.back() == 'L'))
                    digits.pop_back();
                std::size_t used = 0;
                long long v = 0;
                try {
                    v = std::stoll(digits, &used, 0);
                } catch (const std::exception&) {
                    return std::nullopt;
                }
                if (used != digits.size())
                    return std::nullopt; // a floating-point number
                out += " " + std::to_string(v) + " ";
            } else if (x == "+" || x == "-" || x == "*" || x == "%" || x == "(" || x == ")") {
                out += x;
            } else if (x == "/") {
                out += "//"; // C divides integers toward zero; indexes are not negative
            } else {
                return std::nullopt;
            }
        }
        return out.empty() ? std::nullopt : std::optional<std::string>(out);
    };
    const std::optional<std::string> text = expand(index.index, 32);
    if (!text)
        return std::nullopt;
    try {
        const expr::Expression e = expr::Expression::compile(*text, expr::Scope{});
        const expr::Value v = e.evaluate(nullptr);
        if (v.kind != expr::Kind::Int)
            return std::nullopt;
        return v.i;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

} // namespace tilescope
