// Whether an expression may still hold while some of its variables are unchosen: interval
// arithmetic over the syntax tree. A config space binds its parameters one at a time and checks
// a condition once all of its parameters are bound; a condition over many parameters with many
// values ("P0 + P1 + P2 + P3 + P4 == 17" over range(1000) each) is then checked on every
// combination of them, 10^15 here. Bounding it on partial configs (P0 = 18 leaves no
// completion) cuts those subtrees at the first level that decides them.
//
// Soundness is what matters: "cannot hold" must be true for every completion, so every rule
// here over-approximates the values a subexpression can take (an evaluation that raises counts
// as false, which only removes values). What is bound is evaluated exactly with the runtime's
// own operations; integer intervals stay within 2^52, where doubles are exact; float bounds rely
// on IEEE rounding being monotone (fl(x) <= fl(y) when x <= y), so endpoint formulas bound the
// rounded results too.

#include "expr/internal.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tilescope::expr::detail {

namespace {

// Beyond this, an integer interval is given up: its doubles would round.
constexpr double kExactLimit = 4503599627370496.0; // 2^52

// The abstract value of a subexpression.
struct Abs {
    enum class Tag : std::uint8_t { Exact, Interval, Unknown };
    Tag tag = Tag::Unknown;
    Value value;           // Exact
    double lo = 0, hi = 0; // Interval: finite, lo <= hi
    bool integral = false; // Interval: every value an int or a bool
    bool canTrue = true;   // Unknown: whether its value may be truthy / falsy
    bool canFalse = true;

    static Abs exact(Value v) {
        Abs a;
        a.tag = Tag::Exact;
        a.value = v;
        return a;
    }
    static Abs unknown(bool t = true, bool f = true) {
        Abs a;
        a.canTrue = t;
        a.canFalse = f;
        if (!t && !f) // no value at all (every path raises): any value is still a bound
            a.canTrue = a.canFalse = true;
        return a;
    }
    static Abs interval(double lo, double hi, bool integral) {
        if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi ||
            (integral && (std::fabs(lo) > kExactLimit || std::fabs(hi) > kExactLimit)))
            return unknown();
        Abs a;
        a.tag = Tag::Interval;
        a.lo = lo;
        a.hi = hi;
        a.integral = integral;
        return a;
    }
    // A bool that is true (t), false (f) or either.
    static Abs boolean(bool t, bool f) {
        if (t && !f)
            return exact(Value::ofBool(true));
        if (f && !t)
            return exact(Value::ofBool(false));
        return interval(0, 1, true);
    }

    bool mayBeTrue() const {
        switch (tag) {
        case Tag::Exact:
            return truthy(value);
        case Tag::Interval:
            return !(lo == 0 && hi == 0);
        case Tag::Unknown:
            break;
        }
        return canTrue;
    }
    bool mayBeFalse() const {
        switch (tag) {
        case Tag::Exact:
            return !truthy(value);
        case Tag::Interval:
            return lo <= 0 && 0 <= hi;
        case Tag::Unknown:
            break;
        }
        return canFalse;
    }
};

// The numbers an abstract value may be, as an interval; false when it is not only numbers.
bool asInterval(const Abs& a, double& lo, double& hi, bool& integral) {
    if (a.tag == Abs::Tag::Interval) {
        lo = a.lo;
        hi = a.hi;
        integral = a.integral;
        return true;
    }
    if (a.tag != Abs::Tag::Exact || !a.value.isNumber())
        return false;
    if (a.value.kind == Kind::Float) {
        if (!std::isfinite(a.value.f))
            return false;
        lo = hi = a.value.f;
        integral = false;
        return true;
    }
    const auto v = static_cast<double>(a.value.i);
    if (std::fabs(v) > kExactLimit)
        return false;
    lo = hi = v;
    integral = true;
    return true;
}

struct Iv {
    double lo = 0, hi = 0;
    bool integral = false;
};

