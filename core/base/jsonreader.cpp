#include "base/jsonreader.h"

#include "base/error.h"
#include "base/jsonwords.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <optional>
#include <set>

namespace tilescope {

using Json = nlohmann::ordered_json;

namespace {

/// Where the JSON text first opens more than `limit` arrays and objects, or npos.
std::size_t firstTooDeep(std::string_view text, int limit) {
    int depth = 0;
    bool inString = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            if (++depth > limit)
                return i;
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return std::string::npos;
}

/// Whether a number as the text writes it is an integer (no fraction, no exponent).
bool integerLiteral(std::string_view literal) {
    return literal.find_first_of(".eE") == std::string_view::npos;
}

/// A number's text as a message shows it: cut after 40 characters.
std::string shortLiteral(const std::string& literal) {
    return literal.size() > 40 ? literal.substr(0, 37) + "..." : literal;
}

/// nlohmann's DOM builder, with the nesting kept within kMaxJsonDepth, duplicate keys and integers
/// beyond 64 bits found when asked (by their pointer) and the place and text of a parse error kept
/// (its exceptions for numbers too large carry no place).
class GuardedDom {
public:
    using Dom = nlohmann::detail::json_sax_dom_parser<Json>;

    GuardedDom(Json& result, JsonReadOptions options)
        : m_dom(result, false)
        , m_options(options)
        , m_trackKeys(options.rejectDuplicateKeys || options.rejectWideIntegers) {}

    bool null() { return value() && m_dom.null(); }
    bool boolean(bool v) { return value() && m_dom.boolean(v); }
    bool number_integer(Json::number_integer_t v) { return value() && m_dom.number_integer(v); }
    bool number_unsigned(Json::number_unsigned_t v) { return value() && m_dom.number_unsigned(v); }
    bool number_float(Json::number_float_t v, const Json::string_t& s) {
        // nlohmann reads an integer that 64 bits cannot hold as a double, without a word.
        if (m_options.rejectWideIntegers && integerLiteral(s)) {
            m_wideInteger = childPointer();
            m_wideLiteral = s;
            return false;
        }
        return value() && m_dom.number_float(v, s);
    }
    bool string(Json::string_t& v) { return value() && m_dom.string(v); }
    bool binary(Json::binary_t& v) { return value() && m_dom.binary(v); }
    bool key(Json::string_t& v) { return newKey(v) && m_dom.key(v); }
    bool start_object(std::size_t n) { return open(false) && m_dom.start_object(n); }
    bool end_object() { return close() && m_dom.end_object(); }
    bool start_array(std::size_t n) { return open(true) && m_dom.start_array(n); }
    bool end_array() { return close() && m_dom.end_array(); }
    template <class Exception>
    bool parse_error(std::size_t position, const std::string& token, const Exception& e) {
        m_failed = true;
        m_position = position;
        m_token = token;
        m_id = e.id;
        m_what = e.what();
        return false;
    }

    bool failed() const { return m_failed; }
    bool tooDeep() const { return m_tooDeep; }
    std::size_t position() const { return m_position; }
    const std::string& token() const { return m_token; }
    int id() const { return m_id; }
    const std::string& what() const { return m_what; }
    /// The pointer of a key named twice in its object ("" when none was).
    const std::string& duplicate() const { return m_duplicate; }
    const std::string& duplicateKey() const { return m_duplicateKey; }
    /// The pointer and text of an integer beyond 64 bits (nullopt when none was refused).
    const std::optional<std::string>& wideInteger() const { return m_wideInteger; }
    const std::string& wideLiteral() const { return m_wideLiteral; }

private:
    // An open array or object, while keys are tracked: its pointer, the key or index of the
    // value being read, the keys seen.
    struct Frame {
        bool isArray = false;
        std::string pointer;
        std::size_t count = 0;
        std::string key;
        std::set<std::string> keys;
    };

    std::string childPointer() const {
        if (m_frames.empty())
            return "";
        const Frame& top = m_frames.back();
        return top.pointer + "/" + (top.isArray ? std::to_string(top.count) : escapePointerToken(top.key));
    }

    // A scalar read, or a container closed: the next item of an array is the next index.
    bool value() {
        if (m_trackKeys && !m_frames.empty() && m_frames.back().isArray)
            ++m_frames.back().count;
        return true;
    }

    bool open(bool isArray) {
        if (++m_depth > kMaxJsonDepth) {
            m_tooDeep = true;
            return false;
        }
        if (m_trackKeys)
            m_frames.push_back({isArray, childPointer(), 0, {}, {}});
        return true;
    }

    bool close() {
        --m_depth;
        if (!m_trackKeys)
            return true;
        if (!m_frames.empty())
            m_frames.pop_back();
        return value();
    }

