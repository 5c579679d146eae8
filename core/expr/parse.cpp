// Lexer and recursive-descent parser for the Python subset, with name resolution and
// constant folding.

#include "expr/internal.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <numbers>

namespace tilescope::expr::detail {

const std::string* ConstPool::addString(std::string s) {
    strings.push_back(std::make_unique<std::string>(std::move(s)));
    return strings.back().get();
}

Value ConstPool::addList(std::vector<Value> items) {
    lists.push_back(std::make_unique<ValueList>(items));
    return lists.back()->value();
}

namespace {

enum class Tok : std::uint8_t { End, Int, Float, Str, Name, Op, Keyword };

struct Token {
    Tok kind = Tok::End;
    int column = 1;        // 1-based, where the token starts
    std::size_t end = 0;   // 0-based, just past the token
    std::string text;      // operator / name / keyword text; string contents for Str
    std::size_t match = 0; // an opening bracket: the index of the token that closes it
    std::int64_t i = 0;
    double f = 0;
};

constexpr const char* kKeywords[] = {"and", "or",   "not",   "if",   "else", "in",
                                     "is",  "True", "False", "None", "for",  "lambda"};

// Operators, longest first so that "//" wins over "/".
constexpr const char* kOperators[] = {"**", "//", "<=", ">=", "==", "!=", "<<", ">>", "+", "-", "*", "/", "%",
                                      "<",  ">",  "(",  ")",  "[",  "]",  ",",  ".",  "&", "|", "^", "~", ":"};

class Lexer {
public:
    Lexer(std::string_view src, const std::string& source)
        : m_src(src)
        , m_source(source) {}

    /// The tokens; on a lexical error, throws with tokensSoFar() holding those before it.
    std::vector<Token> run() {
        std::vector<Token>& out = m_out;
        out.clear();
        std::vector<std::pair<char, int>> open; // brackets not closed yet, with their columns
        std::vector<std::size_t> openAt;        // and the indices of their tokens
        while (true) {
            skipSpace();
            Token t;
            t.column = static_cast<int>(m_pos) + 1;
            if (m_pos >= m_src.size()) {
                if (!open.empty())
                    throw ExprError(ErrorKind::Syntax, m_source, t.column,
                                    std::string("unexpected end of expression: '") + open.back().first +
                                        "' at column " + std::to_string(open.back().second) + " is not closed");
                t.kind = Tok::End;
                t.end = m_pos;
                out.push_back(t);
                return std::move(out);
            }
            const char c = m_src[m_pos];
            if (std::isdigit(static_cast<unsigned char>(c)) ||
                (c == '.' && m_pos + 1 < m_src.size() && std::isdigit(static_cast<unsigned char>(m_src[m_pos + 1])))) {
                number(t);
            } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
                const std::size_t start = m_pos;
                while (m_pos < m_src.size() &&
                       (std::isalnum(static_cast<unsigned char>(m_src[m_pos])) || m_src[m_pos] == '_'))
                    ++m_pos;
                t.text = std::string(m_src.substr(start, m_pos - start));
                t.kind = std::find_if(std::begin(kKeywords), std::end(kKeywords),
                                      [&](const char* k) { return t.text == k; }) != std::end(kKeywords)
                             ? Tok::Keyword
                             : Tok::Name;
            } else if (c == '\'' || c == '"') {
                string(t);
            } else {
                bool matched = false;
                for (const char* op : kOperators) {
                    const std::size_t n = std::strlen(op);
                    if (m_src.substr(m_pos, n) == op) {
                        t.kind = Tok::Op;
                        t.text = op;
                        m_pos += n;
                        matched = true;
                        break;
                    }
                }
                if (!matched) {
                    const std::string what = c == '='   ? "'=' is assignment; use '==' to compare"
                                             : c == '!' ? "'!' is not Python; use 'not' or '!='"
                                                        : std::string("unexpected character '") + c + "'";
                    throw ExprError(ErrorKind::Syntax, m_source, t.column, what);
                }
                if (t.text == "(" || t.text == "[") {
                    open.emplace_back(t.text[0], t.column);
                    openAt.push_back(out.size());
                } else if (t.text == ")" || t.text == "]") {
                    if (open.empty())
                        throw ExprError(ErrorKind::Syntax, m_source, t.column, "unmatched '" + t.text + "'");
                    const char expected = open.back().first == '(' ? ')' : ']';
                    if (t.text[0] != expected)
                        throw ExprError(ErrorKind::Syntax, m_source, t.column,
                                        "'" + t.text + "' does not close the '" + open.back().first + "' at column " +
                                            std::to_string(open.back().second));
                    open.pop_back();
                    out[openAt.back()].match = out.size();
                    openAt.pop_back();
                }
            }
            t.end = m_pos;
            out.push_back(std::move(t));
        }
    }

    const std::vector<Token>& tokensSoFar() const { return m_out; }

private:
    void skipSpace() {
        while (m_pos < m_src.size() &&
               (m_src[m_pos] == ' ' || m_src[m_pos] == '\t' || m_src[m_pos] == '\n' || m_src[m_pos] == '\r'))
            ++m_pos;
    }

