#include "analysis/boundsreach.h"

#include "expr/expr.h"
#include "spec/kernelscan.h"
#include "spec/tuningproblem.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <numeric>
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

bool isBuiltin(const std::string& t) {
    return t == "threadIdx" || t == "blockIdx" || t == "blockDim" || t == "gridDim";
}

// `threadIdx . x` at `i`: the name "threadIdx.x"; "" for anything else.
std::string builtinAt(const std::vector<Token>& tokens, std::size_t i, std::size_t to) {
    if (i + 2 < to && isBuiltin(tokens[i].text) && tokens[i + 1].text == "." &&
        (tokens[i + 2].text == "x" || tokens[i + 2].text == "y" || tokens[i + 2].text == "z"))
        return tokens[i].text + "." + tokens[i + 2].text;
    return {};
}

// What one check says about one name: below `bound` (exclusive), from `bound` on, or not `bound`.
struct Bound {
    enum class Kind { Upper, Lower, Not };
    std::string name;
    std::string bound;
    std::string check; // as written
    Kind kind = Kind::Upper;
};

// The identifiers of tokens [from, to) that can name a variable (not a member, not a call), and
// the launch's threadIdx.x ... blockIdx.z.
std::set<std::string> namesIn(const std::vector<Token>& tokens, std::size_t from, std::size_t to) {
    std::set<std::string> names;
    for (std::size_t i = from; i < to; ++i) {
        const bool member = i > from && (tokens[i - 1].text == "." || tokens[i - 1].text == "->");
        const bool call = i + 1 < to && tokens[i + 1].text == "(";
        if (const std::string b = builtinAt(tokens, i, to); !b.empty()) {
            names.insert(b);
            i += 2;
        } else if (isName(tokens[i].text) && !member && !call) {
            names.insert(tokens[i].text);
        }
    }
    return names;
}

// A comparison of two sides, `x < n`, `n >= x`, ..., as it holds inside the code it guards; with
// `whenTrueLeaves` (the check of `if (...) return;`) its negation holds there. A side that is a
// bare name is bounded by the other: from above (`x < n`) or below (`x >= 0`).
std::vector<Bound> readBound(const std::vector<Token>& tokens, std::size_t from, std::size_t to, bool whenTrueLeaves) {
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
        else if (depth == 0 && (t == "<" || t == "<=" || t == ">" || t == ">=" || t == "==" || t == "!=")) {
            if (at != to)
                return {}; // two comparisons: a template or a chain, not followed
            at = i;
        }
    }
    if (at == to || at == from || at + 1 == to)
        return {};
    std::string op = tokens[at].text;
    if (whenTrueLeaves) {
        static const std::map<std::string, std::string> negation = {{"<", ">="}, {"<=", ">"},  {">", "<="},
                                                                    {">=", "<"}, {"==", "!="}, {"!=", "=="}};
        op = negation.at(op);
    }
    // As `left < right`, `left <= right`, `left == right` or `left != right` from here on.
    std::size_t lf = from, lt = at, rf = at + 1, rt = to;
    if (op == ">" || op == ">=") {
        std::swap(lf, rf);
        std::swap(lt, rt);
        op = op == ">" ? "<" : "<=";
    }
    const std::string left = spaced(tokens, lf, lt);
    const std::string right = spaced(tokens, rf, rt);
    const std::string check = spaced(tokens, from, to);
    const auto plusOne = [](const std::string& e) { return "(" + e + ") + 1"; };
    // A side that is one name or threadIdx.x and the like.
    const auto nameOf = [&](std::size_t a, std::size_t b) {
        if (b == a + 1 && isName(tokens[a].text))
            return tokens[a].text;
        const std::string builtin = builtinAt(tokens, a, b);
        return b == a + 3 ? builtin : std::string();
    };
    const std::string leftName = nameOf(lf, lt);
    const std::string rightName = nameOf(rf, rt);
    std::vector<Bound> out;
    using Kind = Bound::Kind;
    if (op == "==" || op == "!=") {
        for (const auto& [name, other] : {std::pair{leftName, right}, std::pair{rightName, left}}) {
            if (name.empty())
                continue;
            if (op == "!=") {
                out.push_back({name, other, check, Kind::Not});
            } else {
                out.push_back({name, plusOne(other), check, Kind::Upper});
                out.push_back({name, other, check, Kind::Lower});
            }
        }
        return out;
    }
    if (!leftName.empty())
        out.push_back({leftName, op == "<" ? right : plusOne(right), check, Kind::Upper});
    if (!rightName.empty())
        out.push_back({rightName, op == "<" ? plusOne(left) : left, check, Kind::Lower});
    return out;
}

// The code a check guards, and what it says there. A check that is not read (`(i & 1) == 0`,
// `a < n || b < m`, `f(i)`) leaves its names in `unread`: such a name is then bounded by nothing
// the launch or its declaration says, as that check may be what keeps it in range.
struct Region {
    std::size_t from = 0, to = 0; // tokens, inclusive
    std::vector<Bound> bounds;
    std::vector<std::pair<std::string, std::string>> unread; // name -> the check as written
};

// The bounds of condition [from, to) where it holds (or, with `leaves`, where it does not: after
// `if (...) return;`): a chain of && (|| when it leaves) of comparisons; the rest unread.
void readCondition(const std::vector<Token>& tokens, std::size_t from, std::size_t to, bool leaves, Region& region) {
    const std::string joiner = leaves ? "||" : "&&";
    const std::string other = leaves ? "&&" : "||";
    while (to > from + 1 && tokens[from].text == "(" && matchingToken(tokens, from) == to - 1) {
        ++from;
        --to;
    }
    const auto unread = [&](std::size_t a, std::size_t b) {
        for (const std::string& name : namesIn(tokens, a, b))
            region.unread.emplace_back(name, spaced(tokens, a, b));
    };
    if (splitTop(tokens, from, to, other).size() > 1) {
        unread(from, to);
        return;
    }
    for (const auto& [a, b] : splitTop(tokens, from, to, joiner)) {
        std::vector<Bound> bounds = readBound(tokens, a, b, leaves);
        if (bounds.empty())
            unread(a, b);
        for (Bound& bound : bounds)
            region.bounds.push_back(std::move(bound));
    }
}
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

// The #if conditions of a source's lines: chains of conditions, each node one (a branch taken,
// or the negation of an earlier branch of its group) with the node before it as its parent.
struct LineConditions {
    std::vector<std::string> text; ///< node -> its condition, as written
    std::vector<int> parent;       ///< node -> the node before it, -1 at a chain's start
    std::vector<int> lineNode;     ///< line -> the last node of its chain, -1 where none applies
};