bool ivOf(const Abs& a, Iv& out) {
    return asInterval(a, out.lo, out.hi, out.integral);
}

Abs hull(const Abs& a, const Abs& b) {
    Iv x, y;
    if (ivOf(a, x) && ivOf(b, y))
        return Abs::interval(std::min(x.lo, y.lo), std::max(x.hi, y.hi), x.integral && y.integral);
    return Abs::unknown(a.mayBeTrue() || b.mayBeTrue(), a.mayBeFalse() || b.mayBeFalse());
}

Abs corners(double a, double b, double c, double d, bool integral) {
    return Abs::interval(std::min({a, b, c, d}), std::max({a, b, c, d}), integral);
}

// floor(x / y) for integral doubles within 2^52 (y != 0), as Python's //.
double floorDivIntegral(double x, double y) {
    const auto a = static_cast<std::int64_t>(x), b = static_cast<std::int64_t>(y);
    std::int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        --q;
    return static_cast<double>(q);
}

// The smallest 2^k - 1 at least v (v >= 0, within 2^52).
double allOnesAbove(double v) {
    double m = 0;
    while (m < v)
        m = m * 2 + 1;
    return m;
}

Abs intervalBinary(BinOp op, const Iv& x, const Iv& y) {
    const bool ints = x.integral && y.integral;
    switch (op) {
    case BinOp::Add:
        return Abs::interval(x.lo + y.lo, x.hi + y.hi, ints);
    case BinOp::Sub:
        return Abs::interval(x.lo - y.hi, x.hi - y.lo, ints);
    case BinOp::Mul:
        return corners(x.lo * y.lo, x.lo * y.hi, x.hi * y.lo, x.hi * y.hi, ints);
    case BinOp::TrueDiv:
        if (y.lo <= 0 && 0 <= y.hi)
            return Abs::unknown();
        return corners(x.lo / y.lo, x.lo / y.hi, x.hi / y.lo, x.hi / y.hi, false);
    case BinOp::FloorDiv:
        if (y.lo <= 0 && 0 <= y.hi)
            return Abs::unknown();
        if (ints) // floor(x / y) is monotone in x / y, whose extremes over the box are its corners
            return corners(floorDivIntegral(x.lo, y.lo), floorDivIntegral(x.lo, y.hi), floorDivIntegral(x.hi, y.lo),
                           floorDivIntegral(x.hi, y.hi), true);
        {
            // A float quotient may round across an integer: one more on each side.
            const Abs q = corners(x.lo / y.lo, x.lo / y.hi, x.hi / y.lo, x.hi / y.hi, false);
            if (q.tag != Abs::Tag::Interval)
                return q;
            return Abs::interval(std::floor(q.lo) - 1, std::floor(q.hi) + 1, false);
        }
    case BinOp::Mod: {
        // Python's remainder takes the divisor's sign and is smaller than it in magnitude (a
        // float remainder may round up to it). A divisor of 0 raises, which adds no value.
        const double m = std::max(std::fabs(y.lo), std::fabs(y.hi));
        if (ints && y.lo > 0 && x.lo >= 0 && x.hi < y.lo)
            return Abs::interval(x.lo, x.hi, true); // the remainder is x itself
        if (y.lo > 0) {
            double hi = ints ? y.hi - 1 : y.hi;
            if (x.lo >= 0)
                hi = std::min(hi, x.hi);
            return Abs::interval(0, hi, ints);
        }
        if (y.hi < 0)
            return Abs::interval(ints ? y.lo + 1 : y.lo, 0, ints);
        return Abs::interval(-m, m, ints);
    }
    case BinOp::Pow:
        // Integral powers with a non-negative exponent grow with a base of at least 1; a base of
        // 0 gives 0 or 1 (0**0).
        if (!ints || y.lo < 0 || x.lo < 0)
            return Abs::unknown();
        {
            const double top = std::pow(std::max(x.hi, 1.0), y.hi);
            if (x.lo >= 1)
                return Abs::interval(std::pow(x.lo, y.lo), top, true);
            return Abs::interval(0, top, true);
        }
    case BinOp::BitAnd:
        if (!ints || x.lo < 0 || y.lo < 0)
            return Abs::unknown();
        return Abs::interval(0, std::min(x.hi, y.hi), true);
    case BinOp::BitOr:
    case BinOp::BitXor:
        if (!ints || x.lo < 0 || y.lo < 0)
            return Abs::unknown();
        return Abs::interval(op == BinOp::BitOr ? std::max(x.lo, y.lo) : 0, allOnesAbove(std::max(x.hi, y.hi)), true);
    case BinOp::LShift:
        if (!ints || x.lo < 0 || y.lo < 0 || y.hi > 52)
            return Abs::unknown();
        return Abs::interval(std::ldexp(x.lo, static_cast<int>(y.lo)), std::ldexp(x.hi, static_cast<int>(y.hi)), true);
    case BinOp::RShift:
        if (!ints || x.lo < 0 || y.lo < 0)
            return Abs::unknown();
        return Abs::interval(std::floor(std::ldexp(x.lo, -static_cast<int>(std::min(y.hi, 60.0)))),
                             std::floor(std::ldexp(x.hi, -static_cast<int>(std::min(y.lo, 60.0)))), true);
    }
    return Abs::unknown();
}