    void number(Token& t) {
        const std::size_t start = m_pos;
        auto isDigitOr_ = [&](char ch, bool hex) {
            return (hex ? std::isxdigit(static_cast<unsigned char>(ch))
                        : std::isdigit(static_cast<unsigned char>(ch))) ||
                   ch == '_';
        };
        if (m_src[m_pos] == '0' && m_pos + 1 < m_src.size() &&
            (m_src[m_pos + 1] == 'x' || m_src[m_pos + 1] == 'X' || m_src[m_pos + 1] == 'b' || m_src[m_pos + 1] == 'B' ||
             m_src[m_pos + 1] == 'o' || m_src[m_pos + 1] == 'O')) {
            const char base = static_cast<char>(std::tolower(m_src[m_pos + 1]));
            m_pos += 2;
            const std::size_t digitsStart = m_pos;
            while (m_pos < m_src.size() && isDigitOr_(m_src[m_pos], base == 'x'))
                ++m_pos;
            std::string digits;
            for (std::size_t k = digitsStart; k < m_pos; ++k)
                if (m_src[k] != '_')
                    digits += m_src[k];
            std::uint64_t v = 0;
            const int radix = base == 'x' ? 16 : base == 'b' ? 2 : 8;
            auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, radix);
            if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size())
                throw ExprError(ErrorKind::Syntax, m_source, t.column, "invalid number literal");
            if (v > static_cast<std::uint64_t>(INT64_MAX))
                throw ExprError(ErrorKind::Overflow, m_source, t.column, "integer literal does not fit in 64 bits");
            t.kind = Tok::Int;
            t.i = static_cast<std::int64_t>(v);
            checkNoTrailingName(t);
            return;
        }
        bool isFloat = false;
        while (m_pos < m_src.size() && isDigitOr_(m_src[m_pos], false))
            ++m_pos;
        if (m_pos < m_src.size() && m_src[m_pos] == '.') {
            isFloat = true;
            ++m_pos;
            while (m_pos < m_src.size() && isDigitOr_(m_src[m_pos], false))
                ++m_pos;
        }
        if (m_pos < m_src.size() && (m_src[m_pos] == 'e' || m_src[m_pos] == 'E')) {
            std::size_t p = m_pos + 1;
            if (p < m_src.size() && (m_src[p] == '+' || m_src[p] == '-'))
                ++p;
            if (p < m_src.size() && std::isdigit(static_cast<unsigned char>(m_src[p]))) {
                isFloat = true;
                m_pos = p;
                while (m_pos < m_src.size() && isDigitOr_(m_src[m_pos], false))
                    ++m_pos;
            }
        }
        std::string text;
        for (std::size_t k = start; k < m_pos; ++k) {
            if (m_src[k] == '_') {
                const bool ok = k > start && k + 1 < m_pos && std::isdigit(static_cast<unsigned char>(m_src[k - 1])) &&
                                std::isdigit(static_cast<unsigned char>(m_src[k + 1]));
                if (!ok)
                    throw ExprError(ErrorKind::Syntax, m_source, static_cast<int>(k) + 1, "invalid number literal");
                continue;
            }
            text += m_src[k];
        }
        if (isFloat) {
            t.kind = Tok::Float;
            t.f = std::strtod(text.c_str(), nullptr);
        } else {
            if (text.size() > 1 && text[0] == '0' && text.find_first_not_of('0') != std::string::npos)
                throw ExprError(ErrorKind::Syntax, m_source, t.column,
                                "leading zeros in decimal integer literals are not permitted");
            t.kind = Tok::Int;
            auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), t.i);
            if (ec != std::errc())
                throw ExprError(ErrorKind::Overflow, m_source, t.column, "integer literal does not fit in 64 bits");
            (void)ptr;
        }
        checkNoTrailingName(t);
    }

    void checkNoTrailingName(const Token& t) {
        if (m_pos < m_src.size() && (std::isalpha(static_cast<unsigned char>(m_src[m_pos])) || m_src[m_pos] == '_'))
            throw ExprError(ErrorKind::Syntax, m_source, t.column, "invalid number literal");
    }

    void string(Token& t) {
        const char quote = m_src[m_pos++];
        std::string value;
        while (true) {
            if (m_pos >= m_src.size() || m_src[m_pos] == '\n')
                throw ExprError(ErrorKind::Syntax, m_source, t.column, "unterminated string literal");
            const char c = m_src[m_pos++];
            if (c == quote)
                break;
            if (c == '\\' && m_pos < m_src.size()) {
                const char e = m_src[m_pos++];
                switch (e) {
                case 'n':
                    value += '\n';
                    break;
                case 't':
                    value += '\t';
                    break;
                case '\\':
                case '\'':
                case '"':
                    value += e;
                    break;
                default:
                    value += '\\';
                    value += e;
                }
                continue;
            }
            value += c;
        }
        t.kind = Tok::Str;
        t.text = std::move(value);
    }

    std::string_view m_src;
    const std::string& m_source;
    std::size_t m_pos = 0;
    std::vector<Token> m_out;
};