// The #if conditions each line of stripped source `text` is compiled under, as written: the
// branch taken (`MODE == 1`, `defined(X)`), and the negations of the branches before it. Lines
// share their conditions as chains (a code generator's `#elif` over thousands of configs would
// otherwise copy every earlier branch's condition into each line after it).
LineConditions conditionsByLine(const std::string& text) {
    LineConditions out;
    auto add = [&](int parent, std::string condition) {
        out.text.push_back(std::move(condition));
        out.parent.push_back(parent);
        return static_cast<int>(out.text.size()) - 1;
    };
    struct Group {
        int outer;           // the enclosing chain's end
        int before;          // the chain with the negations of this group's earlier branches
        std::string current; // this branch's condition ("" after #else)
        int tail;            // the chain a line of this branch is compiled under
    };
    std::vector<Group> open;
    auto tail = [&] { return open.empty() ? -1 : open.back().tail; };
    for (std::size_t start = 0; start <= text.size();) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos)
            end = text.size();
        const std::size_t first = text.find_first_not_of(" \t", start);
        if (first < end && text[first] == '#') {
            const std::vector<Token> words = tokenize(std::string_view(text).substr(first + 1, end - first - 1));
            const std::string directive = words.empty() ? std::string() : words[0].text;
            const std::string rest = spaced(words, 1, words.size());
            auto opens = [&](std::string condition) {
                const int outer = tail();
                open.push_back({outer, outer, condition, add(outer, condition)});
            };
            if (directive == "if") {
                opens(rest);
            } else if (directive == "ifdef") {
                opens("defined ( " + rest + " )");
            } else if (directive == "ifndef") {
                opens("! defined ( " + rest + " )");
            } else if ((directive == "elif" || directive == "else") && !open.empty()) {
                Group& g = open.back();
                if (!g.current.empty())
                    g.before = add(g.before, "! ( " + g.current + " )");
                g.current = directive == "elif" ? rest : std::string();
                g.tail = g.current.empty() ? g.before : add(g.before, g.current);
            } else if (directive == "endif" && !open.empty()) {
                open.pop_back();
            }
        }
        out.lineNode.push_back(tail());
        start = end + 1;
    }
    return out;
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
    static const std::set<std::string> types = {"int",       "unsigned", "signed",   "long",    "short",
                                                "size_t",    "int32_t",  "uint32_t", "int64_t", "uint64_t",
                                                "ptrdiff_t", "uint",     "int16_t",  "uint16_t"};
    return types.count(t) > 0;
}

// The types of the values the kernel declares that an index or a check may name.
bool isDeclaredType(const std::string& t) {
    return isIntegerType(t) || t == "bool";
}

bool isQualifier(const std::string& t) {
    return t == "const" || t == "constexpr" || t == "static" || t == "register" || t == "volatile" ||
           t == "__restrict__" || t == "__restrict" || t == "restrict";
}

bool changes(const std::string& t) {
    static const std::set<std::string> ops = {
        "=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^=", "++", "--"};
    return ops.count(t) > 0;
}

// The end of an operand: what comes before a binary operator.
bool endsOperand(const std::string& t) {
    return isName(t) || std::isdigit(static_cast<unsigned char>(t[0])) || t == ")" || t == "]";
}

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

// An integer or a pointer the kernel declares with a value.
struct Declaration {
    std::string name;
    std::size_t at = 0;                                   // the name's token
    int line = 0;                                         // 0-based, for the #if branches it is in
    std::size_t scopeFrom = 0;                            // the block (or for statement) it is declared in
    std::size_t scopeTo = 0;                              // its last token
    std::size_t initFrom = 0, initTo = 0;                 // the initializer's tokens [from, to); empty without one
    enum class Loop { None, Up, Down } loop = Loop::None; // a for loop's own variable, and its step
    std::size_t stepFrom = 0, stepTo = 0;                 // `k += step`: the step's tokens; empty for ++
    bool changed = false;                                 // assigned, stepped or its address taken
    bool changedInBody = false;                           // changed other than by its loop's step
    bool pointer = false;
    std::size_t argument = kNone; // a pointer set from an argument (or from such a pointer): which
    std::string offset;           // and how far into it, C text
};

constexpr double kExact = 9007199254740992.0; // 2^53: beyond it, doubles stop counting every integer
constexpr double kInfinity = std::numeric_limits<double>::infinity();

// A range of whole numbers, in doubles (infinity stands for no bound; a bound beyond kExact is
// not trusted). Every value is a multiple of `mod` (0: the value 0 alone), so that `k < K` of a
// loop that steps k by 256 from a multiple of 256 leaves k at the multiple of 256 below K.
struct Interval {
    double lo = 0, hi = 0;
    double mod = 1;
};

double gcdOf(double a, double b) {
    if (!(std::fabs(a) < 9.0e15) || !(std::fabs(b) < 9.0e15))
        return 1;
    return static_cast<double>(std::gcd(static_cast<long long>(a), static_cast<long long>(b)));
}

Interval exactly(double v) {
    return {v, v, std::fabs(v)};
}

// [lo, hi] shrunk to the multiples of `mod` in it.
void align(double& lo, double& hi, double mod) {
    if (mod > 1 && std::isfinite(mod)) {
        if (std::isfinite(hi))
            hi = std::floor(hi / mod) * mod;
        if (std::isfinite(lo))
            lo = std::ceil(lo / mod) * mod;
    }
}

// a * b, where 0 times no bound is 0.
double product(double a, double b) {
    return a == 0 || b == 0 ? 0 : a * b;
}

} // namespace

struct KernelReach::Body {
    std::vector<Token> tokens;
    std::vector<int> lineOf; // each token's line, 0-based
    std::vector<Region> regions;
    std::vector<Declaration> declarations;
    std::multimap<std::string, std::size_t> byName; // -> declarations
    std::set<std::string> movedArguments;           // pointer arguments the kernel moves (`in += n`)
    std::map<std::size_t, std::size_t> aliasOf;     // an access's token -> the pointer's declaration
    // The #if conditions each line is compiled under, as written ("!(MODE == 1)", "defined(X)").
    LineConditions conditions;

    // The declaration of `name` that the token at `position` sees (of those `compiled` keeps);
    // nullptr for none. `twice`: another one is declared in the same block, as both branches of
    // an #if whose condition is not known, so it is not known which is compiled.
    template <typename Keep>
    const Declaration* visible(const std::string& name, std::size_t position, Keep compiled,
                               bool* twice = nullptr) const {
        const Declaration* found = nullptr;
        const auto [first, last] = byName.equal_range(name);
        for (auto it = first; it != last; ++it) {
            const Declaration& d = declarations[it->second];
            if (d.at < position && position <= d.scopeTo && compiled(d) && (!found || d.at > found->at))
                found = &d;
        }
        if (twice && found) {
            *twice = false;
            for (auto it = first; it != last; ++it) {
                const Declaration& d = declarations[it->second];
                *twice = *twice ||
                         (&d != found && d.scopeFrom == found->scopeFrom && d.scopeTo == found->scopeTo && compiled(d));
            }
        }
        return found;
    }
    const Declaration* visible(const std::string& name, std::size_t position) const {
        return visible(name, position, [](const Declaration&) { return true; });
    }
};

namespace {

// The reach of one index for one set of values: interval arithmetic over the kernel's tokens,
// each name resolved where it is written (a declaration's initializer in its own scope).
class Evaluation {
public:
    Evaluation(const KernelReach::Body& body, const std::vector<std::string>& arguments,
               const std::map<std::string, std::string>& defines, const std::map<std::string, std::string>& values,
               std::size_t access)
        : m_body(body)
        , m_arguments(arguments)
        , m_defines(defines)
        , m_values(values)
        , m_access(access) {
        for (const Region& r : body.regions) {
            if (r.from <= access && access <= r.to) {
                for (const Bound& b : r.bounds)
                    m_bounds.push_back(&b);
                for (const auto& [name, check] : r.unread)
                    m_unread.emplace(name, check);
            }
        }
    }

