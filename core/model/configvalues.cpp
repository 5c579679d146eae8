#include "model/configvalues.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace tilescope {

namespace {

// A double as nlohmann::json's dump() writes it: the digits that read back the same, placed as
// its format_buffer places them (decimal notation for exponents -4 to 15 with ".0" after an
// integral value, else d.ddde+XX with at least two exponent digits). Results stored as JSON text
// before ConfigValue existed must keep their keys. The digits are the shortest (std::to_chars);
// nlohmann's Grisu2 gives one digit more for a few doubles of full precision (0.06 % of random
// bit patterns), never for the short decimals tuning parameters take (0.5, 1e-05).
std::string formatFloat(double v) {
    if (!std::isfinite(v))
        return "null"; // as nlohmann writes NaN and infinities
    if (v == 0)
        return std::signbit(v) ? "-0.0" : "0.0";
    char buf[64];
    const auto result = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    std::string_view text(buf, static_cast<std::size_t>(result.ptr - buf));
    std::string out;
    if (text.front() == '-') {
        out += '-';
        text.remove_prefix(1);
    }
    // text: d[.ddd]e±XX
    const std::size_t e = text.find('e');
    std::string digits;
    for (const char c : text.substr(0, e))
        if (c != '.')
            digits += c;
    const int exponent = std::atoi(std::string(text.substr(e + 1)).c_str());
    const int len = static_cast<int>(digits.size());
    const int k = exponent - (len - 1); // value = digits x 10^k
    const int n = k + len;              // where the decimal point goes
    constexpr int kMinExp = -4;
    constexpr int kMaxExp = 15;
    if (k >= 0 && n <= kMaxExp) {
        out += digits;
        out.append(static_cast<std::size_t>(k), '0');
        out += ".0";
    } else if (0 < n && n <= kMaxExp) {
        out += digits.substr(0, static_cast<std::size_t>(n));
        out += '.';
        out += digits.substr(static_cast<std::size_t>(n));
    } else if (kMinExp < n && n <= 0) {
        out += "0.";
        out.append(static_cast<std::size_t>(-n), '0');
        out += digits;
    } else {
        out += digits.front();
        if (len > 1) {
            out += '.';
            out += digits.substr(1);
        }
        const int shown = n - 1;
        out += 'e';
        out += shown < 0 ? '-' : '+';
        const int magnitude = std::abs(shown);
        if (magnitude < 10)
            out += '0';
        out += std::to_string(magnitude);
    }
    return out;
}

void appendInt(std::string& out, std::int64_t v) {
    char buf[24];
    const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
    out.append(buf, end);
}

void appendValue(std::string& out, const ConfigValue& v) {
    if (v.isInt())
        appendInt(out, v.asInt());
    else
        out += v.json();
}

} // namespace

ConfigValue ConfigValue::ofInt(std::int64_t value) {
    return ConfigValue(value);
}

ConfigValue ConfigValue::ofFloat(double value) {
    return ConfigValue(value);
}

ConfigValue ConfigValue::ofBool(bool value) {
    return ConfigValue(value);
}

ConfigValue ConfigValue::ofText(std::string value) {
    return ConfigValue(std::move(value));
}

ConfigValue ConfigValue::null() {
    ConfigValue v;
    v.m_kind = Kind::Null;
    return v;
}

ConfigValue ConfigValue::compound(std::string json) {
    ConfigValue v(std::move(json));
    v.m_kind = Kind::Compound;
    return v;
}

double ConfigValue::asNumber() const {
    switch (m_kind) {
    case Kind::Int:
    case Kind::Bool:
        return static_cast<double>(m_int);
    case Kind::Float:
        return m_float;
    case Kind::Text:
    case Kind::Null:
    case Kind::Compound:
        break;
    }
    return 0;
}

std::string ConfigValue::json() const {
    switch (m_kind) {
    case Kind::Int: {
        std::string out;
        appendInt(out, m_int);
        return out;
    }
    case Kind::Float:
        return formatFloat(m_float);
    case Kind::Bool:
        return m_int ? "true" : "false";
    case Kind::Text:
        return jsonString(m_text);
    case Kind::Compound:
        return m_text;
    case Kind::Null:
        break;
    }
    return "null";
}

std::string ConfigValue::plain() const {
    return m_kind == Kind::Text ? m_text : json();
}

bool ConfigValue::operator==(const ConfigValue& other) const {
    // Numbers compare by value whatever their kind (4 == 4.0), as JSON's do.
    if (isNumber() && other.isNumber())
        return isInt() && other.isInt() ? m_int == other.m_int : asNumber() == other.asNumber();
    if (m_kind != other.m_kind)
        return false;
    switch (m_kind) {
    case Kind::Bool:
        return m_int == other.m_int;
    case Kind::Text:
    case Kind::Compound:
        return m_text == other.m_text;
    default:
        return true;
    }
}

ConfigValues::ConfigValues(std::initializer_list<Entry> entries) {
    for (const Entry& e : entries)
        (*this)[e.first] = e.second;
}

ConfigValue& ConfigValues::operator[](std::string_view name) {
    for (Entry& e : m_entries) {
        if (e.first == name)
            return e.second;
    }
    m_entries.emplace_back(std::string(name), ConfigValue());
    return m_entries.back().second;
}

const ConfigValue* ConfigValues::find(std::string_view name) const {
    for (const Entry& e : m_entries) {
        if (e.first == name)
            return &e.second;
    }
    return nullptr;
}

const ConfigValue& ConfigValues::at(std::string_view name) const {
    if (const ConfigValue* v = find(name))
        return *v;
    throw std::out_of_range("the config has no parameter '" + std::string(name) + "'");
}

std::string jsonString(std::string_view text) {
    std::string out;
    out.reserve(text.size() + 2);
    out += '"';
    for (const char c : text) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\b':
            out += "\\b";
            break;
        case '\f':
            out += "\\f";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
                out += buf;
            } else {
                out += c;
            }
        }
    }
    out += '"';
    return out;
}

std::string configKey(const ConfigValues& config) {
    std::string key;
    key.reserve(8 * config.size());
    for (const auto& [name, value] : config) {
        if (!key.empty())
            key += ',';
        appendValue(key, value);
    }
    return key;
}

std::string configJson(const ConfigValues& config) {
    std::string out = "{";
    out.reserve(16 * config.size());
    for (const auto& [name, value] : config) {
        if (out.size() > 1)
            out += ',';
        out += jsonString(name);
        out += ':';
        appendValue(out, value);
    }
    return out + '}';
}

std::string describeConfig(const ConfigValues& config) {
    std::string text;
    for (const auto& [name, value] : config) {
        if (!text.empty())
            text += ' ';
        text += name + '=' + value.plain();
    }
    return text;
}

} // namespace tilescope
