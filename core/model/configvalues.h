#pragma once

// A config as results record it: parameter name -> value, in the problem's parameter order,
// independent of a ConfigSpace, so that results of imported files, older problem versions and
// other tools fit too. A value is what T1 and Kernel Tuner's caches hold: an integer, a float, a
// bool, a string (or null, which some caches write; a list or an object is kept as its JSON
// text). JSON is read and written at the edges
// (exchange, store); the text forms here are the JSON ones, byte for byte as the results database
// has always stored them.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace tilescope {

/// One recorded value of a tuning parameter.
class ConfigValue {
public:
    enum class Kind : std::uint8_t { Int, Float, Bool, Text, Null, Compound };

    ConfigValue() = default; ///< the integer 0
    /// Literals convert as JSON's do: `config["BLOCK"] = 64`, `= 0.5`, `= true`, `= "float4"`.
    template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
    ConfigValue(T value)
        : m_int(static_cast<std::int64_t>(value)) {}
    ConfigValue(double value)
        : m_kind(Kind::Float)
        , m_float(value) {}
    ConfigValue(bool value)
        : m_kind(Kind::Bool)
        , m_int(value ? 1 : 0) {}
    ConfigValue(const char* value)
        : m_kind(Kind::Text)
        , m_text(value) {}
    ConfigValue(std::string value)
        : m_kind(Kind::Text)
        , m_text(std::move(value)) {}
    static ConfigValue ofInt(std::int64_t value);
    static ConfigValue ofFloat(double value);
    static ConfigValue ofBool(bool value);
    static ConfigValue ofText(std::string value);
    static ConfigValue null();
    /// A list or an object, kept as its compact JSON text (`json`, as written).
    static ConfigValue compound(std::string json);

    Kind kind() const { return m_kind; }
    bool isInt() const { return m_kind == Kind::Int; }
    bool isFloat() const { return m_kind == Kind::Float; }
    bool isNumber() const { return isInt() || isFloat(); }
    bool isBool() const { return m_kind == Kind::Bool; }
    bool isText() const { return m_kind == Kind::Text; }
    bool isNull() const { return m_kind == Kind::Null; }
    bool isCompound() const { return m_kind == Kind::Compound; }

    /// An Int's value (a Bool's as 0 or 1; 0 otherwise).
    std::int64_t asInt() const { return m_kind == Kind::Int || m_kind == Kind::Bool ? m_int : 0; }
    /// An Int's, Float's or Bool's value as a double (0 otherwise).
    double asNumber() const;
    bool asBool() const { return m_kind == Kind::Bool && m_int != 0; }
    /// A Text's string ("" otherwise).
    const std::string& text() const { return m_text; }

    /// Compact JSON: 64, 0.5, 1.0, 1e-05, true, "float4", null (numbers as nlohmann's dump()
    /// writes them, so that text stored before this type existed compares equal).
    std::string json() const;
    /// For people: as json(), but a string without its quotes.
    std::string plain() const;

    bool operator==(const ConfigValue& other) const;

private:
    Kind m_kind = Kind::Int;
    std::int64_t m_int = 0;
    double m_float = 0;
    std::string m_text;
};

/// A config: names and values in order; a name appears once.
class ConfigValues {
public:
    using Entry = std::pair<std::string, ConfigValue>;
    using const_iterator = std::vector<Entry>::const_iterator;

    ConfigValues() = default;
    /// {{"BLOCK_M", 64}, {"VEC", 4}}; a repeated name keeps its last value.
    ConfigValues(std::initializer_list<Entry> entries);

    /// The value of `name`, appended (as 0) when the config has none.
    ConfigValue& operator[](std::string_view name);
    /// The value of `name`, or null when the config has none.
    const ConfigValue* find(std::string_view name) const;
    bool contains(std::string_view name) const { return find(name) != nullptr; }
    /// The value of `name`; throws std::out_of_range when the config has none.
    const ConfigValue& at(std::string_view name) const;

    const_iterator begin() const { return m_entries.begin(); }
    const_iterator end() const { return m_entries.end(); }
    std::size_t size() const { return m_entries.size(); }
    bool empty() const { return m_entries.empty(); }
    /// The i-th name and value, in order.
    const Entry& entry(std::size_t i) const { return m_entries.at(i); }

    bool operator==(const ConfigValues& other) const { return m_entries == other.m_entries; }

private:
    std::vector<Entry> m_entries;
};

/// A config's identity within a session: its values in order, each as compact JSON, joined by
/// commas ("64,128,8,4,4,4,2"; a string value keeps its quotes). Like Kernel Tuner's cache keys.
std::string configKey(const ConfigValues& config);
/// The config as compact JSON text: {"BLOCK_M":64,"VEC":4}.
std::string configJson(const ConfigValues& config);
/// "BLOCK_M=64 BLOCK_N=128 ..." (strings without quotes).
std::string describeConfig(const ConfigValues& config);
/// `text` as a JSON string literal, quotes included, escaped as nlohmann's dump() escapes it.
std::string jsonString(std::string_view text);

} // namespace tilescope
