// Compilation of syntax trees to a small stack bytecode, and its interpreter.

#include "expr/internal.h"

#include <algorithm>
#include <memory>
#include <new>

namespace tilescope::expr {

using namespace detail;

// ---------------------------------------------------------------- Scope

int Scope::addVariable(const std::string& name) {
    if (const int s = slotOf(name); s >= 0)
        return s;
    m_variables.push_back({name, false, {}});
    return static_cast<int>(m_variables.size()) - 1;
}

void Scope::setValueList(const std::string& name, std::vector<Value> values) {
    const int s = addVariable(name);
    auto& v = m_variables[static_cast<std::size_t>(s)];
    v.hasValueList = true;
    v.valueList = std::move(values);
}

void Scope::addConstant(const std::string& name, Value value) {
    for (auto& c : m_constants)
        if (c.name == name) {
            c.value = value;
            return;
        }
    m_constants.push_back({name, value});
}

int Scope::slotOf(std::string_view name) const {
    for (std::size_t i = 0; i < m_variables.size(); ++i)
        if (m_variables[i].name == name)
            return static_cast<int>(i);
    return -1;
}

std::vector<std::string> Scope::names() const {
    std::vector<std::string> out;
    for (const auto& v : m_variables)
        out.push_back(v.name);
    for (const auto& c : m_constants)
        out.push_back(c.name);
    return out;
}

const Scope::Variable* Scope::findVariable(std::string_view name) const {
    const int s = slotOf(name);
    return s < 0 ? nullptr : &m_variables[static_cast<std::size_t>(s)];
}

const Scope::Constant* Scope::findConstant(std::string_view name) const {
    for (const auto& c : m_constants)
        if (c.name == name)
            return &c;
    return nullptr;
}

// ---------------------------------------------------------------- errors

const char* errorKindName(ErrorKind k) {
    switch (k) {
    case ErrorKind::Syntax:
        return "SyntaxError";
    case ErrorKind::Name:
        return "NameError";
    case ErrorKind::Type:
        return "TypeError";
    case ErrorKind::ZeroDivision:
        return "ZeroDivisionError";
    case ErrorKind::Value:
        return "ValueError";
    case ErrorKind::Overflow:
        return "OverflowError";
    case ErrorKind::Index:
        return "IndexError";
    }
    return "Error";
}

namespace {
// The expression as a message quotes it: whole when short, else the part around the column, so
// that a hostile one (100,000 parentheses) does not make a message of that size.
std::string quoted(const std::string& expression, int column) {
    constexpr std::size_t kWhole = 200, kSide = 60;
    if (expression.size() <= kWhole)
        return expression;
    const std::size_t at = std::min(expression.size(), static_cast<std::size_t>(std::max(column, 1) - 1));
    const std::size_t from = at > kSide ? at - kSide : 0;
    const std::size_t to = std::min(expression.size(), at + kSide);
    return (from > 0 ? "..." : "") + expression.substr(from, to - from) + (to < expression.size() ? "..." : "");
}

std::string composeExprError(ErrorKind kind, const std::string& expression, int column, const std::string& message) {
    return "column " + std::to_string(column) + ": " + errorKindName(kind) + ": " + message + ", in '" +
           quoted(expression, column) + "'";
}
} // namespace

ExprError::ExprError(ErrorKind kind, std::string expression, int column, std::string message)
    : std::runtime_error(composeExprError(kind, expression, column, message))
    , m_kind(kind)
    , m_expression(std::move(expression))
    , m_column(column)
    , m_message(std::move(message)) {}

// ---------------------------------------------------------------- code generation

namespace {

class CodeGen {
public:
    CodeGen(Expression::Program& program)
        : m_p(program) {}

