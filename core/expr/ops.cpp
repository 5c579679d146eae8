// Python's semantics for the operators and builtins of the expression language.

#include "expr/internal.h"

#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace tilescope::expr::detail {

namespace {

constexpr double kTwo63 = 9223372036854775808.0; // 2^63, exactly representable

bool isIntLike(const Value& v) {
    return v.kind == Kind::Int || v.kind == Kind::Bool;
}

double toDouble(const Value& v) {
    return v.kind == Kind::Float ? v.f : static_cast<double>(v.i);
}

// Exact comparison of an int with a float, as Python does: -1 less, 0 equal, 1 greater;
// 2 when the float is NaN (unordered).
int compareIntFloat(std::int64_t i, double f) {
    if (std::isnan(f))
        return 2;
    if (f >= kTwo63)
        return -1;
    if (f < -kTwo63)
        return 1;
    const double fl = std::floor(f);
    const auto fi = static_cast<std::int64_t>(fl); // in range: -2^63 <= fl < 2^63
    if (i < fi)
        return -1;
    if (i > fi)
        return 1;
    return fl == f ? 0 : -1; // i == floor(f): less when f has a fraction
}

// -1, 0, 1 for ordered numbers; 2 for unordered (NaN).
int compareNumbers(const Value& a, const Value& b) {
    if (isIntLike(a) && isIntLike(b))
        return a.i < b.i ? -1 : (a.i > b.i ? 1 : 0);
    if (isIntLike(a))
        return compareIntFloat(a.i, b.f);
    if (isIntLike(b)) {
        const int c = compareIntFloat(b.i, a.f);
        return c == 2 ? 2 : -c;
    }
    if (a.f < b.f)
        return -1;
    if (a.f > b.f)
        return 1;
    if (a.f == b.f)
        return 0;
    return 2;
}

bool floatToInt(double f, std::int64_t& out, EvalStatus& st) {
    if (std::isnan(f))
        return fail(st, ErrorKind::Value, "cannot convert float NaN to integer");
    if (std::isinf(f))
        return fail(st, ErrorKind::Overflow, "cannot convert float infinity to integer");
    if (f >= kTwo63 || f < -kTwo63)
        return fail(st, ErrorKind::Overflow, "integer overflow: the result does not fit in 64 bits");
    out = static_cast<std::int64_t>(f);
    return true;
}

bool intOverflow(EvalStatus& st) {
    return fail(st, ErrorKind::Overflow, "integer overflow: the result does not fit in 64 bits");
}

bool intPow(std::int64_t base, std::int64_t exp, std::int64_t& out, EvalStatus& st) {
    std::int64_t result = 1;
    while (exp > 0) {
        if (exp & 1) {
            if (__builtin_mul_overflow(result, base, &result))
                return intOverflow(st);
        }
        exp >>= 1;
        if (exp > 0 && __builtin_mul_overflow(base, base, &base)) {
            // base^2 overflowed; the result overflows unless the remaining factors are trivial
            return intOverflow(st);
        }
    }
    out = result;
    return true;
}

bool floatPow(double a, double b, Value& out, EvalStatus& st) {
    if (a == 0.0 && b < 0.0)
        return fail(st, ErrorKind::ZeroDivision, "0.0 cannot be raised to a negative power");
    if (a < 0.0 && std::isfinite(b) && b != std::floor(b))
        return fail(st, ErrorKind::Value,
                    "a negative number raised to a fractional power is complex, which is not supported");
    const double r = std::pow(a, b);
    if (std::isinf(r) && std::isfinite(a) && std::isfinite(b))
        return fail(st, ErrorKind::Overflow, "numerical result out of range");
    out = Value::ofFloat(r);
    return true;
}

// Python's float floor division and modulo (Objects/floatobject.c: float_divmod).
void floatDivmod(double vx, double wx, double& floordiv, double& mod) {
    mod = std::fmod(vx, wx);
    double div = (vx - mod) / wx;
    if (mod != 0.0) {
        if ((wx < 0) != (mod < 0)) {
            mod += wx;
            div -= 1.0;
        }
    } else {
        mod = std::copysign(0.0, wx);
    }
    if (div != 0.0) {
        floordiv = std::floor(div);
        if (div - floordiv > 0.5)
            floordiv += 1.0;
    } else {
        floordiv = std::copysign(0.0, vx / wx);
    }
}

const char* unsupportedOperands(BinOp op) {
    switch (op) {
    case BinOp::Add:
        return "unsupported operand type(s) for +";
    case BinOp::Sub:
        return "unsupported operand type(s) for -";
    case BinOp::Mul:
        return "unsupported operand type(s) for *";
    case BinOp::TrueDiv:
        return "unsupported operand type(s) for /";
    case BinOp::FloorDiv:
        return "unsupported operand type(s) for //";
    case BinOp::Mod:
        return "unsupported operand type(s) for %";
    case BinOp::Pow:
        return "unsupported operand type(s) for **";
    case BinOp::BitAnd:
        return "unsupported operand type(s) for &";
    case BinOp::BitOr:
        return "unsupported operand type(s) for |";
    case BinOp::BitXor:
        return "unsupported operand type(s) for ^";
    case BinOp::LShift:
        return "unsupported operand type(s) for <<";
    case BinOp::RShift:
        return "unsupported operand type(s) for >>";
    }
    return "unsupported operand type(s)";
}

const char* unorderable(CmpOp op) {
    switch (op) {
    case CmpOp::Lt:
        return "'<' not supported between these types";
    case CmpOp::Le:
        return "'<=' not supported between these types";
    case CmpOp::Gt:
        return "'>' not supported between these types";
    case CmpOp::Ge:
        return "'>=' not supported between these types";
    default:
        return "comparison not supported between these types";
    }
}

// -1/0/1 ordering, 2 unordered (NaN); 3 when the types cannot be ordered.
int order(const Value& a, const Value& b) {
    if (a.isNumber() && b.isNumber())
        return compareNumbers(a, b);
    if (a.kind == Kind::Str && b.kind == Kind::Str) {
        const int c = a.s->compare(*b.s);
        return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    if (a.kind == Kind::List && b.kind == Kind::List) {
        const auto x = a.items();
        const auto y = b.items();
        const std::size_t n = std::min(x.size(), y.size());
        for (std::size_t i = 0; i < n; ++i) {
            if (equal(x[i], y[i]))
                continue;
            return order(x[i], y[i]);
        }
        return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
    }
    return 3;
}

bool valuesEqual(const Value& a, const Value& b) {
    if (a.isNumber() && b.isNumber())
        return compareNumbers(a, b) == 0;
    if (a.kind != b.kind)
        return false;
    if (a.kind == Kind::Str)
        return *a.s == *b.s;
    if (a.kind == Kind::List) {
        const auto x = a.items();
        const auto y = b.items();
        if (x.size() != y.size())
            return false;
        for (std::size_t i = 0; i < x.size(); ++i)
            if (!valuesEqual(x[i], y[i]))
                return false;
        return true;
    }
    return false;
}

bool parseIntText(const std::string& text, std::int64_t& out) {
    std::size_t b = 0, e = text.size();
    while (b < e && std::isspace(static_cast<unsigned char>(text[b])))
        ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1])))
        --e;
    std::string digits;
    for (std::size_t i = b; i < e; ++i) {
        const char c = text[i];
        if (c == '_' && i > b && i + 1 < e && std::isdigit(static_cast<unsigned char>(text[i - 1])) &&
            std::isdigit(static_cast<unsigned char>(text[i + 1])))
            continue;
        digits += c;
    }
    if (!digits.empty() && digits[0] == '+')
        digits.erase(0, 1);
    if (digits.empty())
        return false;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
    return ec == std::errc() && ptr == digits.data() + digits.size();
}