    // C text (or tokens) as seen at token `position`.
    std::optional<Interval> text(const std::string& c, std::size_t position) {
        std::vector<std::string> words;
        for (const Token& t : tokenize(c))
            words.push_back(t.text);
        return evaluate(words, position);
    }
    std::optional<Interval> tokens(std::size_t from, std::size_t to, std::size_t position) {
        std::vector<std::string> words;
        for (std::size_t i = from; i < to; ++i)
            words.push_back(m_body.tokens[i].text);
        return evaluate(words, position);
    }

    const std::string& why() const { return m_why; }

private:
    const KernelReach::Body& m_body;
    const std::vector<std::string>& m_arguments;
    const std::map<std::string, std::string>& m_defines;
    const std::map<std::string, std::string>& m_values;
    const std::size_t m_access;
    std::vector<const Bound*> m_bounds;               // the checks around the access
    std::multimap<std::string, std::string> m_unread; // names in checks around it that were not read
    // The conditions of the ?: being evaluated, for its branches: each with where it is written.
    std::vector<std::pair<Bound, std::size_t>> m_branch;
    std::vector<std::pair<std::string, std::string>> m_branchUnread;
    std::set<std::string> m_resolving; // against a name bounded through itself
    std::map<int, bool> m_compiled;    // condition chains' nodes -> whether their branches are compiled
    std::string m_why;                 // the first thing not followed
    int m_budget = 20000;              // steps, against runaway expansion

    std::nullopt_t fail(const std::string& why) {
        if (m_why.empty())
            m_why = why;
        return std::nullopt;
    }

    bool isArgument(const std::string& name) const {
        return std::find(m_arguments.begin(), m_arguments.end(), name) != m_arguments.end();
    }

    // A macro's text: a config's -D first, as on NVRTC's command line, then the source's #define.
    const std::string* macro(const std::string& name) const {
        if (const auto v = m_values.find(name); v != m_values.end() && !isArgument(name))
            return &v->second;
        if (const auto d = m_defines.find(name); d != m_defines.end())
            return &d->second;
        return nullptr;
    }

    // Macros replaced by their text, as the preprocessor does (no parentheses added).
    bool expand(const std::vector<std::string>& in, std::vector<std::string>& out, std::set<std::string>& active,
                int depth) {
        for (std::size_t i = 0; i < in.size(); ++i) {
            const std::string& w = in[i];
            const bool member = i > 0 && (in[i - 1] == "." || in[i - 1] == "->");
            const std::string* value = isName(w) && !member && !active.count(w) ? macro(w) : nullptr;
            if (!value) {
                out.push_back(w);
                continue;
            }
            if (depth > 32 || out.size() > 20000)
                return false;
            std::vector<std::string> words;
            for (const Token& t : tokenize(*value))
                words.push_back(t.text);
            active.insert(w);
            const bool ok = expand(words, out, active, depth + 1);
            active.erase(w);
            if (!ok)
                return false;
        }
        return true;
    }

    std::optional<Interval> evaluate(const std::vector<std::string>& words, std::size_t position) {
        std::vector<std::string> expanded;
        std::set<std::string> active;
        if (!expand(words, expanded, active, 0))
            return fail("a macro that does not end");
        // Integer casts change no index a working kernel computes: `static_cast<int>(e)` is `(e)`
        // and `(int) e` is `e`.
        std::vector<std::string> w;
        for (std::size_t i = 0; i < expanded.size(); ++i) {
            std::size_t j = i + 1;
            if (expanded[i] == "static_cast" && j < expanded.size() && expanded[j] == "<") {
                ++j;
                bool integer = true;
                for (; j < expanded.size() && expanded[j] != ">"; ++j)
                    integer = integer && (isIntegerType(expanded[j]) || expanded[j] == "const");
                if (!integer || j >= expanded.size())
                    return fail("a cast to another type: static_cast");
                i = j; // the ( that follows stays
                continue;
            }
            if (expanded[i] == "(") {
                bool cast = j < expanded.size() && isIntegerType(expanded[j]);
                while (j < expanded.size() && (isIntegerType(expanded[j]) || expanded[j] == "const"))
                    ++j;
                if (cast && j < expanded.size() && expanded[j] == ")") {
                    i = j;
                    continue;
                }
            }
            w.push_back(expanded[i]);
        }
        return range(w, 0, w.size(), position);
    }

    static std::size_t closing(const std::vector<std::string>& w, std::size_t open, std::size_t to) {
        int depth = 0;
        for (std::size_t i = open; i < to; ++i) {
            if (opens(w[i]))
                ++depth;
            else if (closes(w[i]) && --depth == 0)
                return i;
        }
        return to;
    }

    static std::string spell(const std::vector<std::string>& w, std::size_t from, std::size_t to) {
        std::string s;
        for (std::size_t i = from; i < to; ++i)
            s += (s.empty() ? "" : " ") + w[i];
        return s;
    }

    // The rightmost top-level binary operator of `ops` in [from, to), or `to`.
    static std::size_t split(const std::vector<std::string>& w, std::size_t from, std::size_t to,
                             std::initializer_list<std::string_view> ops) {
        int depth = 0;
        std::size_t found = to;
        for (std::size_t i = from; i < to; ++i) {
            if (opens(w[i]))
                ++depth;
            else if (closes(w[i]))
                --depth;
            else if (depth == 0 && i > from && endsOperand(w[i - 1]) &&
                     std::find(ops.begin(), ops.end(), w[i]) != ops.end())
                found = i;
        }
        return found;
    }