    void run(const Node& root) {
        gen(root);
        emit(Op::Return, root.column);
        std::sort(m_slots.begin(), m_slots.end());
        m_slots.erase(std::unique(m_slots.begin(), m_slots.end()), m_slots.end());
        m_p.usedSlots = m_slots;
        m_p.maxStack = m_maxDepth;
    }

private:
    std::size_t emit(Op op, int column, std::int32_t arg = 0, std::uint8_t aux = 0) {
        Instr in;
        in.op = op;
        in.aux = aux;
        in.column = static_cast<std::uint16_t>(std::clamp(column, 0, 65535));
        in.arg = arg;
        m_p.code.push_back(in);
        return m_p.code.size() - 1;
    }
    void patch(std::size_t at) { m_p.code[at].arg = static_cast<std::int32_t>(m_p.code.size()); }
    void push(int n = 1) {
        m_depth += n;
        m_maxDepth = std::max(m_maxDepth, m_depth);
    }
    void pop(int n = 1) { m_depth -= n; }

    // Emits `base` (an operator with an int fast path) taking its right operand from a slot or
    // a constant directly when it is one, else from the stack.
    void emitWithOperand(Op base, const Node& rhs, int column, std::uint8_t aux) {
        const auto form = [base](int k) { return static_cast<Op>(static_cast<int>(base) + k); };
        if (rhs.kind == NodeKind::Slot) {
            m_slots.push_back(rhs.slot);
            emit(form(1), column, rhs.slot, aux);
        } else if (rhs.kind == NodeKind::Const) {
            m_p.constants.push_back(rhs.value);
            emit(form(2), column, static_cast<std::int32_t>(m_p.constants.size() - 1), aux);
        } else {
            gen(rhs);
            emit(base, column, 0, aux);
            pop();
        }
    }

    [[noreturn]] void listError(const Node& n) {
        throw ExprError(ErrorKind::Type, m_p.source, n.column,
                        "a list with variables in it can only follow 'in' or be the argument of min()/max()");
    }

    void gen(const Node& n) {
        switch (n.kind) {
        case NodeKind::Const: {
            m_p.constants.push_back(n.value);
            emit(Op::LoadConst, n.column, static_cast<std::int32_t>(m_p.constants.size() - 1));
            push();
            return;
        }
        case NodeKind::Slot:
            m_slots.push_back(n.slot);
            emit(Op::LoadSlot, n.column, n.slot);
            push();
            return;
        case NodeKind::Binary: {
            gen(*n.kids[0]);
            Op fast;
            switch (n.binOp) {
            case BinOp::Add:
                fast = Op::Add;
                break;
            case BinOp::Sub:
                fast = Op::Sub;
                break;
            case BinOp::Mul:
                fast = Op::Mul;
                break;
            case BinOp::FloorDiv:
                fast = Op::FloorDiv;
                break;
            case BinOp::Mod:
                fast = Op::Mod;
                break;
            default:
                gen(*n.kids[1]);
                emit(Op::Binary, n.column, 0, static_cast<std::uint8_t>(n.binOp));
                pop();
                return;
            }
            emitWithOperand(fast, *n.kids[1], n.column, static_cast<std::uint8_t>(n.binOp));
            return;
        }
        case NodeKind::Unary:
            gen(*n.kids[0]);
            if (n.unOp == UnOp::Not)
                emit(Op::Not, n.column);
            else
                emit(Op::Unary, n.column, 0, static_cast<std::uint8_t>(n.unOp));
            return;
        case NodeKind::Compare:
            genCompare(n);
            return;
        case NodeKind::And:
        case NodeKind::Or: {
            std::vector<std::size_t> jumps;
            const Op jumpOp = n.kind == NodeKind::And ? Op::JumpIfFalseOrPop : Op::JumpIfTrueOrPop;
            for (std::size_t i = 0; i < n.kids.size(); ++i) {
                gen(*n.kids[i]);
                if (i + 1 < n.kids.size()) {
                    jumps.push_back(emit(jumpOp, n.column));
                    pop();
                }
            }
            for (auto j : jumps)
                patch(j);
            return;
        }
        case NodeKind::IfElse: {
            gen(*n.kids[1]);
            const std::size_t toElse = emit(Op::PopJumpIfFalse, n.column);
            pop();
            gen(*n.kids[0]);
            const std::size_t toEnd = emit(Op::Jump, n.column);
            pop();
            patch(toElse);
            gen(*n.kids[2]);
            patch(toEnd);
            return;
        }
        case NodeKind::Call: {
            if (n.builtin == Builtin::Range || n.builtin == Builtin::Sorted)
                throw ExprError(ErrorKind::Type, m_p.source, n.column,
                                std::string(builtinName(n.builtin)) + "() arguments must be constants here");
            std::vector<const Node*> args;
            for (const auto& k : n.kids)
                args.push_back(k.get());
            // min([a, b, c]) == min(a, b, c)
            if ((n.builtin == Builtin::Min || n.builtin == Builtin::Max) && args.size() == 1 &&
                args[0]->kind == NodeKind::ListDisplay) {
                const Node* list = args[0];
                args.clear();
                for (const auto& k : list->kids)
                    args.push_back(k.get());
                if (args.empty())
                    throw ExprError(ErrorKind::Value, m_p.source, n.column,
                                    std::string(builtinName(n.builtin)) + "() arg is an empty sequence");
                if (args.size() == 1) { // min([x]) is x
                    gen(*args[0]);
                    return;
                }
            }
            for (const Node* a : args)
                gen(*a);
            emit(Op::Call, n.column, static_cast<std::int32_t>(args.size()), static_cast<std::uint8_t>(n.builtin));
            pop(static_cast<int>(args.size()));
            push();
            return;
        }
        case NodeKind::Subscript:
            gen(*n.kids[0]);
            gen(*n.kids[1]);
            emit(Op::Subscript, n.column);
            pop();
            return;
        case NodeKind::ListDisplay:
            listError(n);
        case NodeKind::Comprehension:
        case NodeKind::Local:
        case NodeKind::Slice:
            throw ExprError(ErrorKind::Type, m_p.source, n.column,
                            n.kind == NodeKind::Slice
                                ? "a slice must be of a constant list with constant bounds"
                                : "a comprehension may use only constants and its own loop variables");
        }
    }