bool minMax(bool isMax, const Value* items, std::size_t n, Value& out, EvalStatus& st, bool fromList) {
    if (n == 0)
        return fail(st, ErrorKind::Value,
                    fromList ? (isMax ? "max() arg is an empty sequence" : "min() arg is an empty sequence")
                             : "min()/max() expected at least 1 argument");
    Value best = items[0];
    for (std::size_t i = 1; i < n; ++i) {
        bool better = false;
        if (!compareOp(isMax ? CmpOp::Gt : CmpOp::Lt, items[i], best, better, st))
            return false;
        if (better)
            best = items[i];
    }
    out = best;
    return true;
}

} // namespace

bool binaryOp(BinOp op, const Value& a, const Value& b, Value& out, EvalStatus& st) {
    if (!a.isNumber() || !b.isNumber()) {
        if (op == BinOp::Add && a.kind == b.kind && (a.kind == Kind::Str || a.kind == Kind::List))
            return fail(st, ErrorKind::Type, "concatenation of strings or lists is not supported");
        return fail(st, ErrorKind::Type, unsupportedOperands(op));
    }
    const bool ints = isIntLike(a) && isIntLike(b);
    switch (op) {
    case BinOp::Add:
    case BinOp::Sub:
    case BinOp::Mul:
        if (ints) {
            std::int64_t r;
            const bool overflow = op == BinOp::Add   ? __builtin_add_overflow(a.i, b.i, &r)
                                  : op == BinOp::Sub ? __builtin_sub_overflow(a.i, b.i, &r)
                                                     : __builtin_mul_overflow(a.i, b.i, &r);
            if (overflow)
                return intOverflow(st);
            out = Value::ofInt(r);
        } else {
            const double x = toDouble(a), y = toDouble(b);
            out = Value::ofFloat(op == BinOp::Add ? x + y : op == BinOp::Sub ? x - y : x * y);
        }
        return true;
    case BinOp::TrueDiv: {
        const double y = toDouble(b);
        if (y == 0.0)
            return fail(st, ErrorKind::ZeroDivision, ints ? "division by zero" : "float division by zero");
        out = Value::ofFloat(toDouble(a) / y);
        return true;
    }
    case BinOp::FloorDiv:
    case BinOp::Mod:
        if (ints) {
            if (b.i == 0)
                return fail(st, ErrorKind::ZeroDivision, "integer division or modulo by zero");
            if (b.i == -1) {
                if (op == BinOp::Mod) {
                    out = Value::ofInt(0);
                    return true;
                }
                if (a.i == INT64_MIN)
                    return intOverflow(st);
                out = Value::ofInt(-a.i);
                return true;
            }
            std::int64_t q = a.i / b.i;
            std::int64_t r = a.i % b.i;
            if (r != 0 && ((r < 0) != (b.i < 0))) {
                --q;
                r += b.i;
            }
            out = Value::ofInt(op == BinOp::FloorDiv ? q : r);
        } else {
            const double x = toDouble(a), y = toDouble(b);
            if (y == 0.0)
                return fail(st, ErrorKind::ZeroDivision,
                            op == BinOp::FloorDiv ? "float floor division by zero" : "float modulo");
            double q, m;
            floatDivmod(x, y, q, m);
            out = Value::ofFloat(op == BinOp::FloorDiv ? q : m);
        }
        return true;
    case BinOp::Pow:
        if (ints && b.i >= 0) {
            std::int64_t r;
            if (!intPow(a.i, b.i, r, st))
                return false;
            out = Value::ofInt(r);
            return true;
        }
        return floatPow(toDouble(a), toDouble(b), out, st);
    case BinOp::BitAnd:
    case BinOp::BitOr:
    case BinOp::BitXor: {
        if (!ints)
            return fail(st, ErrorKind::Type, unsupportedOperands(op));
        const std::int64_t r = op == BinOp::BitAnd ? (a.i & b.i) : op == BinOp::BitOr ? (a.i | b.i) : (a.i ^ b.i);
        out = (a.kind == Kind::Bool && b.kind == Kind::Bool) ? Value::ofBool(r != 0) : Value::ofInt(r);
        return true;
    }
    case BinOp::LShift:
    case BinOp::RShift:
        if (!ints)
            return fail(st, ErrorKind::Type, unsupportedOperands(op));
        if (b.i < 0)
            return fail(st, ErrorKind::Value, "negative shift count");
        if (op == BinOp::RShift) {
            out = Value::ofInt(b.i >= 64 ? (a.i < 0 ? -1 : 0) : (a.i >> b.i));
            return true;
        }
        if (a.i == 0) {
            out = Value::ofInt(0);
            return true;
        }
        if (b.i >= 64) // (a shift by 64 or more is undefined in C++; 63 is checked below)
            return intOverflow(st);
        {
            const std::int64_t r = static_cast<std::int64_t>(static_cast<std::uint64_t>(a.i) << b.i);
            if ((r >> b.i) != a.i)
                return intOverflow(st);
            out = Value::ofInt(r);
        }
        return true;
    }
    return fail(st, ErrorKind::Type, "unknown operator");
}