int editDistance(std::string_view a, std::string_view b) {
    std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
        prev[j] = static_cast<int>(j);
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = static_cast<int>(i);
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const int sub = prev[j - 1] + (std::tolower(a[i - 1]) == std::tolower(b[j - 1]) ? 0 : 1);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

class Parser {
public:
    Parser(std::vector<Token> tokens, const std::string& source, const Scope& scope, ConstPool& pool,
           const ParseOptions& opts)
        : m_toks(std::move(tokens))
        , m_source(source)
        , m_scope(scope)
        , m_pool(pool)
        , m_opts(opts) {}

    std::unique_ptr<Node> parseAll() {
        if (peek().kind == Tok::End)
            throw error(peek().column, "empty expression");
        auto node = expression();
        if (m_opts.valueList && isOp(",")) { // "1, 2, 4" is a tuple to Python's eval
            auto n = std::make_unique<Node>();
            n->kind = NodeKind::ListDisplay;
            n->column = node->column;
            n->kids.push_back(std::move(node));
            while (isOp(",")) {
                next();
                if (peek().kind == Tok::End)
                    break;
                n->kids.push_back(expression());
            }
            node = fold(std::move(n));
        }
        if (peek().kind != Tok::End) {
            const Token& t = peek();
            if (t.kind == Tok::Op && t.text == ",")
                throw error(t.column, "a tuple is not an expression here; did you mean a list in brackets?");
            throw error(t.column, describe(t) + " was not expected here");
        }
        if (m_opts.valueList && !isConst(*node)) {
            std::vector<Value> env;
            node = makeConst(m_tree.evaluate(*node, env), node->column);
        }
        return node;
    }

private:
    // ---- token helpers ----
    const Token& peek(std::size_t ahead = 0) const { return m_toks[std::min(m_pos + ahead, m_toks.size() - 1)]; }
    const Token& next() { return m_toks[std::min(m_pos++, m_toks.size() - 1)]; }
    bool isOp(const char* op, std::size_t ahead = 0) const {
        const Token& t = peek(ahead);
        return t.kind == Tok::Op && t.text == op;
    }
    bool isKeyword(const char* kw, std::size_t ahead = 0) const {
        const Token& t = peek(ahead);
        return t.kind == Tok::Keyword && t.text == kw;
    }
    void expectOp(const char* op, const char* context) {
        if (!isOp(op))
            throw error(peek().column, std::string("expected '") + op + "' " + context + ", found " + describe(peek()));
        next();
    }
    static std::string describe(const Token& t) {
        switch (t.kind) {
        case Tok::End:
            return "the end of the expression";
        case Tok::Int:
        case Tok::Float:
            return "a number";
        case Tok::Str:
            return "a string";
        case Tok::Name:
            return "name '" + t.text + "'";
        case Tok::Keyword:
            return "keyword '" + t.text + "'";
        case Tok::Op:
            return "'" + t.text + "'";
        }
        return "?";
    }
    ExprError error(int column, const std::string& message, ErrorKind kind = ErrorKind::Syntax) const {
        return ExprError(kind, m_source, column, message);
    }

    // ---- node helpers ----
    static std::unique_ptr<Node> makeConst(Value v, int column) {
        auto n = std::make_unique<Node>();
        n->kind = NodeKind::Const;
        n->value = v;
        n->column = column;
        return n;
    }
    static bool isConst(const Node& n) { return n.kind == NodeKind::Const; }

    // One level of the recursive descent, refused past kMaxNesting: a SyntaxError at the
    // column where the level starts rather than a stack overflow.
    class Nest {
    public:
        Nest(Parser& parser, int column)
            : m_parser(parser) {
            if (++m_parser.m_nesting > kMaxNesting) {
                --m_parser.m_nesting;
                throw m_parser.error(column, "too deeply nested: more than " + std::to_string(kMaxNesting) +
                                                 " levels of parentheses, brackets, unary operators, 'not', '**' "
                                                 "or conditional expressions");
            }
        }
        ~Nest() { --m_parser.m_nesting; }
        Nest(const Nest&) = delete;
        Nest& operator=(const Nest&) = delete;

    private:
        Parser& m_parser;
    };

    // Sets the node's height from its children's; refuses a tree that the recursive walks
    // (folding, code generation, the tree evaluator, destruction) could not afford.
    void measure(Node& node) const {
        int below = 0;
        for (const auto& k : node.kids)
            if (k)
                below = std::max(below, k->height);
        // A comprehension's clauses each take a level of TreeEvaluator::runClauses.
        node.height = below + 1 + static_cast<int>(node.clauses.size());
        if (node.height > kMaxTreeHeight)
            throw tooDeep(node.column);
    }

    ExprError tooDeep(int column) const {
        return error(column, "expression too deep: more than " + std::to_string(kMaxTreeHeight) +
                                 " operations, each on the result of the next (a chain such as 'a + b + c + ...' or a "
                                 "comprehension's clauses); split it, or use sum(), min() or max() of a list");
    }

    // Replaces `node` by its value when all its inputs are constant and evaluating it succeeds;
    // when it fails (1/0), the node stays, so the error happens (and is reported) at run time.
    std::unique_ptr<Node> fold(std::unique_ptr<Node> node) {
        measure(*node);
        EvalStatus st;
        Value out;
        switch (node->kind) {
        case NodeKind::Binary:
            if (isConst(*node->kids[0]) && isConst(*node->kids[1]) &&
                m_tree.binaryValue(node->binOp, node->kids[0]->value, node->kids[1]->value, out, st))
                return makeConst(out, node->column);
            break;
        case NodeKind::Unary:
            if (isConst(*node->kids[0]) && unaryOp(node->unOp, node->kids[0]->value, out, st))
                return makeConst(out, node->column);
            break;
        case NodeKind::Call: {
            if (!std::all_of(node->kids.begin(), node->kids.end(), [](const auto& k) { return isConst(*k); }))
                break;
            std::vector<Value> args;
            for (const auto& k : node->kids)
                args.push_back(k->value);
            // range() and sorted() report their errors at once: they only ever run here.
            if (node->builtin == Builtin::Range || node->builtin == Builtin::Sorted)
                return makeConst(m_tree.callListBuiltin(*node, args), node->column);
            if (callBuiltin(node->builtin, args.data(), static_cast<int>(args.size()), out, st))
                return makeConst(out, node->column);
            break;
        }
        case NodeKind::Slice: {
            if (!isConst(*node->kids[0]) ||
                !std::all_of(node->kids.begin() + 1, node->kids.end(), [](const auto& k) { return !k || isConst(*k); }))
                break;
            const Value* bounds[3];
            for (std::size_t k = 0; k < 3; ++k)
                bounds[k] = node->kids[k + 1] ? &node->kids[k + 1]->value : nullptr;
            return makeConst(m_tree.slice(*node, node->kids[0]->value, bounds), node->column);
        }
        case NodeKind::Subscript:
            if (isConst(*node->kids[0]) && isConst(*node->kids[1]) &&
                subscript(node->kids[0]->value, node->kids[1]->value, out, st))
                return makeConst(out, node->column);
            break;
        case NodeKind::ListDisplay:
            if (std::all_of(node->kids.begin(), node->kids.end(), [](const auto& k) { return isConst(*k); })) {
                std::vector<Value> items;
                for (const auto& k : node->kids)
                    items.push_back(k->value);
                return makeConst(m_pool.addList(std::move(items)), node->column);
            }
            break;
        case NodeKind::Compare: {
            if (!std::all_of(node->kids.begin(), node->kids.end(), [](const auto& k) { return isConst(*k); }))
                break;
            bool result = true;
            for (std::size_t i = 0; i < node->cmpOps.size() && result; ++i)
                if (!compareOp(node->cmpOps[i], node->kids[i]->value, node->kids[i + 1]->value, result, st))
                    return node;
            return makeConst(Value::ofBool(result), node->column);
        }
        case NodeKind::And:
        case NodeKind::Or: {
            // Fold leading constants: `True and x` -> x, `False and x` -> False.
            const bool isAnd = node->kind == NodeKind::And;
            while (!node->kids.empty() && isConst(*node->kids.front())) {
                const bool t = truthy(node->kids.front()->value);
                if (t != isAnd || node->kids.size() == 1)
                    return std::move(node->kids.front());
                node->kids.erase(node->kids.begin());
            }
            if (node->kids.size() == 1)
                return std::move(node->kids.front());
            break;
        }
        case NodeKind::IfElse:
            if (isConst(*node->kids[1]))
                return std::move(node->kids[truthy(node->kids[1]->value) ? 0 : 2]);
            break;
        default:
            break;
        }
        return node;
    }

    // ---- grammar ----
    std::unique_ptr<Node> expression() {
        const Nest nest(*this, peek().column);
        if (isKeyword("lambda"))
            throw error(peek().column, "lambda is not supported");
        auto body = disjunction();
        if (isKeyword("if")) {
            const int column = next().column;
            auto test = disjunction();
            if (!isKeyword("else"))
                throw error(peek().column, "expected 'else' in a conditional expression, found " + describe(peek()));
            next();
            auto orelse = expression();
            auto n = std::make_unique<Node>();
            n->kind = NodeKind::IfElse;
            n->column = column;
            n->kids.push_back(std::move(body));
            n->kids.push_back(std::move(test));
            n->kids.push_back(std::move(orelse));
            return fold(std::move(n));
        }
        return body;
    }

    std::unique_ptr<Node> boolChain(NodeKind kind, const char* keyword, std::unique_ptr<Node> (Parser::*operand)()) {
        auto first = (this->*operand)();
        if (!isKeyword(keyword))
            return first;
        auto n = std::make_unique<Node>();
        n->kind = kind;
        n->column = peek().column;
        n->kids.push_back(std::move(first));
        while (isKeyword(keyword)) {
            next();
            n->kids.push_back((this->*operand)());
        }
        return fold(std::move(n));
    }

    std::unique_ptr<Node> disjunction() { return boolChain(NodeKind::Or, "or", &Parser::conjunction); }
    std::unique_ptr<Node> conjunction() { return boolChain(NodeKind::And, "and", &Parser::inversion); }

    std::unique_ptr<Node> inversion() {
        if (isKeyword("not")) {
            const int column = next().column;
            const Nest nest(*this, column);
            auto n = std::make_unique<Node>();
            n->kind = NodeKind::Unary;
            n->unOp = UnOp::Not;
            n->column = column;
            n->kids.push_back(inversion());
            return fold(std::move(n));
        }
        return comparison();
    }

    bool comparisonOperator(CmpOp& op, int& column, std::size_t& width) const {
        const Token& t = peek();
        column = t.column;
        width = 1;
        if (t.kind == Tok::Op) {
            static const std::pair<const char*, CmpOp> ops[] = {{"<", CmpOp::Lt},  {"<=", CmpOp::Le},
                                                                {"==", CmpOp::Eq}, {"!=", CmpOp::Ne},
                                                                {">", CmpOp::Gt},  {">=", CmpOp::Ge}};
            for (const auto& [text, o] : ops)
                if (t.text == text) {
                    op = o;
                    return true;
                }
            return false;
        }
        if (t.kind == Tok::Keyword) {
            if (t.text == "in") {
                op = CmpOp::In;
                return true;
            }
            if (t.text == "not" && isKeyword("in", 1)) {
                op = CmpOp::NotIn;
                width = 2;
                return true;
            }
            if (t.text == "is")
                throw error(t.column, "'is' is not supported; use '==' to compare values");
        }
        return false;
    }

    std::unique_ptr<Node> comparison() {
        auto first = bitOr();
        CmpOp op;
        int column;
        std::size_t width;
        if (!comparisonOperator(op, column, width))
            return first;
        auto n = std::make_unique<Node>();
        n->kind = NodeKind::Compare;
        n->column = column;
        n->kids.push_back(std::move(first));
        while (comparisonOperator(op, column, width)) {
            m_pos += width;
            n->cmpOps.push_back(op);
            n->cmpColumns.push_back(column);
            n->kids.push_back(bitOr());
        }
        return fold(std::move(n));
    }

    std::unique_ptr<Node> binary(BinOp op, int column, std::unique_ptr<Node> lhs, std::unique_ptr<Node> rhs) {
        auto n = std::make_unique<Node>();
        n->kind = NodeKind::Binary;
        n->binOp = op;
        n->column = column;
        n->kids.push_back(std::move(lhs));
        n->kids.push_back(std::move(rhs));
        return fold(std::move(n));
    }

    using Level = std::unique_ptr<Node> (Parser::*)();
    std::unique_ptr<Node> leftAssoc(std::initializer_list<std::pair<const char*, BinOp>> ops, Level operand) {
        auto lhs = (this->*operand)();
        while (true) {
            bool matched = false;
            for (const auto& [text, op] : ops) {
                if (isOp(text)) {
                    const int column = next().column;
                    lhs = binary(op, column, std::move(lhs), (this->*operand)());
                    matched = true;
                    break;
                }
            }
            if (!matched)
                return lhs;
        }
    }

    std::unique_ptr<Node> bitOr() { return leftAssoc({{"|", BinOp::BitOr}}, &Parser::bitXor); }
    std::unique_ptr<Node> bitXor() { return leftAssoc({{"^", BinOp::BitXor}}, &Parser::bitAnd); }
    std::unique_ptr<Node> bitAnd() { return leftAssoc({{"&", BinOp::BitAnd}}, &Parser::shift); }
    std::unique_ptr<Node> shift() { return leftAssoc({{"<<", BinOp::LShift}, {">>", BinOp::RShift}}, &Parser::sum); }
    std::unique_ptr<Node> sum() { return leftAssoc({{"+", BinOp::Add}, {"-", BinOp::Sub}}, &Parser::term); }
    std::unique_ptr<Node> term() {
        return leftAssoc({{"*", BinOp::Mul}, {"/", BinOp::TrueDiv}, {"//", BinOp::FloorDiv}, {"%", BinOp::Mod}},
                         &Parser::factor);
    }

    std::unique_ptr<Node> factor() {
        static const std::pair<const char*, UnOp> ops[] = {{"-", UnOp::Neg}, {"+", UnOp::Pos}, {"~", UnOp::Invert}};
        for (const auto& [text, op] : ops) {
            if (isOp(text)) {
                const int column = next().column;
                const Nest nest(*this, column);
                auto n = std::make_unique<Node>();
                n->kind = NodeKind::Unary;
                n->unOp = op;
                n->column = column;
                n->kids.push_back(factor());
                return fold(std::move(n));
            }
        }
        return power();
    }

    std::unique_ptr<Node> power() {
        auto base = primary();
        if (isOp("**")) {
            const int column = next().column;
            const Nest nest(*this, column);
            return binary(BinOp::Pow, column, std::move(base), factor()); // right-associative, binds unary on its right
        }
        return base;
    }

    std::unique_ptr<Node> primary() {
        auto node = atom();
        while (true) {
            if (isOp("[")) {
                const int column = next().column;
                std::unique_ptr<Node> index;
                if (!isOp(":"))
                    index = expression();
                auto n = std::make_unique<Node>();
                n->column = column;
                n->kids.push_back(std::move(node));
                if (isOp(":")) { // a[start:stop:step], each part optional
                    next();
                    n->kind = NodeKind::Slice;
                    n->kids.push_back(std::move(index));
                    n->kids.push_back(isOp(":") || isOp("]") ? nullptr : expression());
                    std::unique_ptr<Node> step;
                    if (isOp(":")) {
                        next();
                        if (!isOp("]"))
                            step = expression();
                    }
                    n->kids.push_back(std::move(step));
                    expectOp("]", "to close the slice");
                } else {
                    n->kind = NodeKind::Subscript;
                    n->kids.push_back(std::move(index));
                    expectOp("]", "to close the subscript");
                }
                node = fold(std::move(n));
            } else if (isOp("(")) {
                throw error(peek().column, "only the builtin functions can be called");
            } else if (isOp(".")) {
                throw error(peek().column, "attributes are not supported (except math.<function>)");
            } else {
                return node;
            }
        }
    }

    std::unique_ptr<Node> atom() {
        const Token& t = peek();
        switch (t.kind) {
        case Tok::Int:
            next();
            return makeConst(Value::ofInt(t.i), t.column);
        case Tok::Float:
            next();
            return makeConst(Value::ofFloat(t.f), t.column);
        case Tok::Str: {
            next();
            std::string text = t.text;
            while (peek().kind == Tok::Str) // adjacent literals concatenate
                text += next().text;
            return makeConst(Value::ofStr(m_pool.addString(std::move(text))), t.column);
        }
        case Tok::Keyword:
            if (t.text == "True" || t.text == "False") {
                next();
                return makeConst(Value::ofBool(t.text == "True"), t.column);
            }
            if (t.text == "None")
                throw error(t.column, "None is not supported");
            throw error(t.column, describe(t) + " was not expected here");
        case Tok::Name:
            return name();
        case Tok::Op:
            if (t.text == "(")
                return parenthesised();
            if (t.text == "[")
                return listDisplay();
            throw error(t.column, describe(t) + " was not expected here");
        case Tok::End:
            throw error(t.column, "unexpected end of expression");
        }
        throw error(t.column, "unexpected token");
    }

    std::unique_ptr<Node> parenthesised() {
        const int column = next().column;
        if (isOp(")")) {
            next();
            auto n = std::make_unique<Node>();
            n->kind = NodeKind::ListDisplay;
            n->column = column;
            return fold(std::move(n));
        }
        if (comprehensionAhead()) { // a generator expression: a list here
            auto n = comprehension(column);
            expectOp(")", "to close the generator expression");
            return n;
        }
        auto inner = expression();
        if (isOp(",")) { // a tuple: treated as a list (used after 'in')
            auto n = std::make_unique<Node>();
            n->kind = NodeKind::ListDisplay;
            n->column = column;
            n->kids.push_back(std::move(inner));
            while (isOp(",")) {
                next();
                if (isOp(")"))
                    break;
                n->kids.push_back(expression());
            }
            expectOp(")", "to close the tuple");
            return fold(std::move(n));
        }
        expectOp(")", "to close the parenthesis");
        return inner;
    }

    std::unique_ptr<Node> listDisplay() {
        const int column = next().column;
        auto n = std::make_unique<Node>();
        n->kind = NodeKind::ListDisplay;
        n->column = column;
        if (isOp("]")) {
            next();
            return fold(std::move(n));
        }
        if (comprehensionAhead()) {
            auto c = comprehension(column);
            expectOp("]", "to close the comprehension");
            return c;
        }
        n->kids.push_back(expression());
        while (isOp(",")) {
            next();
            if (isOp("]"))
                break;
            n->kids.push_back(expression());
        }
        expectOp("]", "to close the list");
        return fold(std::move(n));
    }

    // Is there a 'for' at bracket depth 0 before the closing bracket?
    // Nested brackets are skipped whole (the lexer matched them), so that deep nesting costs
    // linear time, not a scan of the rest at every level.
    bool comprehensionAhead() const {
        for (std::size_t k = m_pos; k < m_toks.size(); ++k) {
            const Token& t = m_toks[k];
            if (t.kind == Tok::Op && (t.text == "(" || t.text == "["))
                k = t.match;
            else if (t.kind == Tok::Op && (t.text == ")" || t.text == "]"))
                return false;
            else if (t.kind == Tok::Keyword && t.text == "for")
                return true;
            else if (t.kind == Tok::End)
                return false;
        }
        return false;
    }

    // element (for NAME in iterable (if condition)*)+ up to, not including, the closing bracket.
    // Python's scoping: the element sees every loop variable, a clause those bound before it.
    // The outermost comprehension is evaluated here, at compile time; one nested in another's
    // element stays a tree that the outer one evaluates with its loop variables bound.
    std::unique_ptr<Node> comprehension(int column) {
        // The loop variables first, so that the element, which comes before them, can use them.
        std::vector<std::string> targets;
        for (std::size_t k = m_pos; k < m_toks.size(); ++k) {
            const Token& t = m_toks[k];
            if (t.kind == Tok::Op && (t.text == "(" || t.text == "["))
                k = t.match; // nested brackets skipped whole
            else if (t.kind == Tok::Op && (t.text == ")" || t.text == "]")) {
                break;
            } else if (t.kind == Tok::End) {
                break;
            } else if (t.kind == Tok::Keyword && t.text == "for") {
                const Token& var = m_toks[std::min(k + 1, m_toks.size() - 1)];
                if (var.kind != Tok::Name)
                    throw error(var.column, "expected a loop variable name after 'for', found " + describe(var));
                targets.push_back(var.text);
            }
        }
        const std::size_t base = m_locals.size();
        m_locals.insert(m_locals.end(), targets.begin(), targets.end());
        auto n = std::make_unique<Node>();
        n->kind = NodeKind::Comprehension;
        n->column = column;
        n->kids.push_back(expression());
        m_locals.resize(base);
        if (!isKeyword("for"))
            throw error(peek().column, "expected 'for' in the comprehension, found " + describe(peek()) +
                                           " (a generator expression must be the only argument)");
        while (isKeyword("for")) {
            // Refused as they come: each clause's names are looked up among the loop variables before it.
            if (n->clauses.size() >= static_cast<std::size_t>(kMaxTreeHeight))
                throw tooDeep(peek().column);
            next();
            const Token var = next();
            if (isOp(","))
                throw error(peek().column, "several loop variables ('for a, b in ...') are not supported");
            if (!isKeyword("in"))
                throw error(peek().column, "expected 'in' in the comprehension, found " + describe(peek()));
            next();
            n->kids.push_back(disjunction());
            n->clauses.push_back(static_cast<int>(m_locals.size()));
            m_locals.push_back(var.text);
            while (isKeyword("if")) {
                if (n->clauses.size() >= static_cast<std::size_t>(kMaxTreeHeight))
                    throw tooDeep(peek().column);
                next();
                n->kids.push_back(disjunction());
                n->clauses.push_back(-1);
            }
        }
        m_locals.resize(base);
        measure(*n);
        // One nested in another's element, or one over variables ("len([t for t in (TX, TY) if t > 4])"
        // in a condition), is evaluated with its expression; the rest are constants now.
        if (base > 0 || hasSlot(*n))
            return n;
        std::vector<Value> env(targets.size());
        return makeConst(m_tree.evaluate(*n, env), column);
    }

    std::unique_ptr<Node> name() {
        const Token t = next();
        std::string text = t.text;
        // math.<name>: the functions and constants of Python's math module that we know.
        if (text == "math" && isOp(".") && peek(1).kind == Tok::Name) {
            next();
            text = next().text;
            if (text == "pi")
                return makeConst(Value::ofFloat(std::numbers::pi), t.column);
            if (text == "e")
                return makeConst(Value::ofFloat(std::numbers::e), t.column);
            if (text == "inf")
                return makeConst(Value::ofFloat(HUGE_VAL), t.column);
            Builtin b;
            if (!lookupBuiltin(text, b) || !isOp("("))
                throw error(t.column, "name 'math." + text + "' is not supported", ErrorKind::Name);
            return call(b, text, t.column);
        }
        if (isOp("(")) {
            Builtin b;
            if (!lookupBuiltin(text, b)) {
                if (m_scope.findVariable(text) || m_scope.findConstant(text))
                    throw error(t.column, "'" + text + "' is not callable", ErrorKind::Type);
                throw error(t.column, "unknown function '" + text + "'" + hint(text, true), ErrorKind::Name);
            }
            return call(b, text, t.column);
        }
        for (std::size_t k = m_locals.size(); k-- > 0;) {
            if (m_locals[k] == text) {
                auto n = std::make_unique<Node>();
                n->kind = NodeKind::Local;
                n->slot = static_cast<int>(k);
                n->column = t.column;
                n->name = text;
                return n;
            }
        }
        if (const Scope::Constant* c = m_scope.findConstant(text))
            return makeConst(c->value, t.column);
        if (m_scope.findVariable(text)) {
            auto n = std::make_unique<Node>();
            n->kind = NodeKind::Slot;
            n->slot = m_scope.slotOf(text);
            n->column = t.column;
            n->name = text;
            return n;
        }
        throw error(t.column, "name '" + text + "' is not defined" + hint(text, false), ErrorKind::Name);
    }

    std::string hint(const std::string& text, bool function) const {
        std::string best;
        int bestDistance = 3;
        std::vector<std::string> candidates;
        if (function) {
            candidates = builtinNames();
        } else {
            candidates = m_scope.names();
        }
        for (const auto& c : candidates) {
            const int d = editDistance(text, c);
            if (d < bestDistance) {
                bestDistance = d;
                best = c;
            }
        }
        if (best.empty() || bestDistance > std::max<int>(1, static_cast<int>(text.size()) / 3))
            return "";
        return "; did you mean '" + best + "'?";
    }

    std::unique_ptr<Node> call(Builtin b, const std::string& fname, int column) {
        expectOp("(", "to start the arguments");
        auto n = std::make_unique<Node>();
        n->kind = NodeKind::Call;
        n->builtin = b;
        n->column = column;
        n->name = fname;
        std::vector<int> argColumns;
        if (!isOp(")") && comprehensionAhead()) { // f(x for x in ...): one generator argument
            argColumns.push_back(peek().column);
            n->kids.push_back(comprehension(peek().column));
        } else if (!isOp(")")) {
            while (true) {
                argColumns.push_back(peek().column);
                // min(name)/max(name) with a variable that has a value list: the list of its values.
                if ((b == Builtin::Min || b == Builtin::Max) && peek().kind == Tok::Name &&
                    (isOp(")", 1) && argColumns.size() == 1)) {
                    const Scope::Variable* v = m_scope.findVariable(peek().text);
                    if (v && v->hasValueList) {
                        const int col = next().column;
                        n->kids.push_back(makeConst(m_pool.addList(v->valueList), col));
                        break;
                    }
                }
                n->kids.push_back(expression());
                if (!isOp(","))
                    break;
                next();
                if (isOp(")"))
                    break;
            }
        }
        expectOp(")", "to close the call");
        const int argc = static_cast<int>(n->kids.size());
        auto arity = [&](int lo, int hi) {
            if (argc < lo || argc > hi) {
                std::string expected = lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi);
                if (hi > 100)
                    expected = "at least " + std::to_string(lo);
                throw error(column,
                            fname + "() takes " + expected + " argument" + (hi == 1 && lo == 1 ? "" : "s") + " (" +
                                std::to_string(argc) + " given)",
                            ErrorKind::Type);
            }
        };
        switch (b) {
        case Builtin::Min:
        case Builtin::Max:
            arity(1, 255);
            break;
        case Builtin::Pow:
            arity(2, 2);
            break;
        case Builtin::Bool:
            arity(0, 1);
            break;
        case Builtin::Round:
            arity(1, 1);
            break;
        case Builtin::Range:
            arity(1, 3);
            break;
        default:
            arity(1, 1);
        }
        return fold(std::move(n));
    }

    std::vector<Token> m_toks;
    std::size_t m_pos = 0;
    const std::string& m_source;
    const Scope& m_scope;
    ConstPool& m_pool;
    ParseOptions m_opts;
    std::vector<std::string> m_locals; // loop variables of the comprehensions being parsed, by Local slot
    int m_nesting = 0;                 // levels of the recursive descent now open (Nest)
    TreeEvaluator m_tree{m_source, m_pool};
};

} // namespace