    void genCompare(const Node& n) {
        const std::size_t count = n.cmpOps.size();
        gen(*n.kids[0]);
        std::vector<std::size_t> chainJumps;
        for (std::size_t i = 0; i < count; ++i) {
            const CmpOp op = n.cmpOps[i];
            const Node& rhs = *n.kids[i + 1];
            const int column = n.cmpColumns[i];
            const bool last = i + 1 == count;
            if (rhs.kind == NodeKind::ListDisplay) {
                if (!last || (op != CmpOp::In && op != CmpOp::NotIn))
                    listError(rhs);
                for (const auto& item : rhs.kids)
                    gen(*item);
                emit(op == CmpOp::In ? Op::InN : Op::NotInN, column, static_cast<std::int32_t>(rhs.kids.size()));
                pop(static_cast<int>(rhs.kids.size()));
                return;
            }
            if (!last) {
                gen(rhs);
                chainJumps.push_back(emit(Op::CompareChain, column, 0, static_cast<std::uint8_t>(op)));
                pop(); // [a, b] -> [b]
                continue;
            }
            Op fast = Op::Compare;
            switch (op) {
            case CmpOp::Lt:
                fast = Op::Lt;
                break;
            case CmpOp::Le:
                fast = Op::Le;
                break;
            case CmpOp::Eq:
                fast = Op::Eq;
                break;
            case CmpOp::Ne:
                fast = Op::Ne;
                break;
            case CmpOp::Gt:
                fast = Op::Gt;
                break;
            case CmpOp::Ge:
                fast = Op::Ge;
                break;
            default:
                gen(rhs);
                emit(Op::Compare, column, 0, static_cast<std::uint8_t>(op));
                pop();
                continue;
            }
            emitWithOperand(fast, rhs, column, static_cast<std::uint8_t>(op));
        }
        for (auto j : chainJumps)
            patch(j);
    }

