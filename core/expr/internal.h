#pragma once

// Internals of the expression language shared by its parser, compiler and virtual machine.

#include "expr/expr.h"

#include <memory>
#include <string>
#include <vector>

namespace tilescope::expr::detail {

/// Marks `st` failed with `kind` and `message` (static text); false, for `return fail(...)`.
inline bool fail(EvalStatus& st, ErrorKind kind, const char* message) {
    st.ok = false;
    st.kind = kind;
    st.message = message;
    return false;
}

enum class BinOp : std::uint8_t { Add, Sub, Mul, TrueDiv, FloorDiv, Mod, Pow, BitAnd, BitOr, BitXor, LShift, RShift };
enum class UnOp : std::uint8_t { Neg, Pos, Invert, Not };
enum class CmpOp : std::uint8_t { Lt, Le, Eq, Ne, Gt, Ge, In, NotIn };
enum class Builtin : std::uint8_t {
    Min,
    Max,
    Abs,
    Ceil,
    Floor,
    Log2,
    Sqrt,
    Int,
    Float,
    Round,
    Len,
    Pow,
    Bool,
    Range,
    List,
    Tuple,
    Sum,
    Sorted
};

const char* binOpText(BinOp op);
const char* cmpOpText(CmpOp op);
const char* builtinName(Builtin b);
bool lookupBuiltin(std::string_view name, Builtin& out);

// ---- runtime operations, shared by the VM's slow paths and constant folding ----
// Each returns false and fills `st` (without the column) on a Python exception.
bool binaryOp(BinOp op, const Value& a, const Value& b, Value& out, EvalStatus& st);
bool unaryOp(UnOp op, const Value& a, Value& out, EvalStatus& st);
bool compareOp(CmpOp op, const Value& a, const Value& b, bool& out, EvalStatus& st);
/// Builtins other than range and sorted (which make lists); `args` are argc values.
bool callBuiltin(Builtin b, const Value* args, int argc, Value& out, EvalStatus& st);
bool subscript(const Value& container, const Value& index, Value& out, EvalStatus& st);

// ---- syntax tree ----
enum class NodeKind : std::uint8_t {
    Const,         // value
    Slot,          // slot
    Binary,        // binOp, kids[0], kids[1]
    Unary,         // unOp, kids[0]
    Compare,       // kids[0..n], cmpOps[n-1]
    And,           // kids (2+)
    Or,            // kids (2+)
    IfElse,        // kids: body, test, orelse
    Call,          // builtin, kids = args
    Subscript,     // kids: container, index
    ListDisplay,   // kids = items
    Comprehension, // kids: element, then one per clause; clauses[i] says what kids[i + 1] is
    Local,         // a comprehension's loop variable: slot = its index in the evaluation environment
    Slice,         // kids: container, start, stop, step (each of the last three may be null)
};

struct Node {
    NodeKind kind = NodeKind::Const;
    int column = 1; // 1-based, where an error in this node is reported
    Value value;
    int slot = -1;
    BinOp binOp = BinOp::Add;
    UnOp unOp = UnOp::Neg;
    Builtin builtin = Builtin::Min;
    std::vector<CmpOp> cmpOps;
    std::vector<int> cmpColumns;
    std::vector<std::unique_ptr<Node>> kids;
    std::string name; // a slot's or a call's name, for messages
    /// Comprehension: per clause, the Local slot a `for` binds, or -1 for an `if`.
    std::vector<int> clauses;
    /// How deep the recursive walks over this subtree go (its height, a comprehension's
    /// clauses counted as levels); the parser keeps it within kMaxTreeHeight.
    int height = 1;
};

/// Limits that keep every recursion over an expression within a small part of a thread's stack
/// (8 MiB by default), also under AddressSanitizer, whose frames are several times larger.
/// Parentheses, brackets, unary operators, `not`, `**` and conditional expressions nest the
/// recursive-descent parser: a few KiB of stack a level (about 7 KiB with ASan).
constexpr int kMaxNesting = 256;
/// The height of the tree, which chains such as `a + b + c + ...` grow without nesting the
/// parser: constant folding, code generation, the tree evaluator and the tree's destructor
/// recurse once per level (well under 1 KiB each).
constexpr int kMaxTreeHeight = 1024;

/// Storage for the constants that a compiled program (or a parsed value list) owns.
struct ConstPool {
    std::vector<std::unique_ptr<std::string>> strings;
    std::vector<std::unique_ptr<ValueList>> lists;
    const std::string* addString(std::string s);
    Value addList(std::vector<Value> items);
};

struct ParseOptions {
    /// A T1 value list: a top-level "1, 2, 4" is a tuple (as Python's eval reads it), and the
    /// whole is evaluated while parsing, so that a failure (1 // 0) is raised there.
    bool valueList = false;
};

/// Does the tree read a variable (a Slot)?
bool hasSlot(const Node& node);

/// Evaluates syntax trees directly: at compile time the lists constant folding builds
/// (comprehensions, list + list, list * n, range(), sorted(), slices), and at run time the
/// expressions the bytecode does not express (a comprehension over variables). Lists it builds
/// live in `pool`; a Slot reads `slots` (none at compile time). Throws ExprError with the column,
/// also when a list grows past kMaxListItems or the work past kMaxSteps.
class TreeEvaluator {
public:
    static constexpr std::size_t kMaxListItems = std::size_t{1} << 20;
    static constexpr std::int64_t kMaxSteps = 20'000'000;