    std::optional<Interval> range(const std::vector<std::string>& w, std::size_t from, std::size_t to,
                                  std::size_t position) {
        if (--m_budget < 0)
            return fail("an index too long to follow");
        while (to > from + 1 && w[from] == "(" && closing(w, from, to) == to - 1) {
            ++from;
            --to;
        }
        if (from >= to)
            return fail("an empty expression");
        // c ? a : b reaches what either branch reaches.
        int depth = 0;
        for (std::size_t q = from; q < to; ++q) {
            if (opens(w[q]))
                ++depth;
            else if (closes(w[q]))
                --depth;
            else if (depth == 0 && w[q] == "?") {
                std::size_t colon = q + 1;
                for (int d = 0, nested = 0; colon < to; ++colon) {
                    if (opens(w[colon]))
                        ++d;
                    else if (closes(w[colon]))
                        --d;
                    else if (d == 0 && w[colon] == "?")
                        ++nested;
                    else if (d == 0 && w[colon] == ":" && nested-- == 0)
                        break;
                }
                if (colon >= to)
                    return fail("a ?: it cannot read");
                // Each branch under its side of the condition: `i < n ? i : n - 1` is below n.
                std::vector<Token> condition;
                for (std::size_t k = from; k < q; ++k)
                    condition.push_back({w[k], 0});
                const auto branch = [&](std::size_t a, std::size_t b, bool negated) {
                    Region region;
                    readCondition(condition, 0, condition.size(), negated, region);
                    const std::size_t bounds = m_branch.size(), unread = m_branchUnread.size();
                    for (Bound& bound : region.bounds)
                        m_branch.emplace_back(std::move(bound), position);
                    m_branchUnread.insert(m_branchUnread.end(), region.unread.begin(), region.unread.end());
                    const std::optional<Interval> v = range(w, a, b, position);
                    m_branch.resize(bounds);
                    m_branchUnread.resize(unread);
                    return v;
                };
                const std::optional<Interval> a = branch(q + 1, colon, false);
                const std::optional<Interval> b = a ? branch(colon + 1, to, true) : std::nullopt;
                if (!b)
                    return std::nullopt;
                return Interval{std::min(a->lo, b->lo), std::max(a->hi, b->hi), gcdOf(a->mod, b->mod)};
            }
        }
        if (split(w, from, to, {"||", "&&", "|", "^", "==", "!=", "<", ">", "<=", ">="}) != to)
            return fail("a comparison or bitwise operator in an index: " + spell(w, from, to));
        if (const std::size_t op = split(w, from, to, {"&"}); op != to) {
            const std::optional<Interval> a = range(w, from, op, position);
            const std::optional<Interval> b = a ? range(w, op + 1, to, position) : std::nullopt;
            if (!b)
                return std::nullopt;
            if (a->lo < 0 || b->lo < 0)
                return fail("a mask of a value that may be negative: " + spell(w, from, to));
            return Interval{0, std::min(a->hi, b->hi)};
        }
        if (const std::size_t op = split(w, from, to, {"<<", ">>"}); op != to) {
            const std::optional<Interval> a = range(w, from, op, position);
            const std::optional<Interval> b = a ? range(w, op + 1, to, position) : std::nullopt;
            if (!b)
                return std::nullopt;
            if (b->lo != b->hi || b->lo < 0 || b->lo > 52)
                return fail("a shift by a varying amount: " + spell(w, from, to));
            const double f = std::ldexp(1.0, static_cast<int>(b->lo));
            if (w[op] == "<<")
                return Interval{product(a->lo, f), product(a->hi, f), a->mod * f};
            return Interval{std::floor(a->lo / f), std::floor(a->hi / f)};
        }
        if (const std::size_t op = split(w, from, to, {"+", "-"}); op != to) {
            const std::optional<Interval> a = range(w, from, op, position);
            const std::optional<Interval> b = a ? range(w, op + 1, to, position) : std::nullopt;
            if (!b)
                return std::nullopt;
            if (w[op] == "+")
                return Interval{a->lo + b->lo, a->hi + b->hi, gcdOf(a->mod, b->mod)};
            return Interval{a->lo - b->hi, a->hi - b->lo, gcdOf(a->mod, b->mod)};
        }
        if (const std::size_t op = split(w, from, to, {"*", "/", "%"}); op != to) {
            const std::optional<Interval> a = range(w, from, op, position);
            const std::optional<Interval> b = a ? range(w, op + 1, to, position) : std::nullopt;
            if (!b)
                return std::nullopt;
            if (w[op] == "*") {
                const double c[] = {product(a->lo, b->lo), product(a->lo, b->hi), product(a->hi, b->lo),
                                    product(a->hi, b->hi)};
                return Interval{*std::min_element(c, c + 4), *std::max_element(c, c + 4), a->mod * b->mod};
            }
            if (b->lo <= 0 && b->hi >= 0)
                return fail("a division by a value that may be 0: " + spell(w, from, to));
            if (w[op] == "/") {
                // C divides toward zero; for a divisor of one sign the quotient is monotonic in
                // each operand, so the corners bound it.
                const auto q = [](double x, double y) { return std::isinf(y) ? 0.0 : std::trunc(x / y); };
                const double c[] = {q(a->lo, b->lo), q(a->lo, b->hi), q(a->hi, b->lo), q(a->hi, b->hi)};
                return Interval{*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
            }
            const double m = std::max(std::fabs(b->lo), std::fabs(b->hi)) - 1; // |a % b| < |b|, sign of a
            return Interval{a->lo >= 0 ? 0 : std::max(a->lo, -m), a->hi <= 0 ? 0 : std::min(a->hi, m)};
        }
        if (w[from] == "-" || w[from] == "+") {
            const std::optional<Interval> a = range(w, from + 1, to, position);
            if (!a || w[from] == "+")
                return a;
            return Interval{-a->hi, -a->lo, a->mod};
        }
        return primary(w, from, to, position);
    }

    std::optional<Interval> primary(const std::vector<std::string>& w, std::size_t from, std::size_t to,
                                    std::size_t position) {
        const std::string& x = w[from];
        if (to == from + 1 && std::isdigit(static_cast<unsigned char>(x[0]))) {
            std::string digits = x;
            while (!digits.empty() &&
                   (digits.back() == 'u' || digits.back() == 'U' || digits.back() == 'l' || digits.back() == 'L'))
                digits.pop_back();
            std::size_t used = 0;
            long long v = 0;
            try {
                v = std::stoll(digits, &used, 0);
            } catch (const std::exception&) {
                return fail("a number it cannot read: " + x);
            }
            if (used != digits.size())
                return fail("a floating-point number in an index: " + x);
            return exactly(static_cast<double>(v));
        }
        if (to == from + 3 && isBuiltin(x) && w[from + 1] == "." &&
            (w[from + 2] == "x" || w[from + 2] == "y" || w[from + 2] == "z"))
            return launch(x, w[from + 2]);
        if (to == from + 1 && isName(x))
            return variable(x, position);
        // std::min(a, b), min(a, b), max(a, b).
        std::size_t name = from;
        if (w[name] == "std" && name + 1 < to && w[name + 1] == "::")
            name += 2;
        else if (w[name] == "::")
            ++name;
        if (name + 1 < to && isName(w[name]) && w[name + 1] == "(" && closing(w, name + 1, to) == to - 1) {
            const std::string& f = w[name];
            std::vector<std::pair<std::size_t, std::size_t>> args;
            std::size_t start = name + 2;
            int depth = 0;
            for (std::size_t i = start; i < to - 1; ++i) {
                if (opens(w[i]))
                    ++depth;
                else if (closes(w[i]))
                    --depth;
                else if (depth == 0 && w[i] == ",") {
                    args.emplace_back(start, i);
                    start = i + 1;
                }
            }
            args.emplace_back(start, to - 1);
            const bool isMin = f == "min" || f == "umin" || f == "imin";
            const bool isMax = f == "max" || f == "umax" || f == "imax";
            if ((isMin || isMax) && args.size() == 2) {
                const std::optional<Interval> a = range(w, args[0].first, args[0].second, position);
                const std::optional<Interval> b = a ? range(w, args[1].first, args[1].second, position) : std::nullopt;
                if (!b)
                    return std::nullopt;
                if (isMin)
                    return Interval{std::min(a->lo, b->lo), std::min(a->hi, b->hi), gcdOf(a->mod, b->mod)};
                return Interval{std::max(a->lo, b->lo), std::max(a->hi, b->hi), gcdOf(a->mod, b->mod)};
            }
            return fail("a call it does not follow: " + spell(w, from, to));
        }
        if (std::find(w.begin() + static_cast<std::ptrdiff_t>(from), w.begin() + static_cast<std::ptrdiff_t>(to),
                      "[") != w.begin() + static_cast<std::ptrdiff_t>(to))
            return fail("a value read from memory: " + spell(w, from, to));
        return fail("an expression it does not follow: " + spell(w, from, to));
    }

public:
    // Whether the code at `line` is compiled for these values: false only when one of its #if
    // conditions is known to be false.
    bool compiled(int line) {
        const LineConditions& c = m_body.conditions;
        if (line < 0 || static_cast<std::size_t>(line) >= c.lineNode.size())
            return true;
        // The chain from the line's innermost condition out to the first one already known.
        std::vector<int> chain;
        bool yes = true;
        for (int node = c.lineNode[static_cast<std::size_t>(line)]; node >= 0;
             node = c.parent[static_cast<std::size_t>(node)]) {
            if (const auto known = m_compiled.find(node); known != m_compiled.end()) {
                yes = known->second;
                break;
            }
            chain.push_back(node);
        }
        for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
            yes = yes && holds(c.text[static_cast<std::size_t>(*it)]).value_or(true);
            m_compiled.emplace(*it, yes);
        }
        return yes;
    }

private:
    // A preprocessor condition's truth for these values; nullopt when a name in it is not known
    // (an #if on a header's macro that was not read) or it is not arithmetic.
    std::optional<bool> holds(const std::string& condition) {
        std::vector<std::string> words;
        for (const Token& t : tokenize(condition))
            words.push_back(t.text);
        // defined(X): a config's -D or Kernel Tuner's defines say so; a #define of the source may
        // come after the line or under another #if, so it does not.
        std::vector<std::string> resolved;
        for (std::size_t i = 0; i < words.size(); ++i) {
            if (words[i] != "defined") {
                resolved.push_back(words[i]);
                continue;
            }
            std::size_t j = i + 1;
            const bool paren = j < words.size() && words[j] == "(";
            if (paren)
                ++j;
            if (j >= words.size() || !isName(words[j]))
                return std::nullopt;
            const std::string& name = words[j];
            if (m_values.count(name))
                resolved.push_back("1");
            else if (m_defines.count(name))
                return std::nullopt;
            else
                resolved.push_back("0");
            i = paren ? j + 1 : j;
        }
        std::vector<std::string> expanded;
        std::set<std::string> active;
        if (!expand(resolved, expanded, active, 0))
            return std::nullopt;
        // C's operators in the expression language's words.
        std::string python;
        for (std::size_t i = 0; i < expanded.size(); ++i) {
            const std::string& w = expanded[i];
            if (isName(w))
                return std::nullopt; // a name no macro defines: 0 to the preprocessor, unknown here
            if (w == "&&") {
                python += " and ";
            } else if (w == "||") {
                python += " or ";
            } else if (w == "/") {
                python += "//";
            } else if (w == "!") {
                // `!x` binds to x alone, as C's does.
                std::size_t end = i + 1;
                if (end < expanded.size() && expanded[end] == "(") {
                    for (int depth = 0; end < expanded.size(); ++end) {
                        if (expanded[end] == "(")
                            ++depth;
                        else if (expanded[end] == ")" && --depth == 0)
                            break;
                    }
                }
                if (end >= expanded.size() || expanded[end] == "!")
                    return std::nullopt;
                std::string operand;
                for (std::size_t k = i + 1; k <= end; ++k)
                    operand += " " + expanded[k];
                python += " (not (" + operand + ")) ";
                i = end;
            } else if (std::isdigit(static_cast<unsigned char>(w[0]))) {
                std::string digits = w;
                while (!digits.empty() &&
                       (digits.back() == 'u' || digits.back() == 'U' || digits.back() == 'l' || digits.back() == 'L'))
                    digits.pop_back();
                python += " " + digits + " ";
            } else if (w == "?" || w == ":" || w == "&" || w == "|" || w == "^" || w == "~") {
                return std::nullopt;
            } else {
                python += " " + w + " ";
            }
        }
        try {
            const expr::Expression e = expr::Expression::compile(python, expr::Scope{});
            const expr::Value v = e.evaluate(nullptr);
            if (v.kind == expr::Kind::Float)
                return v.f != 0;
            if (v.kind == expr::Kind::Int || v.kind == expr::Kind::Bool)
                return v.i != 0;
        } catch (const std::exception&) {
        }
        return std::nullopt;
    }