    Expression::Program& m_p;
    std::vector<int> m_slots;
    int m_depth = 0;
    int m_maxDepth = 0;
};

inline bool fastInts(const Value& a, const Value& b) {
    return a.kind == Kind::Int && b.kind == Kind::Int;
}

} // namespace

// ---------------------------------------------------------------- interpreter

bool Expression::Program::run(const Value* slotValues, Value& out, EvalStatus& st) const noexcept {
    if (tree)
        return runTree(slotValues, out, st);
    // Raw storage: a Value array would zero itself on every evaluation.
    constexpr int kInline = 32;
    alignas(Value) unsigned char inlineStack[kInline * sizeof(Value)];
    std::unique_ptr<Value[]> heapStack;
    Value* base = reinterpret_cast<Value*>(inlineStack);
    if (maxStack > kInline) {
        heapStack.reset(new (std::nothrow) Value[static_cast<std::size_t>(maxStack)]);
        if (!heapStack) {
            st = {false, ErrorKind::Overflow, 0, "expression too deep to evaluate"};
            return false;
        }
        base = heapStack.get();
    }
    Value* sp = base;
    const Instr* ip = code.data();
    const Value* consts = constants.data();

    // The three forms of an operator with an int fast path; FAST(a, b) handles two ints
    // (returning false to fall back), SLOW(a, b) does the full Python semantics into `a`.
#define TS_FAST_FORMS(NAME, FAST, SLOW)                                                                                \
    case Op::NAME: {                                                                                                   \
        Value& a = sp[-2];                                                                                             \
        const Value& b = sp[-1];                                                                                       \
        if (!(fastInts(a, b) && FAST(a, b)) && !SLOW(a, b))                                                            \
            return raise(in);                                                                                          \
        --sp;                                                                                                          \
        break;                                                                                                         \
    }                                                                                                                  \
    case Op::NAME##S: {                                                                                                \
        Value& a = sp[-1];                                                                                             \
        const Value& b = slotValues[in->arg];                                                                          \
        if (!(fastInts(a, b) && FAST(a, b)) && !SLOW(a, b))                                                            \
            return raise(in);                                                                                          \
        break;                                                                                                         \
    }                                                                                                                  \
    case Op::NAME##C: {                                                                                                \
        Value& a = sp[-1];                                                                                             \
        const Value& b = consts[in->arg];                                                                              \
        if (!(fastInts(a, b) && FAST(a, b)) && !SLOW(a, b))                                                            \
            return raise(in);                                                                                          \
        break;                                                                                                         \
    }

