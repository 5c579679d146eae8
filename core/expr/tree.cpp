// Evaluating syntax trees directly: the lists that constant folding builds (comprehensions,
// list + list, range(), sorted(), slices), and at run time what the bytecode does not express
// (a comprehension over variables). Value lists are small and run once; a condition with a
// comprehension over parameters is rare: a tree walk is enough for both.

#include "expr/internal.h"

#include <algorithm>

namespace tilescope::expr::detail {

bool hasSlot(const Node& node) {
    if (node.kind == NodeKind::Slot)
        return true;
    return std::any_of(node.kids.begin(), node.kids.end(), [](const auto& k) { return k && hasSlot(*k); });
}

ExprError TreeEvaluator::error(int column, const std::string& message, ErrorKind kind) const {
    return ExprError(kind, m_source, column, message);
}

void TreeEvaluator::tooLong(int column) const {
    throw error(column, "the list is too long (more than 1048576 items)", ErrorKind::Value);
}

// binaryOp, plus what builds a list: list + list and list * int.
bool TreeEvaluator::binaryValue(BinOp op, const Value& a, const Value& b, Value& out, EvalStatus& st) const {
    const bool aList = a.kind == Kind::List, bList = b.kind == Kind::List;
    if (op == BinOp::Add && aList && bList) {
        if (a.listSize() + b.listSize() > kMaxListItems)
            return fail(st, ErrorKind::Value, "the list is too long (more than 1048576 items)");
        std::vector<Value> items(a.items().begin(), a.items().end());
        items.insert(items.end(), b.items().begin(), b.items().end());
        out = m_pool.addList(std::move(items));
        return true;
    }
    if (op == BinOp::Mul && aList != bList) {
        const Value& list = aList ? a : b;
        const Value& count = aList ? b : a;
        if (count.kind != Kind::Int && count.kind != Kind::Bool)
            return fail(st, ErrorKind::Type, "can't multiply sequence by non-int");
        // An empty list stays empty however many times it is repeated ([] * 10**18 is []).
        const std::int64_t times = list.listSize() == 0 ? 0 : std::max<std::int64_t>(count.i, 0);
        if (times > 0 && list.listSize() > 0 &&
            static_cast<std::uint64_t>(times) > kMaxListItems / list.listSize())
            return fail(st, ErrorKind::Value, "the list is too long (more than 1048576 items)");
        std::vector<Value> items;
        for (std::int64_t t = 0; t < times; ++t)
            items.insert(items.end(), list.items().begin(), list.items().end());
        out = m_pool.addList(std::move(items));
        return true;
    }
    return binaryOp(op, a, b, out, st);
}

// range() and sorted(): their errors are reported at once, with the column.
Value TreeEvaluator::callListBuiltin(const Node& call, const std::vector<Value>& args) const {
    if (call.builtin == Builtin::Sorted) {
        if (args[0].kind != Kind::List)
            throw error(call.kids[0]->column, "sorted() needs a list", ErrorKind::Type);
        std::vector<Value> items(args[0].items().begin(), args[0].items().end());
        EvalStatus st;
        bool failed = false;
        std::stable_sort(items.begin(), items.end(), [&](const Value& x, const Value& y) {
            bool less = false;
            if (!failed && !compareOp(CmpOp::Lt, x, y, less, st))
                failed = true;
            return less;
        });
        if (failed)
            throw error(call.column, st.message ? st.message : "cannot sort these values", st.kind);
        return m_pool.addList(std::move(items));
    }
    std::int64_t bounds[3] = {0, 0, 1};
    for (std::size_t k = 0; k < args.size(); ++k) {
        if (args[k].kind != Kind::Int && args[k].kind != Kind::Bool)
            throw error(call.kids[k]->column,
                        std::string("'") + typeName(args[k].kind) + "' object cannot be interpreted as an integer",
                        ErrorKind::Type);
        bounds[k] = args[k].i;
    }
    std::int64_t start = 0, stop = bounds[0], step = 1;
    if (args.size() >= 2) {
        start = bounds[0];
        stop = bounds[1];
        step = args.size() == 3 ? bounds[2] : 1;
    }
    if (step == 0)
        throw error(call.kids[2]->column, "range() arg 3 must not be zero", ErrorKind::Value);
    std::vector<Value> items;
    for (std::int64_t v = start; step > 0 ? v < stop : v > stop; v += step) {
        if (items.size() >= kMaxListItems)
            throw error(call.column, "range() is too long (more than 1048576 items)", ErrorKind::Value);
        items.push_back(Value::ofInt(v));
        if ((step > 0 && v > INT64_MAX - step) || (step < 0 && v < INT64_MIN - step))
            break;
    }
    return m_pool.addList(std::move(items));
}

// container[start:stop:step] with Python's rules for absent and negative bounds.
Value TreeEvaluator::slice(const Node& node, const Value& container, const Value* bound[3]) const {
    if (container.kind != Kind::List)
        throw error(node.column,
                    container.kind == Kind::Str ? "slicing strings is not supported" : "object is not subscriptable",
                    ErrorKind::Type);
    std::int64_t given[3] = {0, 0, 1};
    for (int k = 0; k < 3; ++k) {
        if (!bound[k])
            continue;
        if (bound[k]->kind != Kind::Int && bound[k]->kind != Kind::Bool)
            throw error(node.column, "slice indices must be integers", ErrorKind::Type);
        given[k] = bound[k]->i;
    }
    const std::int64_t step = given[2];
    if (step == 0)
        throw error(node.column, "slice step cannot be zero", ErrorKind::Value);
    const auto n = static_cast<std::int64_t>(container.listSize());
    auto adjust = [&](std::int64_t v, std::int64_t absent, bool present) {
        if (!present)
            return absent;
        if (v < 0) {
            v += n;
            if (v < 0)
                v = step < 0 ? -1 : 0;
        } else if (v >= n) {
            v = step < 0 ? n - 1 : n;
        }
        return v;
    };
    const std::int64_t start = adjust(given[0], step < 0 ? n - 1 : 0, bound[0] != nullptr);
    const std::int64_t stop = adjust(given[1], step < 0 ? -1 : n, bound[1] != nullptr);
    std::vector<Value> items;
    for (std::int64_t i = start; step > 0 ? i < stop : i > stop; i += step)
        items.push_back(container.items()[static_cast<std::size_t>(i)]);
    return m_pool.addList(std::move(items));
}

Value TreeEvaluator::evaluate(const Node& node, std::vector<Value>& env) const {
    EvalStatus st;
    Value out;
    auto raise = [&](int column) -> Value {
        throw ExprError(st.kind, m_source, column, st.message ? st.message : "error");
    };
    switch (node.kind) {
    case NodeKind::Const:
        return node.value;
    case NodeKind::Local:
        return env[static_cast<std::size_t>(node.slot)];
    case NodeKind::Slot:
        if (m_slots)
            return m_slots[node.slot];
        break;
    case NodeKind::Binary:
        if (!binaryValue(node.binOp, evaluate(*node.kids[0], env), evaluate(*node.kids[1], env), out, st))
            return raise(node.column);
        return out;
    case NodeKind::Unary:
        if (!unaryOp(node.unOp, evaluate(*node.kids[0], env), out, st))
            return raise(node.column);
        return out;
    case NodeKind::Compare: {
        Value left = evaluate(*node.kids[0], env);
        for (std::size_t i = 0; i < node.cmpOps.size(); ++i) {
            Value right = evaluate(*node.kids[i + 1], env);
            bool r;
            if (!compareOp(node.cmpOps[i], left, right, r, st))
                return raise(node.cmpColumns[i]);
            if (!r)
                return Value::ofBool(false);
            left = right;
        }
        return Value::ofBool(true);
    }
    case NodeKind::And:
    case NodeKind::Or: {
        Value v;
        for (const auto& k : node.kids) {
            v = evaluate(*k, env);
            if (truthy(v) != (node.kind == NodeKind::And))
                return v;
        }
        return v;
    }
    case NodeKind::IfElse:
        return truthy(evaluate(*node.kids[1], env)) ? evaluate(*node.kids[0], env)
                                                        : evaluate(*node.kids[2], env);
    case NodeKind::Call: {
        std::vector<Value> args;
        for (const auto& k : node.kids)
            args.push_back(evaluate(*k, env));
        if (node.builtin == Builtin::Range || node.builtin == Builtin::Sorted)
            return callListBuiltin(node, args);
        if (!callBuiltin(node.builtin, args.data(), static_cast<int>(args.size()), out, st))
            return raise(node.column);
        return out;
    }
    case NodeKind::Subscript:
        if (!subscript(evaluate(*node.kids[0], env), evaluate(*node.kids[1], env), out, st))
            return raise(node.column);
        return out;
    case NodeKind::Slice: {
        const Value container = evaluate(*node.kids[0], env);
        Value given[3];
        const Value* bounds[3] = {nullptr, nullptr, nullptr};
        for (std::size_t k = 0; k < 3; ++k) {
            if (node.kids[k + 1]) {
                given[k] = evaluate(*node.kids[k + 1], env);
                bounds[k] = &given[k];
            }
        }
        return slice(node, container, bounds);
    }
    case NodeKind::ListDisplay: {
        std::vector<Value> items;
        for (const auto& k : node.kids)
            items.push_back(evaluate(*k, env));
        return m_pool.addList(std::move(items));
    }
    case NodeKind::Comprehension: {
        std::vector<Value> items;
        runClauses(node, 0, env, items);
        return m_pool.addList(std::move(items));
    }
    }
    throw ExprError(ErrorKind::Type, m_source, node.column,
                    "a comprehension may use only constants and its own loop variables");
}

void TreeEvaluator::runClauses(const Node& comp, std::size_t clause, std::vector<Value>& env, std::vector<Value>& out) const {
    if (++m_steps > kMaxSteps)
        throw error(comp.column, "the comprehension takes too long (more than 20 million steps)", ErrorKind::Value);
    if (clause == comp.clauses.size()) {
        if (out.size() >= kMaxListItems)
            tooLong(comp.column);
        out.push_back(evaluate(*comp.kids[0], env));
        return;
    }
    const Node& kid = *comp.kids[clause + 1];
    const int slot = comp.clauses[clause];
    if (slot < 0) {
        if (truthy(evaluate(kid, env)))
            runClauses(comp, clause + 1, env, out);
        return;
    }
    const Value iterable = evaluate(kid, env);
    if (iterable.kind != Kind::List)
        throw error(kid.column,
                    iterable.kind == Kind::Str ? std::string("iterating over a string is not supported")
                                               : std::string("'") + typeName(iterable.kind) + "' object is not iterable",
                    ErrorKind::Type);
    if (env.size() <= static_cast<std::size_t>(slot))
        env.resize(static_cast<std::size_t>(slot) + 1);
    for (const Value& item : iterable.items()) {
        env[static_cast<std::size_t>(slot)] = item;
        runClauses(comp, clause + 1, env, out);
    }
}

} // namespace tilescope::expr::detail