    const Declaration* declaration(const std::string& name, std::size_t position, bool* twice = nullptr) {
        return m_body.visible(
            name, position, [this](const Declaration& d) { return compiled(d.line); }, twice);
    }

    // The checks around the access about `name` (a variable, or threadIdx.x and the like):
    // [lo, hi] narrowed by them; `checked` when one bounds it from above.
    void narrow(const std::string& name, double& lo, double& hi, bool& checked, std::vector<double>& excluded,
                bool aroundAccess) {
        std::vector<std::pair<const Bound*, std::size_t>> checks;
        if (aroundAccess) {
            for (const Bound* b : m_bounds)
                checks.emplace_back(b, m_access);
        }
        for (const auto& [b, at] : m_branch)
            checks.emplace_back(&b, at);
        for (const auto& [b, at] : checks) {
            if (b->name != name)
                continue;
            const std::string saved = m_why;
            const std::optional<Interval> v = text(b->bound, at);
            m_why = saved;
            if (!v)
                continue;
            if (b->kind == Bound::Kind::Lower) {
                lo = std::max(lo, v->lo);
            } else if (b->kind == Bound::Kind::Upper) {
                hi = std::min(hi, v->hi - 1);
                checked = true;
            } else if (v->lo == v->hi) {
                excluded.push_back(v->lo);
            }
        }
    }

    // A check around the access (with `aroundAccess`) or on a ?: branch that names `name` and was
    // not read; nullptr for none.
    const std::string* unreadCheck(const std::string& name, bool aroundAccess) const {
        if (aroundAccess) {
            if (const auto u = m_unread.find(name); u != m_unread.end())
                return &u->second;
        }
        for (const auto& [n, check] : m_branchUnread) {
            if (n == name)
                return &check;
        }
        return nullptr;
    }

    // `x != n` takes n off either end of x's range.
    static void exclude(double& lo, double& hi, const std::vector<double>& excluded) {
        for (bool moved = true; moved && lo <= hi;) {
            moved = false;
            for (const double v : excluded) {
                if (v == hi) {
                    hi -= 1;
                    moved = true;
                } else if (v == lo) {
                    lo += 1;
                    moved = true;
                }
            }
        }
    }

    // threadIdx below the block's size, blockIdx below the grid's, as launched, and as checked.
    std::optional<Interval> launch(const std::string& builtin, const std::string& axis) {
        const bool block = builtin == "threadIdx" || builtin == "blockDim";
        const std::string size = (block ? "blockDim." : "gridDim.") + axis;
        const auto v = m_values.find(size);
        if (v == m_values.end())
            return fail("the launch's " + size + ", not given");
        const std::optional<Interval> n = text(v->second, m_access);
        if (!n)
            return std::nullopt;
        if (builtin == "blockDim" || builtin == "gridDim")
            return n;
        const std::string name = builtin + "." + axis;
        double lo = 0, hi = n->hi - 1;
        bool checked = false;
        std::vector<double> excluded;
        narrow(name, lo, hi, checked, excluded, true);
        if (const std::string* u = checked ? nullptr : unreadCheck(name, true))
            return fail(name + ", whose check " + *u + " it does not read");
        exclude(lo, hi, excluded);
        if (lo > hi)
            return fail(name + ", which no thread reaches for these values");
        return Interval{lo, hi};
    }

    std::optional<Interval> variable(const std::string& name, std::size_t position) {
        if (name == "warpSize")
            return exactly(32);
        bool twice = false;
        const Declaration* d = declaration(name, position, &twice);
        if (!d && isArgument(name)) {
            const auto v = m_values.find(name);
            if (v == m_values.end())
                return fail("the argument " + name + ", which has no value here");
            return text(v->second, position);
        }
        if (d && d->pointer)
            return fail(name + ", a pointer");
        if (m_resolving.count(name))
            return fail(name + ", bounded through itself");
        m_resolving.insert(name);
        const std::optional<Interval> r = bounded(name, d, twice);
        m_resolving.erase(name);
        return r;
    }

