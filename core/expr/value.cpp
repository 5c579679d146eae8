#include "expr/internal.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace tilescope::expr {

ValueList::ValueList()
    : m_storage(1, Value::ofInt(0)) {}

ValueList::ValueList(std::span<const Value> items)
    : ValueList() {
    m_storage.insert(m_storage.end(), items.begin(), items.end());
    m_storage[0].i = static_cast<std::int64_t>(items.size());
}

ValueList::ValueList(const ValueList& other) = default;
ValueList& ValueList::operator=(const ValueList& other) = default;

void ValueList::push_back(Value v) {
    m_storage.push_back(v);
    m_storage[0].i = static_cast<std::int64_t>(m_storage.size() - 1);
}

Value ValueList::value() const {
    Value r;
    r.kind = Kind::List;
    r.list = m_storage.data();
    return r;
}

const char* typeName(Kind k) {
    switch (k) {
    case Kind::Int:
        return "int";
    case Kind::Float:
        return "float";
    case Kind::Bool:
        return "bool";
    case Kind::Str:
        return "str";
    case Kind::List:
        return "list";
    }
    return "?";
}

bool truthy(const Value& v) {
    switch (v.kind) {
    case Kind::Int:
    case Kind::Bool:
        return v.i != 0;
    case Kind::Float:
        return v.f != 0.0;
    case Kind::Str:
        return !v.s->empty();
    case Kind::List:
        return v.listSize() != 0;
    }
    return false;
}

bool equal(const Value& a, const Value& b) {
    bool result = false;
    EvalStatus st;
    detail::compareOp(detail::CmpOp::Eq, a, b, result, st); // == never raises
    return result;
}

namespace {

// Python's float repr: the shortest digits that round-trip, fixed notation for decimal
// exponents in [-4, 16), scientific otherwise, and always a '.' or an exponent.
std::string floatRepr(double f) {
    if (std::isnan(f))
        return "nan";
    if (std::isinf(f))
        return f > 0 ? "inf" : "-inf";
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific);
    if (ec != std::errc())
        return "?";
    std::string sci(buf, end); // e.g. "-1.2345e+02"
    const auto ePos = sci.find('e');
    const int exponent = std::stoi(sci.substr(ePos + 1));
    std::string mantissa = sci.substr(0, ePos);
    const bool negative = mantissa[0] == '-';
    if (negative)
        mantissa.erase(0, 1);
    std::string digits;
    for (char c : mantissa)
        if (c != '.')
            digits += c;
    std::string out = negative ? "-" : "";
    if (exponent >= -4 && exponent < 16) {
        if (exponent < 0) {
            out += "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
        } else if (static_cast<int>(digits.size()) <= exponent + 1) {
            out += digits + std::string(static_cast<std::size_t>(exponent + 1) - digits.size(), '0') + ".0";
        } else {
            out += digits.substr(0, static_cast<std::size_t>(exponent + 1)) + "." +
                   digits.substr(static_cast<std::size_t>(exponent + 1));
        }
        return out;
    }
    out += digits.substr(0, 1);
    if (digits.size() > 1)
        out += "." + digits.substr(1);
    char exp[16];
    std::snprintf(exp, sizeof exp, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return out + exp;
}

std::string strRepr(const std::string& s) {
    const bool useDouble = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
    const char quote = useDouble ? '"' : '\'';
    std::string out(1, quote);
    for (char c : s) {
        if (c == quote || c == '\\')
            out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out + quote;
}

} // namespace

std::string repr(const Value& v) {
    switch (v.kind) {
    case Kind::Int:
        return std::to_string(v.i);
    case Kind::Bool:
        return v.i ? "True" : "False";
    case Kind::Float:
        return floatRepr(v.f);
    case Kind::Str:
        return strRepr(*v.s);
    case Kind::List: {
        std::string out = "[";
        bool first = true;
        for (const Value& item : v.items()) {
            if (!first)
                out += ", ";
            first = false;
            out += repr(item);
        }
        return out + "]";
    }
    }
    return "?";
}

} // namespace tilescope::expr