#define TS_ARITH_SLOW(a, b) binaryOp(static_cast<BinOp>(in->aux), a, b, a, st)
#define TS_ADD_FAST(a, b) addFast(a, b)
#define TS_SUB_FAST(a, b) subFast(a, b)
#define TS_MUL_FAST(a, b) mulFast(a, b)
#define TS_FLOORDIV_FAST(a, b) ((b).i > 0 && (a).i >= 0 && ((a).i = (a).i / (b).i, true))
#define TS_MOD_FAST(a, b) ((b).i > 0 && (a).i >= 0 && ((a).i = (a).i % (b).i, true))
#define TS_CMP_SLOW(a, b) compareSlow(static_cast<CmpOp>(in->aux), a, b, st)
#define TS_CMP_FAST(OPERATOR)                                                                                          \
    [](Value& x, const Value& y) {                                                                                     \
        x = Value::ofBool(x.i OPERATOR y.i);                                                                           \
        return true;                                                                                                   \
    }

    const auto raise = [&](const Instr* in) {
        st.ok = false;
        st.column = in->column;
        return false;
    };
    const auto addFast = [](Value& a, const Value& b) {
        std::int64_t r; // a stays intact on overflow, for the slow path's error
        if (__builtin_add_overflow(a.i, b.i, &r))
            return false;
        a.i = r;
        return true;
    };
    const auto subFast = [](Value& a, const Value& b) {
        std::int64_t r; // a stays intact on overflow, for the slow path's error
        if (__builtin_sub_overflow(a.i, b.i, &r))
            return false;
        a.i = r;
        return true;
    };
    const auto mulFast = [](Value& a, const Value& b) {
        std::int64_t r; // a stays intact on overflow, for the slow path's error
        if (__builtin_mul_overflow(a.i, b.i, &r))
            return false;
        a.i = r;
        return true;
    };
    const auto compareSlow = [](CmpOp op, Value& a, const Value& b, EvalStatus& status) {
        bool r;
        if (!compareOp(op, a, b, r, status))
            return false;
        a = Value::ofBool(r);
        return true;
    };
    const auto ltFast = TS_CMP_FAST(<);
    const auto leFast = TS_CMP_FAST(<=);
    const auto eqFast = TS_CMP_FAST(==);
    const auto neFast = TS_CMP_FAST(!=);
    const auto gtFast = TS_CMP_FAST(>);
    const auto geFast = TS_CMP_FAST(>=);

    for (const Instr* in = ip;; ++in) {
        switch (in->op) {
        case Op::LoadSlot:
            *sp++ = slotValues[in->arg];
            break;
        case Op::LoadConst:
            *sp++ = consts[in->arg];
            break;
            TS_FAST_FORMS(Add, TS_ADD_FAST, TS_ARITH_SLOW)
            TS_FAST_FORMS(Sub, TS_SUB_FAST, TS_ARITH_SLOW)
            TS_FAST_FORMS(Mul, TS_MUL_FAST, TS_ARITH_SLOW)
            TS_FAST_FORMS(FloorDiv, TS_FLOORDIV_FAST, TS_ARITH_SLOW)
            TS_FAST_FORMS(Mod, TS_MOD_FAST, TS_ARITH_SLOW)
            TS_FAST_FORMS(Lt, ltFast, TS_CMP_SLOW)
            TS_FAST_FORMS(Le, leFast, TS_CMP_SLOW)
            TS_FAST_FORMS(Eq, eqFast, TS_CMP_SLOW)
            TS_FAST_FORMS(Ne, neFast, TS_CMP_SLOW)
            TS_FAST_FORMS(Gt, gtFast, TS_CMP_SLOW)
            TS_FAST_FORMS(Ge, geFast, TS_CMP_SLOW)
        case Op::Binary: {
            Value& a = sp[-2];
            if (!binaryOp(static_cast<BinOp>(in->aux), a, sp[-1], a, st))
                return raise(in);
            --sp;
            break;
        }
        case Op::Unary: {
            Value& a = sp[-1];
            if (!unaryOp(static_cast<UnOp>(in->aux), a, a, st))
                return raise(in);
            break;
        }
        case Op::Not:
            sp[-1] = Value::ofBool(!truthy(sp[-1]));
            break;
        case Op::Compare: {
            Value& a = sp[-2];
            if (!compareSlow(static_cast<CmpOp>(in->aux), a, sp[-1], st))
                return raise(in);
            --sp;
            break;
        }
        case Op::CompareChain: {
            // [a, b] -> [b] when a OP b holds; else [False] and jump past the chain.
            Value& a = sp[-2];
            const Value& b = sp[-1];
            bool r;
            if (!compareOp(static_cast<CmpOp>(in->aux), a, b, r, st))
                return raise(in);
            a = r ? b : Value::ofBool(false);
            --sp;
            if (!r)
                in = ip + in->arg - 1;
            break;
        }
        case Op::JumpIfFalseOrPop:
            if (!truthy(sp[-1]))
                in = ip + in->arg - 1;
            else
                --sp;
            break;
        case Op::JumpIfTrueOrPop:
            if (truthy(sp[-1]))
                in = ip + in->arg - 1;
            else
                --sp;
            break;
        case Op::PopJumpIfFalse:
            if (!truthy(*--sp))
                in = ip + in->arg - 1;
            break;
        case Op::Jump:
            in = ip + in->arg - 1;
            break;
        case Op::Call: {
            const int argc = in->arg;
            Value* args = sp - argc;
            Value r;
            if (!callBuiltin(static_cast<Builtin>(in->aux), args, argc, r, st))
                return raise(in);
            sp = args;
            *sp++ = r;
            break;
        }
        case Op::Subscript: {
            Value& a = sp[-2];
            if (!subscript(a, sp[-1], a, st))
                return raise(in);
            --sp;
            break;
        }
        case Op::InN:
        case Op::NotInN: {
            const int n = in->arg;
            Value* items = sp - n;
            const Value& x = items[-1];
            bool found = false;
            for (int k = 0; k < n && !found; ++k)
                found = equal(x, items[k]);
            sp = items;
            sp[-1] = Value::ofBool(in->op == Op::InN ? found : !found);
            break;
        }
        case Op::Return:
            out = sp[-1];
            return true;
        }
    }