bool unaryOp(UnOp op, const Value& a, Value& out, EvalStatus& st) {
    if (op == UnOp::Not) {
        out = Value::ofBool(!truthy(a));
        return true;
    }
    if (!a.isNumber())
        return fail(st, ErrorKind::Type,
                    op == UnOp::Neg   ? "bad operand type for unary -"
                    : op == UnOp::Pos ? "bad operand type for unary +"
                                      : "bad operand type for unary ~");
    switch (op) {
    case UnOp::Neg:
        if (a.kind == Kind::Float) {
            out = Value::ofFloat(-a.f);
        } else {
            if (a.i == INT64_MIN)
                return intOverflow(st);
            out = Value::ofInt(-a.i);
        }
        return true;
    case UnOp::Pos:
        out = a.kind == Kind::Float ? a : Value::ofInt(a.i);
        return true;
    case UnOp::Invert:
        if (a.kind == Kind::Float)
            return fail(st, ErrorKind::Type, "bad operand type for unary ~: 'float'");
        out = Value::ofInt(~a.i);
        return true;
    case UnOp::Not:
        break;
    }
    return true;
}

bool compareOp(CmpOp op, const Value& a, const Value& b, bool& out, EvalStatus& st) {
    switch (op) {
    case CmpOp::Eq:
        out = valuesEqual(a, b);
        return true;
    case CmpOp::Ne:
        out = !valuesEqual(a, b);
        return true;
    case CmpOp::In:
    case CmpOp::NotIn: {
        bool found = false;
        if (b.kind == Kind::List) {
            for (const Value& item : b.items())
                if (valuesEqual(a, item)) {
                    found = true;
                    break;
                }
        } else if (b.kind == Kind::Str) {
            if (a.kind != Kind::Str)
                return fail(st, ErrorKind::Type, "'in <string>' requires string as left operand");
            found = b.s->find(*a.s) != std::string::npos;
        } else {
            return fail(st, ErrorKind::Type, "argument of type 'int', 'float' or 'bool' is not iterable");
        }
        out = op == CmpOp::In ? found : !found;
        return true;
    }
    default:
        break;
    }
    const int c = order(a, b);
    if (c == 3)
        return fail(st, ErrorKind::Type, unorderable(op));
    if (c == 2) { // NaN: every ordering comparison is false
        out = false;
        return true;
    }
    switch (op) {
    case CmpOp::Lt:
        out = c < 0;
        break;
    case CmpOp::Le:
        out = c <= 0;
        break;
    case CmpOp::Gt:
        out = c > 0;
        break;
    case CmpOp::Ge:
        out = c >= 0;
        break;
    default:
        break;
    }
    return true;
}

