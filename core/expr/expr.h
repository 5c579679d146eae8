#pragma once

// The expression language of T1 conditions and size expressions: a Python subset with
// Python's semantics (64-bit ints, floats, bools, strings, lists). An expression is parsed
// and compiled once against a Scope (names -> slots) and then evaluated many times over an
// array of slot values, without allocating.

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope::expr {

enum class Kind : std::uint8_t { Int, Float, Bool, Str, List };

/// A value: 16 bytes, trivially copyable. Strings and lists point at storage owned elsewhere
/// (the compiled Expression for its constants, a ValueList or the caller for slot values).
struct Value {
    Kind kind = Kind::Int;
    union {
        std::int64_t i;
        double f;
        const std::string* s;
        const Value* list; // points at a header whose `i` is the length; the items follow it
    };

    Value()
        : i(0) {}
    static Value ofInt(std::int64_t v) {
        Value r;
        r.kind = Kind::Int;
        r.i = v;
        return r;
    }
    static Value ofFloat(double v) {
        Value r;
        r.kind = Kind::Float;
        r.f = v;
        return r;
    }
    static Value ofBool(bool v) {
        Value r;
        r.kind = Kind::Bool;
        r.i = v ? 1 : 0;
        return r;
    }
    /// The string must outlive every use of the value.
    static Value ofStr(const std::string* v) {
        Value r;
        r.kind = Kind::Str;
        r.s = v;
        return r;
    }

    bool isNumber() const { return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool; }
    std::size_t listSize() const { return static_cast<std::size_t>(list->i); }
    std::span<const Value> items() const { return {list + 1, listSize()}; }
};

/// Owns the items of a list value (a T1 value list, ProblemSize, ...).
class ValueList {
public:
    ValueList();
    explicit ValueList(std::span<const Value> items);
    ValueList(const ValueList& other);
    ValueList& operator=(const ValueList& other);
    ValueList(ValueList&&) noexcept = default;
    ValueList& operator=(ValueList&&) noexcept = default;

    void push_back(Value v);
    std::size_t size() const { return m_storage.size() - 1; }
    std::span<const Value> items() const { return {m_storage.data() + 1, size()}; }
    /// A list value viewing this storage; valid while this ValueList lives and is not changed.
    Value value() const;

private:
    std::vector<Value> m_storage; // [header, items...]
};

/// Python's truthiness: 0, 0.0, False, "" and [] are false.
bool truthy(const Value& v);
/// Python's == (1 == 1.0 == True, exact int/float comparison; lists element-wise).
bool equal(const Value& a, const Value& b);
/// Python's repr: 3, 0.5, 1e+16, True, 'abc', [1, 2].
std::string repr(const Value& v);
/// The names of the builtin functions (min, max, ...), which no variable may take.
const std::vector<std::string>& builtinNames();

/// What a piece of an expression's text is, for colouring it as it is typed.
enum class LexemeKind : std::uint8_t { Number, String, Name, Builtin, Keyword, Operator, Invalid };
struct Lexeme {
    std::size_t start = 0;  ///< byte offset in the text
    std::size_t length = 0; ///< bytes
    LexemeKind kind = LexemeKind::Name;
};
/// The text's lexemes as the parser reads them (a builtin's name as Builtin), whether or not
/// the expression parses; after a lexical error (an unterminated string, a stray '='), the
/// rest of the text is one Invalid lexeme.
std::vector<Lexeme> lexemes(std::string_view text);
/// The Python type name: int, float, bool, str, list.
const char* typeName(Kind k);

/// Names an expression can use. Each variable gets a slot: the index of its value in the
/// array passed to Expression::evaluate. A variable may also carry its list of possible
/// values, which `min(name)` and `max(name)` use (as T1 argument sizes such as
/// "ProblemSize[0] + max(filter_width) - 1" do).
class Scope {
public:
    /// Adds a variable and returns its slot (slots are 0, 1, 2, ... in order of adding).
    /// Adding a name twice returns the existing slot.
    int addVariable(const std::string& name);
    /// Gives a variable its value list, used for min(name)/max(name).
    void setValueList(const std::string& name, std::vector<Value> values);
    /// Adds a name whose value is fixed; uses are folded when compiled. The value must not
    /// point at storage that dies before the expressions compiled in this scope.
    void addConstant(const std::string& name, Value value);

    /// The slot of a variable, or -1.
    int slotOf(std::string_view name) const;
    int slotCount() const { return static_cast<int>(m_variables.size()); }
    const std::string& nameOf(int slot) const { return m_variables.at(static_cast<std::size_t>(slot)).name; }
    /// All names of this scope, for "did you mean" hints.
    std::vector<std::string> names() const;

    struct Variable {
        std::string name;
        bool hasValueList = false;
        std::vector<Value> valueList;
    };
    struct Constant {
        std::string name;
        Value value;
    };
    const Variable* findVariable(std::string_view name) const;
    const Constant* findConstant(std::string_view name) const;

private:
    std::vector<Variable> m_variables;
    std::vector<Constant> m_constants;
};

/// Why an expression failed: Python's exception names, for the runtime ones.
enum class ErrorKind : std::uint8_t {
    Syntax,       ///< SyntaxError (at parse time)
    Name,         ///< NameError: an unknown name or function (at parse time)
    Type,         ///< TypeError: e.g. '<' between 'str' and 'int', a call with the wrong arguments
    ZeroDivision, ///< ZeroDivisionError
    Value,        ///< ValueError: e.g. math domain error in log2(-1)
    Overflow,     ///< OverflowError: a 64-bit int overflowed (Python's ints are unbounded; ours are not)
    Index,        ///< IndexError: list index out of range
};
const char* errorKindName(ErrorKind k); // "SyntaxError", "NameError", ...

/// An expression failed to compile or to evaluate. column() is 1-based into expression().
class ExprError : public std::runtime_error {
public:
    ExprError(ErrorKind kind, std::string expression, int column, std::string message);
    ErrorKind kind() const { return m_kind; }
    const std::string& expression() const { return m_expression; }
    int column() const { return m_column; }
    /// The message alone, without the expression and column ("unknown name 'BLOCK_Q'").
    const std::string& message() const { return m_message; }

private:
    ErrorKind m_kind;
    std::string m_expression;
    int m_column;
    std::string m_message;
};

/// The outcome of a non-throwing evaluation.
struct EvalStatus {
    bool ok = true;
    ErrorKind kind = ErrorKind::Type;
    int column = 0;
    const char* message = nullptr; // static text
};

/// What a slot holds while a config is only partly chosen, for Expression::mayHold: its value
/// (bound), or one of several values not chosen yet, all numbers within [lo, hi] (numeric) or
/// anything (neither).
struct SlotRange {
    bool bound = true;     ///< the slot holds its value in the slot array
    bool numeric = false;  ///< unbound: every value it may take is a number within [lo, hi]
    bool integral = false; ///< unbound and numeric: ... and each an int or a bool
    double lo = 0;
    double hi = 0;
};

/// A compiled expression. Immutable and cheap to copy (shares its program); evaluation is
/// thread-safe.
class Expression {
public:
    Expression(); // the constant None-like expression "True"; valid() is false
    /// Compiles `source`; throws ExprError (SyntaxError, NameError or TypeError) with the column.
    static Expression compile(std::string_view source, const Scope& scope);

    bool valid() const { return m_program != nullptr; }
    const std::string& source() const;
    /// The slots this expression reads, ascending and unique.
    std::span<const int> usedSlots() const;
    /// True when the expression reads no slot (its value is known at compile time, unless it fails).
    bool isConstant() const { return usedSlots().empty(); }
    /// True when evaluating walks the syntax tree (a comprehension, slice, range() or sorted()
    /// over variables, a list of variables other than after `in` or as min()/max()'s argument),
    /// several times slower than the bytecode that every other expression compiles to.
    bool walksTree() const;

    /// Evaluates over slot values (an array of at least scope.slotCount() values).
    /// Never throws; on failure returns false and fills `status`. List and string results
    /// point into this Expression or the slot values.
    bool tryEvaluate(const Value* slotValues, Value& result, EvalStatus& status) const noexcept;
    /// Evaluates, throwing ExprError on a runtime error.
    Value evaluate(const Value* slotValues) const;
    /// Evaluates and takes Python's truthiness; throws ExprError on a runtime error.
    bool test(const Value* slotValues) const;
    /// Evaluates to an integer (an int, a bool, or an integral float); throws ExprError otherwise.
    std::int64_t evaluateInt(const Value* slotValues) const;
    /// Evaluates to a number as double; throws ExprError otherwise.
    double evaluateNumber(const Value* slotValues) const;

    /// Whether the expression may still be true when only some slots are bound: false means
    /// that for every choice of the unbound slots within `ranges` (one per slot, as many as
    /// slotValues) it is false or raises, so a search can drop the partial choice
    /// ("P0 + P1 + P2 == 17" with P0 = 18 and every P >= 0). Interval arithmetic over the
    /// syntax tree, exact for what is bound; true whenever it cannot tell. Never throws.
    bool mayHold(const Value* slotValues, const SlotRange* ranges) const noexcept;

    /// Turns a failed status into the exception evaluate() would throw.
    ExprError errorFor(const EvalStatus& status) const;

    struct Program;

private:
    explicit Expression(std::shared_ptr<const Program> program);
    std::shared_ptr<const Program> m_program;
};

/// Parses T1's TuningParameter "Values" as Python's eval reads it (Kernel Tuner evaluates them
/// so): the list-building subset of Python. Lists and tuples ("[16, 32]", "(1, 2)", "1, 2"),
/// `+` and `*` on lists, range() with one to three arguments, list(), tuple(), sorted(), sum(),
/// len(), min(), max(), abs(), indexing and slicing, comprehensions and generator expressions
/// with several `for` and `if` clauses, nested ones too, and the arithmetic of conditions
/// ("[2**i for i in range(0, 6)]", "[1, 2] + list(range(32, 1025, 32))"). Strings own their text
/// in `strings` (stable addresses). Throws ExprError with the column on bad syntax, an unknown
/// name, a runtime error (Python's exception name) or a result that is not a flat list.
std::vector<Value> parseValueList(std::string_view source, std::vector<std::unique_ptr<std::string>>& strings);

} // namespace tilescope::expr
