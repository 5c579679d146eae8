#pragma once

// The one reader of the JSON files users and other tools give Tilescope (T1 problems, T4 files,
// Kernel Tuner caches, JSON caches of tuned configs): text parsed with errors that say where
// (line and column), and values that know their place (a JSON pointer), so that an error about
// a field names it. Nothing in such a file may crash the reader or exhaust its stack.

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope {

/// How deep the JSON of any file Tilescope reads may nest (arrays and objects). Parsing keeps its
/// own stack, but copying, comparing, dumping and destroying JSON recurse, one call a level: the
/// limit keeps that recursion small on any thread's stack (sanitizers included). No file written
/// for Tilescope comes near it: T1 problems nest about 6 levels, recordings about 5, and a
/// configuration value that is a list of lists a few more.
constexpr int kMaxJsonDepth = 128;

/// How parseJson() reads.
struct JsonReadOptions {
    /// Refuse an object that names a key twice (naming the second by its pointer): in a file people
    /// write, a later key would silently replace the first. Recordings that tools append to keep
    /// the last.
    bool rejectDuplicateKeys = false;
    /// Refuse an integer written beyond 64 bits (naming it by its pointer), which would otherwise
    /// be read as the nearest double: in a recording, a parameter value of 2**70 would become
    /// 1.18e21, another value than the one recorded. Python's json module writes its ints so.
    bool rejectWideIntegers = false;
};

/// Parses `text`; throws InputError(fileName, "line L, column C", ...) for bad JSON, saying
/// "truncated" when the text ends before the JSON does, naming NaN and Infinity (which JSON
/// lacks), a number too large for a double and nesting deeper than kMaxJsonDepth; an empty file or
/// one of white space only says so.
nlohmann::ordered_json parseJson(const std::string& text, const std::string& fileName, JsonReadOptions options = {});
/// The JSON of `text`, or a discarded value (is_discarded()) when it does not parse or nests
/// deeper than kMaxJsonDepth: for telling a format by, never by Json::parse, which builds any
/// depth (and an ordered_json object's growth copies its members recursively).
nlohmann::ordered_json tryParseJson(const std::string& text);

/// A key as a JSON pointer token ("~" -> "~0", "/" -> "~1").
std::string escapePointerToken(std::string_view key);
/// What a value is, for messages: "null", "a boolean", "a number", "a string", "an array", "an object".
const char* describeJson(const nlohmann::ordered_json& value);
/// A value as a message shows it: scalars as written (cut after 40 characters), containers by
/// their kind ("an array", "an object").
std::string showJson(const nlohmann::ordered_json& value);

/// A JSON value of a file and its place in it (a JSON pointer, "" for the whole document). Every
/// check throws InputError(file, pointer, what was expected and what was found). The document
/// and the file name must outlive the node and the nodes taken from it.
class JsonNode {
public:
    JsonNode(const nlohmann::ordered_json& root, const std::string& fileName);

    const nlohmann::ordered_json& operator*() const { return *m_json; }
    const nlohmann::ordered_json* operator->() const { return m_json; }
    /// "/results/3/configuration"; "" for the document itself.
    const std::string& pointer() const { return m_pointer; }
    const std::string& fileName() const { return *m_file; }

    /// Throws InputError at this node.
    [[noreturn]] void fail(const std::string& message) const;

    /// The member `key`, which must be there (a key of items()).
    JsonNode child(std::string_view key) const;
    /// The member `key` whose value is `value`, as items() gives them, without looking it up (an
    /// ordered_json object finds a key by a linear search).
    JsonNode child(std::string_view key, const nlohmann::ordered_json& value) const;
    /// The item `index` of an array, which must be there.
    JsonNode item(std::size_t index) const;
    /// The member `key`, or nullopt when this is no object or has no such member.
    std::optional<JsonNode> member(std::string_view key) const;
    /// The member `key` of this object; "missing required field 'key'" at this node when absent
    /// (with the member of that name in another case, if any: field names are case-sensitive).
    JsonNode required(std::string_view key) const;

    void expectObject() const;
    void expectArray() const;
    std::string asString() const;
    /// An integer as the file writes it (no fraction, no exponent) that fits 64 bits.
    std::int64_t asInt() const;
    double asNumber() const;
    bool asBool() const;
    /// A string that is one of `allowed`; `field` names it in the message ("unknown Type 'x'").
    std::string asEnum(std::string_view field, std::span<const char* const> allowed) const;
    std::vector<std::string> asStringArray() const;
    /// A number with an integral value within [lo, hi] (1e3 and 1000.0 too, as Python tools may
    /// write counts), never a conversion out of range.
    std::int64_t asIntegralIn(std::int64_t lo, std::int64_t hi) const;
    /// The member `key` as asIntegralIn() reads it; nullopt when it is absent or null.
    std::optional<std::int64_t> integralMember(std::string_view key, std::int64_t lo, std::int64_t hi) const;

private:
    JsonNode(const nlohmann::ordered_json& value, const std::string* fileName, std::string pointer);

    const nlohmann::ordered_json* m_json;
    const std::string* m_file;
    std::string m_pointer;
};

} // namespace tilescope