// Whether `a op b` may be true and may be false.
void compareOutcomes(CmpOp op, const Abs& a, const Abs& b, bool& t, bool& f) {
    t = f = true;
    if (a.tag == Abs::Tag::Exact && b.tag == Abs::Tag::Exact) {
        bool r = false;
        EvalStatus st;
        if (!compareOp(op, a.value, b.value, r, st)) {
            t = f = false; // it raises: no outcome
            return;
        }
        t = r;
        f = !r;
        return;
    }
    if (op == CmpOp::In || op == CmpOp::NotIn) {
        if (b.tag != Abs::Tag::Exact || b.value.kind != Kind::List)
            return;
        Iv x;
        if (!ivOf(a, x))
            return;
        bool found = false, surely = false; // some item may equal x; one surely does
        for (const Value& item : b.value.items()) {
            Iv y;
            if (!ivOf(Abs::exact(item), y))
                continue; // a string or a list never equals a number
            if (y.lo >= x.lo && y.lo <= x.hi && !(x.integral && y.lo != std::floor(y.lo))) {
                found = true;
                surely = surely || (x.lo == x.hi && y.lo == x.lo);
            }
        }
        const bool inT = found, inF = !surely;
        t = op == CmpOp::In ? inT : inF;
        f = op == CmpOp::In ? inF : inT;
        return;
    }
    Iv x, y;
    const bool xNum = ivOf(a, x), yNum = ivOf(b, y);
    if (op == CmpOp::Eq || op == CmpOp::Ne) {
        bool never = false;
        // An int never equals a float with a fraction.
        const auto fractional = [](const Iv& v) { return v.lo == v.hi && v.lo != std::floor(v.lo); };
        if (xNum && yNum)
            never = x.hi < y.lo || y.hi < x.lo || (x.integral && fractional(y)) || (y.integral && fractional(x));
        else if ((xNum && b.tag == Abs::Tag::Exact && !b.value.isNumber()) ||
                 (yNum && a.tag == Abs::Tag::Exact && !a.value.isNumber()))
            never = true; // a number never equals a string or a list
        const bool always = xNum && yNum && x.lo == x.hi && y.lo == y.hi && x.lo == y.lo;
        const bool eqT = !never, eqF = !always;
        t = op == CmpOp::Eq ? eqT : eqF;
        f = op == CmpOp::Eq ? eqF : eqT;
        return;
    }
    if (!xNum || !yNum)
        return;
    switch (op) {
    case CmpOp::Lt:
        t = x.lo < y.hi;
        f = x.hi >= y.lo;
        break;
    case CmpOp::Le:
        t = x.lo <= y.hi;
        f = x.hi > y.lo;
        break;
    case CmpOp::Gt:
        t = x.hi > y.lo;
        f = x.lo <= y.hi;
        break;
    case CmpOp::Ge:
        t = x.hi >= y.lo;
        f = x.lo < y.hi;
        break;
    default:
        break;
    }
}