std::unique_ptr<Node> parse(std::string_view source, const Scope& scope, ConstPool& pool, const ParseOptions& opts) {
    const std::string text(source);
    Lexer lexer(source, text);
    Parser parser(lexer.run(), text, scope, pool, opts);
    return parser.parseAll();
}

} // namespace tilescope::expr::detail

namespace tilescope::expr {

std::vector<Lexeme> lexemes(std::string_view text) {
    const std::string source(text);
    detail::Lexer lexer(text, source);
    std::size_t lexed = text.size();
    std::vector<detail::Token> tokens;
    try {
        tokens = lexer.run();
    } catch (const ExprError&) {
        tokens = lexer.tokensSoFar();
        lexed = tokens.empty() ? 0 : tokens.back().end;
    }
    std::vector<Lexeme> out;
    for (const detail::Token& t : tokens) {
        Lexeme l;
        l.start = static_cast<std::size_t>(t.column - 1);
        l.length = t.end - l.start;
        switch (t.kind) {
        case detail::Tok::End:
            continue;
        case detail::Tok::Int:
        case detail::Tok::Float:
            l.kind = LexemeKind::Number;
            break;
        case detail::Tok::Str:
            l.kind = LexemeKind::String;
            break;
        case detail::Tok::Keyword:
            l.kind = LexemeKind::Keyword;
            break;
        case detail::Tok::Op:
            l.kind = LexemeKind::Operator;
            break;
        case detail::Tok::Name: {
            detail::Builtin b{};
            l.kind = detail::lookupBuiltin(t.text, b) ? LexemeKind::Builtin : LexemeKind::Name;
            break;
        }
        }
        out.push_back(l);
    }
    // After a lexical error: the rest, from its first non-blank character, cannot be read.
    std::size_t rest = lexed;
    while (rest < text.size() && std::isspace(static_cast<unsigned char>(text[rest])))
        ++rest;
    if (rest < text.size())
        out.push_back({rest, text.size() - rest, LexemeKind::Invalid});
    return out;
}

} // namespace tilescope::expr