#undef TS_FAST_FORMS
#undef TS_ARITH_SLOW
#undef TS_ADD_FAST
#undef TS_SUB_FAST
#undef TS_MUL_FAST
#undef TS_FLOORDIV_FAST
#undef TS_MOD_FAST
#undef TS_CMP_SLOW
#undef TS_CMP_FAST
}

// ---------------------------------------------------------------- Expression

namespace {
const std::string& emptyString() {
    static const std::string empty;
    return empty;
}
} // namespace

Expression::Expression() = default;

Expression::Expression(std::shared_ptr<const Program> program)
    : m_program(std::move(program)) {}

namespace {

// What only a tree walk evaluates: a comprehension, a slice or a list-making call that folding
// left (because it reads variables), and a list of variables other than after `in` or as the
// one argument of min()/max(), which the bytecode does itself ("sum([TX, TY]) <= 16").
bool needsTree(const Node& node, bool listAllowed = false) {
    if (node.kind == NodeKind::Comprehension || node.kind == NodeKind::Slice ||
        (node.kind == NodeKind::Call && (node.builtin == Builtin::Range || node.builtin == Builtin::Sorted)) ||
        (node.kind == NodeKind::ListDisplay && !listAllowed))
        return true;
    for (std::size_t i = 0; i < node.kids.size(); ++i) {
        if (!node.kids[i])
            continue;
        const bool afterIn = node.kind == NodeKind::Compare && i == node.kids.size() - 1 &&
                             (node.cmpOps.back() == CmpOp::In || node.cmpOps.back() == CmpOp::NotIn);
        const bool minMaxArgument = node.kind == NodeKind::Call && node.kids.size() == 1 &&
                                    (node.builtin == Builtin::Min || node.builtin == Builtin::Max);
        if (needsTree(*node.kids[i], afterIn || minMaxArgument))
            return true;
    }
    return false;
}

void collectSlots(const Node& node, std::vector<int>& slots) {
    if (node.kind == NodeKind::Slot)
        slots.push_back(node.slot);
    for (const auto& k : node.kids) {
        if (k)
            collectSlots(*k, slots);
    }
}

} // namespace

Expression Expression::compile(std::string_view source, const Scope& scope) {
    auto program = std::make_shared<Program>();
    program->source = std::string(source);
    auto root = parse(source, scope, program->pool, ParseOptions{});
    if (needsTree(*root)) {
        collectSlots(*root, program->usedSlots);
        std::sort(program->usedSlots.begin(), program->usedSlots.end());
        program->usedSlots.erase(std::unique(program->usedSlots.begin(), program->usedSlots.end()),
                                 program->usedSlots.end());
        program->tree = std::move(root);
        return Expression(std::move(program));
    }
    CodeGen(*program).run(*root);
    program->syntax = std::move(root);
    return Expression(std::move(program));
}