    bool newKey(const std::string& key) {
        if (!m_trackKeys || m_frames.empty())
            return true;
        Frame& top = m_frames.back();
        top.key = key;
        if (!m_options.rejectDuplicateKeys || top.keys.insert(key).second)
            return true;
        m_duplicate = childPointer();
        m_duplicateKey = key;
        return false;
    }

    Dom m_dom;
    JsonReadOptions m_options;
    bool m_trackKeys;
    std::vector<Frame> m_frames;
    int m_depth = 0;
    bool m_tooDeep = false;
    bool m_failed = false;
    std::size_t m_position = 0;
    std::string m_token;
    int m_id = 0;
    std::string m_what;
    std::string m_duplicate;
    std::string m_duplicateKey;
    std::optional<std::string> m_wideInteger;
    std::string m_wideLiteral;
};

/// nlohmann's message without its "[json.exception.parse_error.101] parse error at line 1,
/// column 5: " prefix.
std::string jsonMessage(std::string what) {
    if (!what.empty() && what.front() == '[')
        if (const std::size_t close = what.find("] "); close != std::string::npos)
            what = what.substr(close + 2);
    if (what.rfind("parse error", 0) == 0)
        if (const std::size_t colon = what.find(": "); colon != std::string::npos)
            what = what.substr(colon + 2);
    return what;
}

} // namespace

Json tryParseJson(const std::string& text) {
    Json result;
    GuardedDom dom(result, {});
    Json::sax_parse(text, &dom);
    if (dom.tooDeep() || dom.failed())
        return Json(Json::value_t::discarded);
    return result;
}

Json parseJson(const std::string& text, const std::string& fileName, JsonReadOptions options) {
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos)
        throw InputError(fileName, "", text.empty() ? "the file is empty" : "the file holds only white space");
    Json result;
    GuardedDom dom(result, options);
    Json::sax_parse(text, &dom);
    if (dom.tooDeep()) {
        const std::size_t at = firstTooDeep(text, kMaxJsonDepth);
        throw InputError(fileName, at == std::string::npos ? "" : lineColumnAt(text, at),
                         "nested more than " + std::to_string(kMaxJsonDepth) +
                             " levels deep (arrays and objects); no file Tilescope reads nests so deep");
    }
    if (!dom.duplicate().empty())
        throw InputError(fileName, dom.duplicate(),
                         "duplicate key '" + dom.duplicateKey() + "' (a later one would silently replace the first)");
    if (dom.wideInteger())
        throw InputError(fileName, *dom.wideInteger(),
                         "the integer " + shortLiteral(dom.wideLiteral()) +
                             " does not fit 64 bits (read as a double, it would be another number)");
    if (!dom.failed())
        return result;

    // nlohmann: the position is the count of characters read, the last of them the one in error.
    const std::size_t at = std::min(dom.position() > 0 ? dom.position() - 1 : 0, text.size());
    if (dom.id() == 406) { // a number too large for a double ("1e400"): its token is the last read
        const std::size_t start = dom.token().size() <= at + 1 ? at + 1 - dom.token().size() : 0;
        throw InputError(fileName, lineColumnAt(text, start),
                         "the number " + dom.token() + " is too large (more than a double's 1.8e308)");
    }
    const auto [wordStart, word] = nonFiniteWordAt(text, at);
    if (!word.empty())
        throw InputError(fileName, lineColumnAt(text, wordStart),
                         std::string(word) +
                             " is not JSON: JSON has no NaN or Infinity (Python's json module writes them); "
                             "expected a number or null");
    const std::size_t last = text.find_last_not_of(" \t\r\n");
    if (at >= last + 1 || dom.position() > text.size())
        throw InputError(fileName, lineColumnAt(text, at),
                         "the JSON ends early: the file is truncated or incomplete (" + std::to_string(text.size()) +
                             " bytes)");
    throw InputError(fileName, lineColumnAt(text, at), "bad JSON: " + jsonMessage(dom.what()));
}

std::string escapePointerToken(std::string_view key) {
    std::string out;
    out.reserve(key.size());
    for (char c : key) {
        if (c == '~')
            out += "~0";
        else if (c == '/')
            out += "~1";
        else
            out += c;
    }
    return out;
}

const char* describeJson(const Json& value) {
    switch (value.type()) {
    case Json::value_t::null:
        return "null";
    case Json::value_t::boolean:
        return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
        return "a number";
    case Json::value_t::string:
        return "a string";
    case Json::value_t::array:
        return "an array";
    case Json::value_t::object:
        return "an object";
    default:
        return "an unsupported value";
    }
}

std::string showJson(const Json& value) {
    if (value.is_array() || value.is_object())
        return describeJson(value);
    std::string text = value.dump();
    if (text.size() > 40)
        text = text.substr(0, 37) + "...";
    return text;
}

// ---- JsonNode ----

JsonNode::JsonNode(const Json& root, const std::string& fileName)
    : JsonNode(root, &fileName, "") {}