class Bounds {
public:
    Bounds(const Value* slots, const SlotRange* ranges)
        : m_slots(slots)
        , m_ranges(ranges) {}

    Abs eval(const Node& node) const {
        switch (node.kind) {
        case NodeKind::Const:
            return Abs::exact(node.value);
        case NodeKind::Slot: {
            const SlotRange& r = m_ranges[node.slot];
            if (r.bound)
                return Abs::exact(m_slots[node.slot]);
            if (!r.numeric)
                return Abs::unknown();
            return Abs::interval(r.lo, r.hi, r.integral);
        }
        case NodeKind::Binary:
            return binary(node);
        case NodeKind::Unary:
            return unary(node);
        case NodeKind::Compare:
            return compare(node);
        case NodeKind::And:
        case NodeKind::Or:
            return logical(node);
        case NodeKind::IfElse: {
            const Abs test = eval(*node.kids[1]);
            const bool t = test.mayBeTrue(), f = test.mayBeFalse();
            if (t && !f)
                return eval(*node.kids[0]);
            if (f && !t)
                return eval(*node.kids[2]);
            return hull(eval(*node.kids[0]), eval(*node.kids[2]));
        }
        case NodeKind::Call:
            return call(node);
        case NodeKind::Subscript: {
            const Abs container = eval(*node.kids[0]);
            const Abs index = eval(*node.kids[1]);
            Value out;
            EvalStatus st;
            if (container.tag == Abs::Tag::Exact && index.tag == Abs::Tag::Exact &&
                subscript(container.value, index.value, out, st))
                return Abs::exact(out);
            return Abs::unknown();
        }
        case NodeKind::ListDisplay:   // a list of values: only its items are bounded (in, min, max, sum)
        case NodeKind::Comprehension: // loops over lists: beyond intervals
        case NodeKind::Local:
        case NodeKind::Slice:
            break;
        }
        return Abs::unknown();
    }

private:
    Abs binary(const Node& node) const {
        const Abs a = eval(*node.kids[0]);
        const Abs b = eval(*node.kids[1]);
        if (a.tag == Abs::Tag::Exact && b.tag == Abs::Tag::Exact) {
            Value out;
            EvalStatus st;
            if (binaryOp(node.binOp, a.value, b.value, out, st))
                return Abs::exact(out);
            return Abs::unknown(); // raises (or makes a list): nothing to bound
        }
        Iv x, y;
        if (!ivOf(a, x) || !ivOf(b, y))
            return Abs::unknown();
        return intervalBinary(node.binOp, x, y);
    }

    Abs unary(const Node& node) const {
        const Abs a = eval(*node.kids[0]);
        if (a.tag == Abs::Tag::Exact) {
            Value out;
            EvalStatus st;
            return unaryOp(node.unOp, a.value, out, st) ? Abs::exact(out) : Abs::unknown();
        }
        if (node.unOp == UnOp::Not)
            return Abs::boolean(a.mayBeFalse(), a.mayBeTrue());
        Iv x;
        if (!ivOf(a, x))
            return Abs::unknown();
        switch (node.unOp) {
        case UnOp::Neg:
            return Abs::interval(-x.hi, -x.lo, x.integral);
        case UnOp::Pos:
            return Abs::interval(x.lo, x.hi, x.integral);
        case UnOp::Invert: // ~v is -v - 1 for ints (a float raises)
            return x.integral ? Abs::interval(-x.hi - 1, -x.lo - 1, true) : Abs::unknown();
        case UnOp::Not:
            break;
        }
        return Abs::unknown();
    }