    std::optional<Interval> bounded(const std::string& name, const Declaration* d, bool twice) {
        double lo = -kInfinity, hi = kInfinity;
        bool checked = false; // bounded from above by a check
        std::vector<double> excluded;
        // The checks around the access are about this declaration when the access sees it too.
        const bool aroundAccess = declaration(name, m_access) == d;
        narrow(name, lo, hi, checked, excluded, aroundAccess);
        if (const std::string* u = checked ? nullptr : unreadCheck(name, aroundAccess))
            return fail(name + ", whose check " + *u + " it does not read");
        double mod = 1;
        if (d && !twice && d->initTo > d->initFrom) {
            const std::string saved = m_why;
            const std::optional<Interval> init = tokens(d->initFrom, d->initTo, d->at);
            if (init) {
                m_why = saved;
                const bool loop = d->loop != Declaration::Loop::None && !d->changedInBody;
                if (!d->changed) {
                    lo = std::max(lo, init->lo);
                    hi = std::min(hi, init->hi);
                    mod = init->mod;
                } else if (loop && d->loop == Declaration::Loop::Up) {
                    lo = std::max(lo, init->lo);
                } else if (loop && d->loop == Declaration::Loop::Down) {
                    hi = std::min(hi, init->hi);
                }
                if (loop) {
                    // From a multiple of m by multiples of m, it stays one.
                    const std::optional<Interval> step = d->stepTo > d->stepFrom ? tokens(d->stepFrom, d->stepTo, d->at)
                                                                                 : std::optional<Interval>(exactly(1));
                    mod = step ? gcdOf(init->mod, step->mod) : 1;
                    m_why = saved;
                }
            } else if (checked || d->changed) {
                m_why = saved; // a check bounds it all the same, or nothing from its value was wanted
            } else {
                return std::nullopt;
            }
        }
        if (std::isinf(hi)) {
            if (d && twice)
                return fail(name + ", declared twice in one block under #if branches it cannot tell apart");
            if (d && d->changed)
                return fail(name + ", which the kernel changes and no check bounds");
            if (!d)
                return fail(name + ", which nothing defines or bounds");
            return fail(name + ", which no check, declaration or loop bounds");
        }
        if (std::isinf(lo))
            lo = 0; // nothing says: an index's names count from 0 in a kernel that works
        exclude(lo, hi, excluded);
        align(lo, hi, mod);
        if (lo > hi)
            return fail(name + ", which no thread reaches for these values");
        return Interval{lo, hi, lo == hi ? std::fabs(lo) : mod};
    }
};

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
    LineConditions conditions = conditionsByLine(text);
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
    auto body = std::make_shared<Body>();
    body->tokens =
        tokenize(std::string_view(text).substr(kernel->bodyOpen + 1, kernel->bodyClose - kernel->bodyOpen - 1),
                 kernel->bodyOpen + 1);
    const std::vector<Token>& t = body->tokens;
    const std::size_t n = t.size();
    body->conditions = std::move(conditions);
    {
        int line = 0;
        std::size_t counted = 0;
        for (const Token& token : t) {
            line += static_cast<int>(std::count(text.begin() + static_cast<std::ptrdiff_t>(counted),
                                                text.begin() + static_cast<std::ptrdiff_t>(token.at), '\n'));
            counted = token.at;
            body->lineOf.push_back(line);
        }
    }
    if (n == 0) {
        m_body = body;
        return;
    }

    // The block each token is in (its `{`, kNone at the kernel's top), and each for statement's
    // initializer, whose declarations live as long as the loop.
    std::vector<std::size_t> blockOf(n, kNone);
    std::vector<std::size_t> forOf(n, kNone);
    {
        std::vector<std::size_t> open;
        for (std::size_t i = 0; i < n; ++i) {
            if (t[i].text == "}" && !open.empty())
                open.pop_back();
            blockOf[i] = open.empty() ? kNone : open.back();
            if (t[i].text == "{")
                open.push_back(i);
        }
        for (std::size_t i = 0; i + 1 < n; ++i) {
            if (t[i].text != "for" || t[i + 1].text != "(")
                continue;
            const std::size_t close = matchingToken(t, i + 1);
            for (std::size_t j = i + 2; j < close && j < n && t[j].text != ";"; ++j)
                forOf[j] = i;
        }
    }
    const auto scopeOf = [&](std::size_t at, Declaration& d) {
        if (forOf[at] != kNone) {
            d.scopeFrom = forOf[at];
            d.scopeTo = statementEnd(t, forOf[at]);
        } else if (blockOf[at] != kNone) {
            d.scopeFrom = blockOf[at];
            d.scopeTo = std::min(matchingToken(t, blockOf[at]), n) - 1;
        } else {
            d.scopeFrom = 0;
            d.scopeTo = n - 1;
        }
    };
    const auto statementStart = [&](std::size_t i) {
        if (i == 0)
            return true;
        const std::string& p = t[i - 1].text;
        return p == ";" || p == "{" || p == "}" || (p == "(" && forOf[i] != kNone);
    };

    // Integers declared with a value: `[const] int y = ..., x = ...;`.
    std::vector<Declaration>& decls = body->declarations;
    for (std::size_t i = 0; i < n; ++i) {
        std::size_t first = i;
        while (first < n && isQualifier(t[first].text))
            ++first;
        if (first >= n || !isDeclaredType(t[first].text) || !statementStart(i) || (i > 0 && isQualifier(t[i - 1].text)))
            continue;
        std::size_t j = first;
        while (j < n && (isDeclaredType(t[j].text) || isQualifier(t[j].text)))
            ++j;
        if (j >= n || !isName(t[j].text))
            continue; // a pointer, a reference or a cast
        const std::size_t end = statementEnd(t, j);
        if (end >= n || (t[end].text != ";" && forOf[j] == kNone))
            continue;
        const std::size_t last = forOf[j] != kNone ? std::min(end, matchingToken(t, forOf[j] + 1)) : end;
        for (const auto& [a, b] : splitTop(t, j, last, ",")) {
            if (a >= b || !isName(t[a].text))
                continue;
            Declaration d;
            d.name = t[a].text;
            d.at = a;
            d.line = body->lineOf[a];
            if (a + 1 < b && t[a + 1].text == "=") {
                d.initFrom = a + 2;
                d.initTo = b;
            } else if (a + 1 < b && t[a + 1].text == "[") {
                continue; // an array
            }
            scopeOf(a, d);
            decls.push_back(std::move(d));
        }
    }
    // Pointers set from an argument, or from such a pointer: `float* src = in + (h - t) * w;`,
    // `const float* row = &in[y * w];`.
    for (std::size_t e = 2; e + 1 < n; ++e) {
        if (t[e].text != "=" || !isName(t[e - 1].text))
            continue;
        std::size_t k = e - 2;
        while (k > 0 && isQualifier(t[k].text))
            --k;
        if (t[k].text != "*" || k == 0)
            continue;
        std::size_t typeStart = k;
        while (typeStart > 0 && (isName(t[typeStart - 1].text) || t[typeStart - 1].text == "::"))
            --typeStart;
        if (typeStart == k || !statementStart(typeStart))
            continue;
        const std::size_t end = statementEnd(t, e);
        if (end >= n || t[end].text != ";" || splitTop(t, e + 1, end, ",").size() > 1)
            continue;
        Declaration d;
        d.name = t[e - 1].text;
        d.at = e - 1;
        d.line = body->lineOf[d.at];
        d.pointer = true;
        d.initFrom = e + 1;
        d.initTo = end;
        scopeOf(d.at, d);
        std::size_t from = e + 1;
        const bool address = t[from].text == "&";
        if (address)
            ++from;
        const std::string& base = t[from].text;
        std::size_t argument = kNone;
        std::string offset;
        if (pointers.count(base)) {
            argument =
                static_cast<std::size_t>(std::find(m_arguments.begin(), m_arguments.end(), base) - m_arguments.begin());
        } else {
            for (auto it = decls.rbegin(); it != decls.rend(); ++it) {
                if (it->pointer && it->name == base && it->at < from && from <= it->scopeTo) {
                    argument = it->argument;
                    offset = it->offset;
                    break;
                }
            }
        }
        if (argument != kNone) {
            std::string more;
            if (address && from + 1 < end && t[from + 1].text == "[" && matchingToken(t, from + 1) + 1 == end)
                more = spaced(t, from + 2, end - 1);
            else if (!address && from + 1 == end)
                more = "0";
            else if (!address && t[from + 1].text == "+")
                more = spaced(t, from + 2, end);
            else
                argument = kNone;
            if (argument != kNone) {
                d.argument = argument;
                d.offset = offset.empty() ? more : "(" + offset + ") + (" + more + ")";
            }
        }
        decls.push_back(std::move(d));
    }
    std::sort(decls.begin(), decls.end(), [](const Declaration& a, const Declaration& b) { return a.at < b.at; });
    for (std::size_t k = 0; k < decls.size(); ++k)
        body->byName.emplace(decls[k].name, k);