bool Expression::Program::runTree(const Value* slotValues, Value& out, EvalStatus& st) const noexcept {
    // A message that is not static text lives here until the thread's next failed tree walk.
    thread_local std::string message;
    try {
        ConstPool lists; // what this evaluation builds; gone when it returns
        const TreeEvaluator evaluator(source, lists, slotValues);
        std::vector<Value> env;
        out = evaluator.evaluate(*tree, env);
        const bool built =
            out.kind == Kind::List && std::any_of(lists.lists.begin(), lists.lists.end(),
                                                  [&](const auto& l) { return l->value().list == out.list; });
        if (built) {
            message = "a list built from variables cannot be the value of the expression; use it inside it "
                      "(len, min, max, sum, in)";
            st = {false, ErrorKind::Type, tree->column, message.c_str()};
            return false;
        }
        return true;
    } catch (const ExprError& e) {
        message = e.message();
        st = {false, e.kind(), e.column(), message.c_str()};
    } catch (const std::exception& e) {
        message = e.what();
        st = {false, ErrorKind::Overflow, tree->column, message.c_str()};
    }
    return false;
}

const std::string& Expression::source() const {
    return m_program ? m_program->source : emptyString();
}

bool Expression::walksTree() const {
    return m_program && m_program->tree != nullptr;
}

std::span<const int> Expression::usedSlots() const {
    if (!m_program)
        return {};
    return m_program->usedSlots;
}

bool Expression::tryEvaluate(const Value* slotValues, Value& result, EvalStatus& status) const noexcept {
    if (!m_program) {
        result = Value::ofBool(true);
        return true;
    }
    status = EvalStatus{};
    return m_program->run(slotValues, result, status);
}

ExprError Expression::errorFor(const EvalStatus& status) const {
    return ExprError(status.kind, source(), status.column, status.message ? status.message : "evaluation failed");
}

Value Expression::evaluate(const Value* slotValues) const {
    Value result;
    EvalStatus st;
    if (!tryEvaluate(slotValues, result, st))
        throw errorFor(st);
    return result;
}

bool Expression::test(const Value* slotValues) const {
    return truthy(evaluate(slotValues));
}

std::int64_t Expression::evaluateInt(const Value* slotValues) const {
    const Value v = evaluate(slotValues);
    if (v.kind == Kind::Int || v.kind == Kind::Bool)
        return v.i;
    if (v.kind == Kind::Float && v.f == static_cast<double>(static_cast<std::int64_t>(v.f)))
        return static_cast<std::int64_t>(v.f);
    throw ExprError(ErrorKind::Type, source(), 1, "expected an integer, got " + repr(v));
}

double Expression::evaluateNumber(const Value* slotValues) const {
    const Value v = evaluate(slotValues);
    if (v.kind == Kind::Float)
        return v.f;
    if (v.kind == Kind::Int || v.kind == Kind::Bool)
        return static_cast<double>(v.i);
    throw ExprError(ErrorKind::Type, source(), 1, "expected a number, got " + repr(v));
}

// ---------------------------------------------------------------- value lists

namespace {
// A value as a message shows it: long lists and strings cut short.
std::string shortRepr(const Value& v) {
    constexpr std::size_t kShown = 60;
    std::string text = repr(v);
    if (text.size() > kShown)
        text = text.substr(0, kShown - 3) + "...";
    return text;
}
} // namespace

std::vector<Value> parseValueList(std::string_view source, std::vector<std::unique_ptr<std::string>>& strings) {
    const std::string text(source);
    ConstPool pool;
    ParseOptions opts;
    opts.valueList = true;
    const Scope empty;
    auto root = parse(source, empty, pool, opts);
    if (root->value.kind != Kind::List)
        throw ExprError(ErrorKind::Type, text, root->column,
                        "expected a list such as [1, 2, 4] or range(...), got " + shortRepr(root->value));
    std::vector<Value> out;
    for (const Value& v : root->value.items()) {
        if (v.kind == Kind::List)
            throw ExprError(ErrorKind::Type, text, root->column, "a value may not be a list: " + shortRepr(v));
        if (v.kind == Kind::Str) {
            strings.push_back(std::make_unique<std::string>(*v.s));
            out.push_back(Value::ofStr(strings.back().get()));
        } else {
            out.push_back(v);
        }
    }
    return out;
}

} // namespace tilescope::expr