    TreeEvaluator(const std::string& source, ConstPool& pool, const Value* slots = nullptr)
        : m_source(source)
        , m_pool(pool)
        , m_slots(slots) {}

    /// The value of `node`, with comprehension variables in `env` (by Local slot).
    Value evaluate(const Node& node, std::vector<Value>& env) const;
    /// binaryOp, plus list + list and list * int.
    bool binaryValue(BinOp op, const Value& a, const Value& b, Value& out, EvalStatus& st) const;
    /// range() and sorted() of evaluated arguments.
    Value callListBuiltin(const Node& call, const std::vector<Value>& args) const;
    /// container[start:stop:step]; a null bound is absent.
    Value slice(const Node& node, const Value& container, const Value* bound[3]) const;

private:
    void runClauses(const Node& comp, std::size_t clause, std::vector<Value>& env, std::vector<Value>& out) const;
    [[noreturn]] void tooLong(int column) const;
    ExprError error(int column, const std::string& message, ErrorKind kind = ErrorKind::Syntax) const;

    const std::string& m_source;
    ConstPool& m_pool;
    const Value* m_slots;
    mutable std::int64_t m_steps = 0;
};

/// Parses `source` against `scope`; names become slots or folded constants. Throws ExprError
/// (SyntaxError, NameError, TypeError) with columns. Folds constant subtrees into `pool`.
std::unique_ptr<Node> parse(std::string_view source, const Scope& scope, ConstPool& pool, const ParseOptions& opts);

// ---- bytecode ----
// The operators with an int fast path come in three forms: the right operand on the stack,
// in a slot (..S, arg = slot) or a constant (..C, arg = constant index). That saves a dispatch
// for most operators of a typical condition ("BLOCK_M * BLOCK_N <= 8192" is 3 instructions).
#define TILESCOPE_EXPR_FAST_OPS(X) X(Add) X(Sub) X(Mul) X(FloorDiv) X(Mod) X(Lt) X(Le) X(Eq) X(Ne) X(Gt) X(Ge)
#define TILESCOPE_EXPR_OP_FORMS(NAME) NAME, NAME##S, NAME##C,

enum class Op : std::uint8_t {
    LoadSlot,
    LoadConst,
    Binary, // aux = BinOp
    Unary,  // aux = UnOp
    Not,
    Compare,      // aux = CmpOp
    CompareChain, // aux = CmpOp, arg = jump target when false
    JumpIfFalseOrPop,
    JumpIfTrueOrPop,
    PopJumpIfFalse,
    Jump,
    Call, // aux = Builtin, arg = argc
    Subscript,
    InN, // arg = n: [x, a1..an] -> x in (a1..an)
    NotInN,
    Return,
    TILESCOPE_EXPR_FAST_OPS(TILESCOPE_EXPR_OP_FORMS)
};

struct Instr {
    Op op;
    std::uint8_t aux = 0;
    std::uint16_t column = 0;
    std::int32_t arg = 0;
};

} // namespace tilescope::expr::detail

namespace tilescope::expr {

struct Expression::Program {
    std::string source;
    std::vector<detail::Instr> code;
    std::vector<Value> constants;
    detail::ConstPool pool;
    std::vector<int> usedSlots;
    int maxStack = 0;
    /// Set when the expression holds what the bytecode does not express (a comprehension over
    /// variables): it is evaluated by walking this tree instead.
    std::unique_ptr<detail::Node> tree;
    /// A bytecode program's syntax tree, kept for the bounds analysis (Expression::mayHold).
    std::unique_ptr<detail::Node> syntax;
    const detail::Node* root() const { return tree ? tree.get() : syntax.get(); }

    bool run(const Value* slotValues, Value& out, EvalStatus& st) const noexcept;
    bool runTree(const Value* slotValues, Value& out, EvalStatus& st) const noexcept;
};

} // namespace tilescope::expr