bool subscript(const Value& container, const Value& index, Value& out, EvalStatus& st) {
    if (container.kind != Kind::List)
        return fail(st, ErrorKind::Type,
                    container.kind == Kind::Str ? "indexing strings is not supported" : "object is not subscriptable");
    if (!isIntLike(index))
        return fail(st, ErrorKind::Type, "list indices must be integers");
    const auto n = static_cast<std::int64_t>(container.listSize());
    std::int64_t i = index.i;
    if (i < 0)
        i += n;
    if (i < 0 || i >= n)
        return fail(st, ErrorKind::Index, "list index out of range");
    out = container.items()[static_cast<std::size_t>(i)];
    return true;
}

bool callBuiltin(Builtin b, const Value* args, int argc, Value& out, EvalStatus& st) {
    auto needNumber = [&](const Value& v, const char* message) {
        if (v.isNumber())
            return true;
        return fail(st, ErrorKind::Type, message);
    };
    switch (b) {
    case Builtin::Min:
    case Builtin::Max: {
        const bool isMax = b == Builtin::Max;
        if (argc == 1) {
            if (args[0].kind != Kind::List)
                return fail(st, ErrorKind::Type, "min()/max() of a single argument needs a list");
            const auto items = args[0].items();
            return minMax(isMax, items.data(), items.size(), out, st, true);
        }
        return minMax(isMax, args, static_cast<std::size_t>(argc), out, st, false);
    }
    case Builtin::Abs:
        if (!needNumber(args[0], "bad operand type for abs()"))
            return false;
        if (args[0].kind == Kind::Float) {
            out = Value::ofFloat(std::fabs(args[0].f));
        } else {
            if (args[0].i == INT64_MIN)
                return intOverflow(st);
            out = Value::ofInt(args[0].i < 0 ? -args[0].i : args[0].i);
        }
        return true;
    case Builtin::Ceil:
    case Builtin::Floor: {
        if (!needNumber(args[0], "must be a real number"))
            return false;
        if (isIntLike(args[0])) {
            out = Value::ofInt(args[0].i);
            return true;
        }
        std::int64_t r;
        if (!floatToInt(b == Builtin::Ceil ? std::ceil(args[0].f) : std::floor(args[0].f), r, st))
            return false;
        out = Value::ofInt(r);
        return true;
    }
    case Builtin::Log2:
    case Builtin::Sqrt: {
        if (!needNumber(args[0], "must be a real number"))
            return false;
        const double x = toDouble(args[0]);
        if (b == Builtin::Log2 ? !(x > 0.0) : x < 0.0)
            return fail(st, ErrorKind::Value, "math domain error");
        out = Value::ofFloat(b == Builtin::Log2 ? std::log2(x) : std::sqrt(x));
        return true;
    }
    case Builtin::Int: {
        const Value& v = args[0];
        if (isIntLike(v)) {
            out = Value::ofInt(v.i);
            return true;
        }
        if (v.kind == Kind::Float) {
            std::int64_t r;
            if (!floatToInt(std::trunc(v.f), r, st))
                return false;
            out = Value::ofInt(r);
            return true;
        }
        if (v.kind == Kind::Str) {
            std::int64_t r;
            if (!parseIntText(*v.s, r))
                return fail(st, ErrorKind::Value, "invalid literal for int() with base 10");
            out = Value::ofInt(r);
            return true;
        }
        return fail(st, ErrorKind::Type, "int() argument must be a string or a number");
    }
    case Builtin::Float: {
        const Value& v = args[0];
        if (v.isNumber()) {
            out = Value::ofFloat(toDouble(v));
            return true;
        }
        if (v.kind == Kind::Str) {
            std::string text = *v.s;
            char* end = nullptr;
            errno = 0;
            const double r = std::strtod(text.c_str(), &end);
            while (end && *end && std::isspace(static_cast<unsigned char>(*end)))
                ++end;
            if (end == text.c_str() || (end && *end))
                return fail(st, ErrorKind::Value, "could not convert string to float");
            out = Value::ofFloat(r);
            return true;
        }
        return fail(st, ErrorKind::Type, "float() argument must be a string or a number");
    }
    case Builtin::Round: {
        if (!needNumber(args[0], "type doesn't define __round__"))
            return false;
        if (isIntLike(args[0])) {
            out = Value::ofInt(args[0].i);
            return true;
        }
        std::int64_t r;
        if (!floatToInt(std::nearbyint(args[0].f), r, st)) // the default rounding mode: half to even
            return false;
        out = Value::ofInt(r);
        return true;
    }
    case Builtin::Len:
        if (args[0].kind == Kind::List) {
            out = Value::ofInt(static_cast<std::int64_t>(args[0].listSize()));
            return true;
        }
        if (args[0].kind == Kind::Str) {
            out = Value::ofInt(static_cast<std::int64_t>(args[0].s->size()));
            return true;
        }
        return fail(st, ErrorKind::Type, "object has no len()");
    case Builtin::Pow:
        return binaryOp(BinOp::Pow, args[0], args[1], out, st);
    case Builtin::Bool:
        out = Value::ofBool(argc == 0 ? false : truthy(args[0]));
        return true;
    case Builtin::List:
    case Builtin::Tuple:
        if (args[0].kind != Kind::List)
            return fail(st, ErrorKind::Type,
                        b == Builtin::List ? "list() needs a list, a tuple or a range"
                                           : "tuple() needs a list, a tuple or a range");
        out = args[0];
        return true;
    case Builtin::Sum: {
        if (args[0].kind != Kind::List)
            return fail(st, ErrorKind::Type, "sum() needs a list of numbers");
        Value total = Value::ofInt(0);
        for (const Value& item : args[0].items()) {
            if (!item.isNumber())
                return fail(st, ErrorKind::Type, "unsupported operand type(s) for +: sum() of a non-number");
            if (!binaryOp(BinOp::Add, total, item, total, st))
                return false;
        }
        out = total;
        return true;
    }
    case Builtin::Range:
    case Builtin::Sorted:
        break; // they make lists: evaluated at compile time
    }
    return fail(st, ErrorKind::Type, "this function cannot be called here");
}