    Abs compare(const Node& node) const {
        // a < b < c is (a < b) and (b < c): true only if every pair may be, false if any may be.
        bool allTrue = true, anyFalse = false;
        Abs left = eval(*node.kids[0]);
        for (std::size_t i = 0; i < node.cmpOps.size(); ++i) {
            const Node& rightNode = *node.kids[i + 1];
            const CmpOp op = node.cmpOps[i];
            bool t = true, f = true;
            if ((op == CmpOp::In || op == CmpOp::NotIn) && rightNode.kind == NodeKind::ListDisplay) {
                inDisplay(op, left, rightNode, t, f);
                left = Abs::unknown(); // a list: what a further link of the chain compares is not bounded
            } else {
                const Abs right = eval(rightNode);
                compareOutcomes(op, left, right, t, f);
                left = right;
            }
            allTrue = allTrue && t;
            anyFalse = anyFalse || f;
            if (!t) // False from here on: the rest is not evaluated
                break;
        }
        return Abs::boolean(allTrue, anyFalse);
    }

    // x in [a, b, ...] with items that are expressions.
    void inDisplay(CmpOp op, const Abs& x, const Node& display, bool& t, bool& f) const {
        bool found = false;
        for (const auto& kid : display.kids) {
            bool eqT = true, eqF = true;
            compareOutcomes(CmpOp::Eq, x, eval(*kid), eqT, eqF);
            if (eqT) {
                found = true;
                break;
            }
        }
        t = op == CmpOp::In ? found : true;
        f = op == CmpOp::In ? true : found;
    }

    Abs logical(const Node& node) const {
        // `a and b` is a when a is falsy, else b: its value is one of its operands'.
        const bool isAnd = node.kind == NodeKind::And;
        bool canT = false, canF = false;
        bool priorDecided = true; // every earlier operand surely passed on to the next
        for (std::size_t i = 0; i < node.kids.size(); ++i) {
            const Abs a = eval(*node.kids[i]);
            const bool last = i + 1 == node.kids.size();
            const bool stops = isAnd ? a.mayBeFalse() : a.mayBeTrue();  // may be the result
            const bool passes = isAnd ? a.mayBeTrue() : a.mayBeFalse(); // may go on
            if (priorDecided && (last || !passes))
                return a; // the result is exactly this operand's value
            if (last) {
                canT = canT || a.mayBeTrue();
                canF = canF || a.mayBeFalse();
                break;
            }
            if (stops) {
                // Stopping here gives a falsy value for `and`, a truthy one for `or`.
                (isAnd ? canF : canT) = true;
            }
            if (!passes)
                break;
            priorDecided = priorDecided && !stops;
        }
        return Abs::unknown(canT, canF);
    }