JsonNode::JsonNode(const Json& value, const std::string* fileName, std::string pointer)
    : m_json(&value)
    , m_file(fileName)
    , m_pointer(std::move(pointer)) {}

void JsonNode::fail(const std::string& message) const {
    throw InputError(*m_file, m_pointer, message);
}

JsonNode JsonNode::child(std::string_view key) const {
    return {m_json->at(std::string(key)), m_file, m_pointer + "/" + escapePointerToken(key)};
}

JsonNode JsonNode::child(std::string_view key, const Json& value) const {
    return {value, m_file, m_pointer + "/" + escapePointerToken(key)};
}

JsonNode JsonNode::item(std::size_t index) const {
    return {m_json->at(index), m_file, m_pointer + "/" + std::to_string(index)};
}

std::optional<JsonNode> JsonNode::member(std::string_view key) const {
    if (!m_json->contains(key))
        return std::nullopt;
    return child(key);
}

JsonNode JsonNode::required(std::string_view key) const {
    expectObject();
    if (auto n = member(key))
        return *n;
    std::string message = "missing required field '" + std::string(key) + "'";
    // The commonest way to lose a field is to spell it in another case.
    for (const auto& [name, value] : m_json->items()) {
        if (name.size() == key.size() && std::equal(name.begin(), name.end(), key.begin(), [](char a, char b) {
                return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
            })) {
            message += " (found '" + name + "'; field names are case-sensitive)";
            break;
        }
    }
    fail(message);
}

void JsonNode::expectObject() const {
    if (!m_json->is_object())
        fail(std::string("expected an object, got ") + describeJson(*m_json));
}

void JsonNode::expectArray() const {
    if (!m_json->is_array())
        fail(std::string("expected an array, got ") + describeJson(*m_json));
}

std::string JsonNode::asString() const {
    if (!m_json->is_string())
        fail(std::string("expected a string, got ") + describeJson(*m_json));
    return m_json->get<std::string>();
}

std::int64_t JsonNode::asInt() const {
    if (m_json->is_number_unsigned()) {
        const auto u = m_json->get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(INT64_MAX))
            fail("integer " + m_json->dump() + " is out of range (more than 64 bits)");
        return static_cast<std::int64_t>(u);
    }
    if (m_json->is_number_integer())
        return m_json->get<std::int64_t>();
    if (m_json->is_number_float())
        fail("expected an integer, got " + m_json->dump());
    fail(std::string("expected an integer, got ") + describeJson(*m_json));
}

double JsonNode::asNumber() const {
    if (!m_json->is_number())
        fail(std::string("expected a number, got ") + describeJson(*m_json));
    return m_json->get<double>();
}

bool JsonNode::asBool() const {
    if (!m_json->is_boolean())
        fail(std::string("expected true or false, got ") + describeJson(*m_json));
    return m_json->get<bool>();
}

std::string JsonNode::asEnum(std::string_view field, std::span<const char* const> allowed) const {
    std::string s = asString();
    if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return s == a; })) {
        std::string names;
        for (const char* a : allowed)
            names += (names.empty() ? "" : ", ") + std::string(a);
        fail("unknown " + std::string(field) + " '" + s + "' (expected one of " + names + ")");
    }
    return s;
}

std::vector<std::string> JsonNode::asStringArray() const {
    expectArray();
    std::vector<std::string> out;
    for (std::size_t i = 0; i < m_json->size(); ++i)
        out.push_back(item(i).asString());
    return out;
}

std::int64_t JsonNode::asIntegralIn(std::int64_t lo, std::int64_t hi) const {
    const Json& v = *m_json;
    std::optional<std::int64_t> value;
    if (v.is_number_unsigned()) {
        const auto u = v.get<std::uint64_t>();
        if (hi >= 0 && u <= static_cast<std::uint64_t>(hi))
            value = static_cast<std::int64_t>(u);
    } else if (v.is_number_integer()) {
        value = v.get<std::int64_t>();
    } else if (v.is_number_float()) {
        const double d = v.get<double>();
        // [-2^63, 2^63): where the conversion is defined.
        if (std::trunc(d) == d && d >= -9223372036854775808.0 && d < 9223372036854775808.0)
            value = static_cast<std::int64_t>(d);
    }
    if (!value || *value < lo || *value > hi) {
        const std::string range = lo == INT64_MIN ? "a 64-bit integer"
                                  : hi == INT64_MAX
                                      ? "an integer of at least " + std::to_string(lo)
                                      : "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
        fail("expected " + range + ", got " + showJson(v));
    }
    return *value;
}

std::optional<std::int64_t> JsonNode::integralMember(std::string_view key, std::int64_t lo, std::int64_t hi) const {
    const auto n = member(key);
    if (!n || (*n)->is_null())
        return std::nullopt;
    return n->asIntegralIn(lo, hi);
}

} // namespace tilescope