const char* binOpText(BinOp op) {
    static const char* texts[] = {"+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<<", ">>"};
    return texts[static_cast<int>(op)];
}

const char* cmpOpText(CmpOp op) {
    static const char* texts[] = {"<", "<=", "==", "!=", ">", ">=", "in", "not in"};
    return texts[static_cast<int>(op)];
}

namespace {
struct BuiltinEntry {
    const char* name;
    Builtin builtin;
};
constexpr BuiltinEntry kBuiltins[] = {
    {"min", Builtin::Min},     {"max", Builtin::Max},       {"abs", Builtin::Abs},   {"ceil", Builtin::Ceil},
    {"floor", Builtin::Floor}, {"log2", Builtin::Log2},     {"sqrt", Builtin::Sqrt}, {"int", Builtin::Int},
    {"float", Builtin::Float}, {"round", Builtin::Round},   {"len", Builtin::Len},   {"pow", Builtin::Pow},
    {"bool", Builtin::Bool},   {"range", Builtin::Range},   {"list", Builtin::List}, {"tuple", Builtin::Tuple},
    {"sum", Builtin::Sum},     {"sorted", Builtin::Sorted},
};
} // namespace

} // namespace tilescope::expr::detail

namespace tilescope::expr {
const std::vector<std::string>& builtinNames() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const auto& e : detail::kBuiltins)
            out.emplace_back(e.name);
        return out;
    }();
    return names;
}
} // namespace tilescope::expr

namespace tilescope::expr::detail {

const char* builtinName(Builtin b) {
    for (const auto& e : kBuiltins)
        if (e.builtin == b)
            return e.name;
    return "?";
}

bool lookupBuiltin(std::string_view name, Builtin& out) {
    for (const auto& e : kBuiltins)
        if (name == e.name) {
            out = e.builtin;
            return true;
        }
    return false;
}

} // namespace tilescope::expr::detail