    Abs call(const Node& node) const {
        const Builtin b = node.builtin;
        // min/max/sum of a list display bound by its items; of two or more arguments, by them.
        const std::vector<std::unique_ptr<Node>>* items = &node.kids;
        bool fromDisplay = false;
        if (node.kids.size() == 1 && node.kids[0]->kind == NodeKind::ListDisplay &&
            (b == Builtin::Min || b == Builtin::Max || b == Builtin::Sum)) {
            items = &node.kids[0]->kids;
            fromDisplay = true;
        }
        std::vector<Abs> args;
        args.reserve(items->size());
        bool allExact = true;
        for (const auto& kid : *items) {
            args.push_back(eval(*kid));
            allExact = allExact && args.back().tag == Abs::Tag::Exact;
        }
        if (allExact && !fromDisplay && b != Builtin::Range && b != Builtin::Sorted) {
            std::vector<Value> values;
            values.reserve(args.size());
            for (const Abs& a : args)
                values.push_back(a.value);
            Value out;
            EvalStatus st;
            if (callBuiltin(b, values.data(), static_cast<int>(values.size()), out, st))
                return Abs::exact(out);
            return Abs::unknown();
        }
        std::vector<Iv> iv(args.size());
        for (std::size_t i = 0; i < args.size(); ++i)
            if (!ivOf(args[i], iv[i]))
                return b == Builtin::Bool && args.size() == 1 ? Abs::boolean(args[0].mayBeTrue(), args[0].mayBeFalse())
                                                              : Abs::unknown();
        if (iv.empty())
            return Abs::unknown();
        const Iv& x = iv[0];
        switch (b) {
        case Builtin::Min:
        case Builtin::Max: {
            if (iv.size() < 2 && !fromDisplay)
                return Abs::unknown(); // min(list variable)
            Iv r = x;
            for (const Iv& y : iv) {
                r.lo = b == Builtin::Min ? std::min(r.lo, y.lo) : std::max(r.lo, y.lo);
                r.hi = b == Builtin::Min ? std::min(r.hi, y.hi) : std::max(r.hi, y.hi);
                r.integral = r.integral && y.integral;
            }
            return Abs::interval(r.lo, r.hi, r.integral);
        }
        case Builtin::Sum: {
            if (!fromDisplay)
                return Abs::unknown();
            Iv r{0, 0, true};
            for (const Iv& y : iv) {
                r.lo += y.lo;
                r.hi += y.hi;
                r.integral = r.integral && y.integral;
            }
            return Abs::interval(r.lo, r.hi, r.integral);
        }
        case Builtin::Abs:
            if (x.lo >= 0)
                return Abs::interval(x.lo, x.hi, x.integral);
            if (x.hi <= 0)
                return Abs::interval(-x.hi, -x.lo, x.integral);
            return Abs::interval(0, std::max(-x.lo, x.hi), x.integral);
        case Builtin::Ceil:
            return Abs::interval(std::ceil(x.lo), std::ceil(x.hi), true);
        case Builtin::Floor:
            return Abs::interval(std::floor(x.lo), std::floor(x.hi), true);
        case Builtin::Int:
            return Abs::interval(std::trunc(x.lo), std::trunc(x.hi), true);
        case Builtin::Round:
            if (iv.size() != 1)
                return Abs::unknown();
            return Abs::interval(std::floor(x.lo), std::ceil(x.hi), true);
        case Builtin::Float:
            return Abs::interval(x.lo, x.hi, false);
        case Builtin::Log2:
        case Builtin::Sqrt: {
            // libm's log2 need not be monotone to the last bit: one step outwards on each side.
            if (b == Builtin::Log2 ? !(x.lo > 0) : x.lo < 0)
                return Abs::unknown();
            const double inf = std::numeric_limits<double>::infinity();
            if (b == Builtin::Sqrt)
                return Abs::interval(std::sqrt(x.lo), std::sqrt(x.hi), false);
            return Abs::interval(std::nextafter(std::log2(x.lo), -inf), std::nextafter(std::log2(x.hi), inf), false);
        }
        case Builtin::Pow:
            return iv.size() == 2 ? intervalBinary(BinOp::Pow, iv[0], iv[1]) : Abs::unknown();
        case Builtin::Bool:
            return Abs::boolean(args[0].mayBeTrue(), args[0].mayBeFalse());
        default:
            break;
        }
        return Abs::unknown();
    }

    const Value* m_slots;
    const SlotRange* m_ranges;
};

} // namespace

} // namespace tilescope::expr::detail

namespace tilescope::expr {

bool Expression::mayHold(const Value* slotValues, const SlotRange* ranges) const noexcept {
    if (!m_program || !m_program->root())
        return true;
    try {
        return detail::Bounds(slotValues, ranges).eval(*m_program->root()).mayBeTrue();
    } catch (...) { // out of memory for an argument list: no answer is "may hold"
        return true;
    }
}

} // namespace tilescope::expr