    // What the kernel changes: assignments, steps, an address taken.
    std::map<std::size_t, std::vector<std::size_t>> changedAt; // declaration -> where
    std::set<std::size_t> declared;
    for (const Declaration& d : decls)
        declared.insert(d.at);
    for (std::size_t i = 0; i < n; ++i) {
        if (!isName(t[i].text) || declared.count(i) || (i > 0 && (t[i - 1].text == "." || t[i - 1].text == "->")))
            continue;
        const bool assigned = i + 1 < n && changes(t[i + 1].text);
        const bool stepped = i > 0 && (t[i - 1].text == "++" || t[i - 1].text == "--");
        const bool addressed = i > 0 && t[i - 1].text == "&" && (i < 2 || !endsOperand(t[i - 2].text));
        if (!assigned && !stepped && !addressed)
            continue;
        if (const Declaration* d = body->visible(t[i].text, i)) {
            const auto k = static_cast<std::size_t>(d - decls.data());
            decls[k].changed = true;
            changedAt[k].push_back(i);
        } else if (pointers.count(t[i].text))
            body->movedArguments.insert(t[i].text);
    }
    // A for loop's own variable: where it starts, which way it steps.
    for (Declaration& d : decls) {
        if (forOf[d.at] == kNone)
            continue;
        const std::size_t open = forOf[d.at] + 1;
        const auto parts = splitTop(t, open + 1, matchingToken(t, open), ";");
        if (parts.size() != 3)
            continue;
        const auto [a, b] = parts[2];
        const std::string step = spaced(t, a, b);
        const bool up = step.find("++") != std::string::npos || step.find("+=") != std::string::npos;
        const bool down = step.find("--") != std::string::npos || step.find("-=") != std::string::npos;
        if (up == down || !namesIn(t, a, b).count(d.name))
            continue;
        d.loop = up ? Declaration::Loop::Up : Declaration::Loop::Down;
        if (b > a + 2 && t[a].text == d.name && (t[a + 1].text == "+=" || t[a + 1].text == "-=")) {
            d.stepFrom = a + 2;
            d.stepTo = b;
        }
        // A change anywhere but in the step: where the loop has taken it is not known.
        for (const std::size_t c : changedAt[&d - decls.data()])
            d.changedInBody = d.changedInBody || c < a || c >= b;
    }

    // The checks and the code they bound.
    std::vector<Region>& regions = body->regions;
    const auto restOfBlock = [&](std::size_t from) {
        std::size_t end = from;
        for (int depth = 0; end < n; ++end) {
            if (t[end].text == "{")
                ++depth;
            else if (t[end].text == "}" && depth-- == 0)
                break;
        }
        return end == 0 ? std::size_t(0) : end - 1;
    };
    const auto leavesAt = [&](std::size_t s) {
        // `return;`, `break;`, `continue;`, alone or in braces: the statement at `s` only leaves.
        std::size_t i = s;
        const bool braced = t[i].text == "{";
        if (braced)
            ++i;
        if (i + 1 >= n || (t[i].text != "return" && t[i].text != "break" && t[i].text != "continue") ||
            t[i + 1].text != ";")
            return false;
        return !braced || (i + 2 < n && t[i + 2].text == "}");
    };
    const auto guard = [&](std::size_t from, std::size_t to, std::size_t condFrom, std::size_t condTo, bool leaves) {
        Region region{from, to, {}, {}};
        readCondition(t, condFrom, condTo, leaves, region);
        regions.push_back(std::move(region));
    };
    for (std::size_t i = 0; i + 1 < n; ++i) {
        const std::string& keyword = t[i].text;
        if ((keyword != "if" && keyword != "for" && keyword != "while") || t[i + 1].text != "(")
            continue;
        const std::size_t close = matchingToken(t, i + 1);
        if (close + 1 >= n)
            continue;
        if (keyword == "if") {
            const std::size_t end = statementEnd(t, close + 1);
            if (leavesAt(close + 1)) {
                // `if (i >= n) return;`: bounds the rest of its block.
                guard(end + 1, restOfBlock(end + 1), i + 2, close, true);
                continue;
            }
            guard(close + 1, end, i + 2, close, false);
            if (end + 2 < n && t[end + 1].text == "else")
                guard(end + 2, statementEnd(t, end + 2), i + 2, close, true);
            // A return (break, continue) under the check: past it, the check's names are bounded
            // by what it does not say.
            const std::size_t whole = statementEnd(t, i);
            bool leaves = false;
            for (std::size_t k = close + 1; k <= whole && k < n; ++k)
                leaves = leaves || t[k].text == "return" || t[k].text == "break" || t[k].text == "continue";
            if (leaves && whole + 1 < n) {
                Region rest{whole + 1, restOfBlock(whole + 1), {}, {}};
                for (const std::string& name : namesIn(t, i + 2, close))
                    rest.unread.emplace_back(name, spaced(t, i + 2, close));
                regions.push_back(std::move(rest));
            }
        } else if (keyword == "while") {
            if (t[close + 1].text == ";")
                continue; // the end of a do ... while, which does not guard its body on entry
            guard(close + 1, statementEnd(t, close + 1), i + 2, close, false);
        } else {
            const auto parts = splitTop(t, i + 2, close, ";");
            if (parts.size() != 3)
                continue;
            if (parts[1].first < parts[1].second)
                guard(close + 1, statementEnd(t, close + 1), parts[1].first, parts[1].second, false);
        }
    }
    // `(y < h && x < w) ? in[y * w + x] : 0`: the check bounds the first branch, its negation the
    // second. The condition runs back to what a ?: cannot be part of.
    static const std::set<std::string> before = {"=", "+=", "-=", "*=", "/=", "%=",    ",",
                                                 ";", "{",  "}",  "?",  ":",  "return"};
    for (std::size_t q = 1; q + 1 < n; ++q) {
        if (t[q].text != "?")
            continue;
        std::size_t open = q;
        for (int depth = 0; open > 0; --open) {
            const std::string& x = t[open - 1].text;
            if (closes(x))
                ++depth;
            else if (opens(x) && depth-- == 0)
                break;
            else if (depth == 0 && before.count(x))
                break;
        }
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
        if (open >= q || colon >= n || t[colon].text != ":")
            continue;
        std::size_t last = colon + 1;
        for (int depth = 0; last < n; ++last) {
            const std::string& x = t[last].text;
            if (opens(x))
                ++depth;
            else if (closes(x) && --depth < 0)
                break;
            else if (depth == 0 && (x == "," || x == ";" || x == ":"))
                break;
        }
        guard(q + 1, colon - 1, open, q, false);
        guard(colon + 1, last - 1, open, q, true);
    }
    // A name a check does not read stands for what it is declared as too: `if (inRange)`,
    // `bool inRange = y < h;`, leaves y unread.
    for (Region& r : regions) {
        std::vector<std::pair<std::string, std::string>> more;
        std::vector<std::pair<std::string, std::string>> todo = r.unread;
        std::set<std::string> seen;
        for (int depth = 0; depth < 8 && !todo.empty(); ++depth) {
            std::vector<std::pair<std::string, std::string>> next;
            for (const auto& [name, check] : todo) {
                if (!seen.insert(name).second)
                    continue;
                const Declaration* d = body->visible(name, r.from);
                if (!d || d->initTo <= d->initFrom)
                    continue;
                for (const std::string& inner : namesIn(t, d->initFrom, d->initTo))
                    next.emplace_back(inner, check);
            }
            more.insert(more.end(), next.begin(), next.end());
            todo = std::move(next);
        }
        r.unread.insert(r.unread.end(), more.begin(), more.end());
    }
    std::stable_sort(regions.begin(), regions.end(),
                     [](const Region& a, const Region& b) { return a.from != b.from ? a.from < b.from : a.to > b.to; });

    // The indexes into pointer arguments and the pointers set from them: `p[...]` and `p + ...`.
    const auto lineOf = [&](std::size_t offset) {
        return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
    };
    static const std::set<std::string> ends = {
        ",", ";", "?", ":", "=", "==", "!=", "<", ">", "<=", ">=", "&&", "||", "]", "}", "{", "+=", "-=", "*=", "/="};
    std::set<std::size_t> formed; // `in` of `float* p = in + k;`: forms a pointer, reads nothing
    for (const Declaration& d : decls) {
        if (d.pointer && d.argument != kNone)
            formed.insert(t[d.initFrom].text == "&" ? d.initFrom + 1 : d.initFrom);
    }
    for (std::size_t i = 0; i + 2 < n; ++i) {
        if (!isName(t[i].text) || (i > 0 && (t[i - 1].text == "." || t[i - 1].text == "->")) || declared.count(i) ||
            formed.count(i))
            continue;
        const Declaration* alias = nullptr;
        if (!pointers.count(t[i].text)) {
            alias = body->visible(t[i].text, i);
            if (!alias || !alias->pointer || alias->argument == kNone || alias->changed)
                continue;
        } else if (body->visible(t[i].text, i)) {
            continue; // a local of the argument's name hides it
        }
        std::size_t from = i + 2, to = 0, last = 0;
        if (t[i + 1].text == "[") {
            to = matchingToken(t, i + 1);
            last = to;
        } else if (t[i + 1].text == "+") {
            int depth = 0;
            for (to = i + 2; to < n; ++to) {
                const std::string& x = t[to].text;
                if ((x == "static_cast" || x == "reinterpret_cast") && to + 1 < n && t[to + 1].text == "<") {
                    // A cast's <type> is no comparison.
                    while (to < n && t[to].text != ">")
                        ++to;
                    continue;
                }
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
            // `p < in + n`: a pointer compared, not read.
            static const std::set<std::string> compares = {"<", ">", "<=", ">=", "==", "!="};
            if ((i > 0 && compares.count(t[i - 1].text)) || (to < n && compares.count(t[to].text)))
                continue;
        } else {
            continue;
        }
        if (to >= n || to <= from)
            continue;
        BoundedIndex index;
        if (alias) {
            index.argument = alias->argument;
            index.through = alias->name + " = " + spaced(t, alias->initFrom, alias->initTo);
            index.offset = alias->offset;
            body->aliasOf[i] = static_cast<std::size_t>(alias - decls.data());
        } else {
            index.argument = static_cast<std::size_t>(std::find(m_arguments.begin(), m_arguments.end(), t[i].text) -
                                                      m_arguments.begin());
        }
        index.access = spaced(t, i, last + 1);
        index.index = spaced(t, from, to);
        index.line = lineOf(t[i].at);
        index.at = i;
        std::set<std::string> listed;
        for (const Region& r : regions) {
            if (r.from <= i && i <= r.to) {
                for (const Bound& b : r.bounds) {
                    if (b.kind == Bound::Kind::Upper)
                        index.bounds.emplace_back(b.name, b.bound);
                    if (listed.insert(b.check).second)
                        index.checks += (index.checks.empty() ? "" : " && ") + b.check;
                }
            }
        }
        m_indexes.push_back(std::move(index));
    }
    m_body = body;
}

IndexReach KernelReach::reach(const BoundedIndex& index, const std::map<std::string, std::string>& values) const {
    if (!m_body || index.at >= m_body->tokens.size())
        return {std::nullopt, "an index of another kernel"};
    const std::vector<Token>& t = m_body->tokens;
    if (index.offset.empty() && m_body->movedArguments.count(t[index.at].text))
        return {std::nullopt, t[index.at].text + ", which the kernel moves"};
    Evaluation evaluation(*m_body, m_arguments, m_defines, values, index.at);
    if (!evaluation.compiled(m_body->lineOf[index.at]))
        return {std::nullopt, "not compiled for these values", false};
    std::optional<Interval> r;
    const std::size_t open = index.at + 1;
    if (t[open].text == "[") {
        r = evaluation.tokens(open + 1, matchingToken(t, open), index.at);
    } else {
        r = evaluation.text(index.index, index.at);
    }
    if (r && !index.offset.empty()) {
        const auto alias = m_body->aliasOf.find(index.at);
        const std::size_t at = alias == m_body->aliasOf.end() ? index.at : m_body->declarations[alias->second].at;
        const std::optional<Interval> offset = evaluation.text(index.offset, at);
        r = offset ? std::optional<Interval>(Interval{r->lo + offset->lo, r->hi + offset->hi}) : std::nullopt;
    }
    if (!r)
        return {std::nullopt, evaluation.why()};
    if (!(std::fabs(r->hi) < kExact))
        return {std::nullopt, "an index beyond 2^53"};
    return {static_cast<std::int64_t>(r->hi), {}};
}

std::optional<std::int64_t> KernelReach::largest(const BoundedIndex& index,
                                                 const std::map<std::string, std::string>& values) const {
    return reach(index, values).largest;
}

} // namespace tilescope
