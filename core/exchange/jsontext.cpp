// Text in for core/exchange: files read whole, gzip inflated with a limit, JSON parsed with
// errors that say where. Recordings come from other tools and other machines: nothing in them
// may crash the reader, exhaust its memory or its stack.

#include "exchange/jsontext.h"

#include "base/error.h"
#include "base/jsonwords.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string_view>

namespace tilescope::exchange {

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

/// nlohmann's DOM builder, with the nesting kept within kMaxJsonDepth and the place and text of
/// a parse error kept (its exceptions for numbers too large carry no place).
class GuardedDom {
public:
    using Dom = nlohmann::detail::json_sax_dom_parser<Json>;

    explicit GuardedDom(Json& result)
        : m_dom(result, false) {}

    bool null() { return m_dom.null(); }
    bool boolean(bool v) { return m_dom.boolean(v); }
    bool number_integer(Json::number_integer_t v) { return m_dom.number_integer(v); }
    bool number_unsigned(Json::number_unsigned_t v) { return m_dom.number_unsigned(v); }
    bool number_float(Json::number_float_t v, const Json::string_t& s) { return m_dom.number_float(v, s); }
    bool string(Json::string_t& v) { return m_dom.string(v); }
    bool binary(Json::binary_t& v) { return m_dom.binary(v); }
    bool key(Json::string_t& v) { return m_dom.key(v); }
    bool start_object(std::size_t n) { return deeper() && m_dom.start_object(n); }
    bool end_object() {
        --m_depth;
        return m_dom.end_object();
    }
    bool start_array(std::size_t n) { return deeper() && m_dom.start_array(n); }
    bool end_array() {
        --m_depth;
        return m_dom.end_array();
    }
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

private:
    bool deeper() {
        if (++m_depth <= kMaxJsonDepth)
            return true;
        m_tooDeep = true;
        return false;
    }

    Dom m_dom;
    int m_depth = 0;
    bool m_tooDeep = false;
    bool m_failed = false;
    std::size_t m_position = 0;
    std::string m_token;
    int m_id = 0;
    std::string m_what;
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

std::string sizeText(std::uint64_t bytes) {
    static const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
    if (bytes < 1024)
        return std::to_string(bytes) + " bytes";
    double v = static_cast<double>(bytes);
    int unit = -1;
    while (v >= 1024 && unit < 3) {
        v /= 1024;
        ++unit;
    }
    char text[32];
    std::snprintf(text, sizeof text, v == std::floor(v) ? "%.0f %s" : "%.1f %s", v, kUnits[unit]);
    return text;
}

constexpr const char* kLimitVariable = "TILESCOPE_GZIP_LIMIT";
constexpr std::uint64_t kDefaultGzipLimit = std::uint64_t{1} << 30;

/// Inflates a gzip file from `in` (positioned at its start). `maxBytes`: stop there (a head).
std::string gunzip(std::istream& in, const std::string& fileName, std::size_t maxBytes) {
    const std::uint64_t limit = maxBytes == std::string::npos ? gzipLimit() : maxBytes;
    z_stream stream{};
    if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK)
        throw InputError(fileName, "", "cannot start decompressing the gzip file");
    const std::unique_ptr<z_stream, int (*)(z_stream*)> closer(&stream, inflateEnd);

    constexpr std::size_t kChunk = std::size_t{1} << 16;
    std::vector<char> input(kChunk);
    std::vector<char> chunk(kChunk);
    std::uint64_t readTotal = 0; // bytes read from the file
    // The compressed byte that inflate is at (for messages).
    const auto offset = [&] { return readTotal - stream.avail_in; };
    const auto where = [&] { return "byte " + std::to_string(offset()); };
    // Keeps the unread input at the front of the buffer and reads more after it; false at the end.
    const auto refill = [&]() -> bool {
        if (stream.avail_in > 0)
            std::memmove(input.data(), stream.next_in, stream.avail_in);
        in.read(input.data() + stream.avail_in, static_cast<std::streamsize>(input.size() - stream.avail_in));
        const auto got = static_cast<std::size_t>(in.gcount());
        if (in.bad())
            throw InputError(fileName, where(), "cannot read the file");
        readTotal += got;
        stream.next_in = reinterpret_cast<Bytef*>(input.data());
        stream.avail_in += static_cast<uInt>(got);
        return got > 0;
    };

    std::string out;
    int members = 0;
    for (;;) {
        // One member: its header, deflate data and trailer.
        bool wantsInput = true; // false while inflate has output left to give (it filled the chunk)
        for (;;) {
            if (stream.avail_in == 0 && wantsInput && !refill())
                throw InputError(
                    fileName, where(),
                    "the gzip data ends early: the file is truncated" +
                        (members > 0 ? " (in member " + std::to_string(members + 1) + ")" : std::string()));
            stream.next_out = reinterpret_cast<Bytef*>(chunk.data());
            stream.avail_out = static_cast<uInt>(chunk.size());
            const int rc = inflate(&stream, Z_NO_FLUSH);
            const std::size_t produced = chunk.size() - stream.avail_out;
            if (out.size() + produced > limit) {
                if (maxBytes != std::string::npos) {
                    out.append(chunk.data(), static_cast<std::size_t>(limit - out.size()));
                    return out; // as much as was asked for
                }
                throw InputError(fileName, "",
                                 "inflates to more than " + sizeText(limit) +
                                     ", the limit for gzip-compressed files (a larger one needs " + kLimitVariable +
                                     ", e.g. " + kLimitVariable + "=4G)");
            }
            out.append(chunk.data(), produced);
            if (rc == Z_STREAM_END)
                break;
            if (rc == Z_BUF_ERROR || rc == Z_OK) {
                wantsInput = stream.avail_out != 0;
                continue;
            }
            throw InputError(fileName, where(),
                             rc == Z_MEM_ERROR ? std::string("out of memory while decompressing")
                                               : "the gzip data is damaged (" +
                                                     std::string(stream.msg ? stream.msg : "zlib error") + ")");
        }
        ++members;
        // What follows a member: another member (gzip -d reads them all, as concatenated .gz
        // files are), zero padding (which gzip ignores too), or the end.
        while (stream.avail_in < 2 && refill()) {
        }
        if (stream.avail_in == 0)
            return out;
        const auto* next = reinterpret_cast<const unsigned char*>(stream.next_in);
        if (stream.avail_in >= 2 && next[0] == 0x1f && next[1] == 0x8b) {
            inflateReset(&stream);
            continue;
        }
        for (;;) {
            while (stream.avail_in > 0 && *stream.next_in == 0) {
                ++stream.next_in;
                --stream.avail_in;
            }
            if (stream.avail_in > 0)
                throw InputError(fileName, where(),
                                 "data that is not gzip after the end of the gzip data (" + std::to_string(members) +
                                     (members == 1 ? " member" : " members") + "): the file is damaged");
            if (!refill())
                return out;
        }
    }
}

} // namespace

std::uint64_t gzipLimit() {
    const char* value = std::getenv(kLimitVariable);
    if (!value || !*value)
        return kDefaultGzipLimit;
    const std::string_view text(value);
    std::uint64_t number = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
    std::string_view suffix(end, static_cast<std::size_t>(text.data() + text.size() - end));
    if (!suffix.empty() && (suffix.back() == 'B' || suffix.back() == 'b'))
        suffix.remove_suffix(1); // 4G, 4GB, 4GiB
    if (suffix.size() == 2 && (suffix[1] == 'i' || suffix[1] == 'I'))
        suffix.remove_suffix(1);
    int shift = -1;
    if (suffix.empty())
        shift = 0;
    else if (suffix.size() == 1)
        switch (std::toupper(static_cast<unsigned char>(suffix[0]))) {
        case 'K':
            shift = 10;
            break;
        case 'M':
            shift = 20;
            break;
        case 'G':
            shift = 30;
            break;
        case 'T':
            shift = 40;
            break;
        default:
            break;
        }
    if (ec != std::errc() || end == text.data() || shift < 0 || number == 0 || number > (UINT64_MAX >> shift))
        throw InputError("", kLimitVariable,
                         "expected a size such as 4G, 512M or 1000000 (bytes; K, M, G and T are powers of 1024), "
                         "got '" +
                             std::string(text) + "'");
    return number << shift;
}

nlohmann::ordered_json tryParseJson(const std::string& text) {
    Json result;
    GuardedDom dom(result);
    Json::sax_parse(text, &dom);
    if (dom.tooDeep() || dom.failed())
        return Json(Json::value_t::discarded);
    return result;
}

nlohmann::ordered_json parseJson(const std::string& text, const std::string& fileName) {
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos)
        throw InputError(fileName, "", text.empty() ? "the file is empty" : "the file holds only white space");
    Json result;
    GuardedDom dom(result);
    Json::sax_parse(text, &dom);
    if (dom.tooDeep()) {
        const std::size_t at = firstTooDeep(text, kMaxJsonDepth);
        throw InputError(fileName, at == std::string::npos ? "" : lineColumnAt(text, at),
                         "nested more than " + std::to_string(kMaxJsonDepth) +
                             " levels deep (arrays and objects); no recording nests so deep");
    }
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

std::string readText(const std::filesystem::path& path, std::size_t maxBytes) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        throw InputError(path.string(), "", "no such file");
    if (std::filesystem::is_directory(path, ec))
        throw InputError(path.string(), "", "is a folder, not a file");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError(path.string(), "", "cannot read the file");
    char magic[2] = {};
    in.read(magic, 2);
    const bool gzip = in.gcount() == 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
                      static_cast<unsigned char>(magic[1]) == 0x8b;
    in.clear();
    in.seekg(0);
    if (gzip)
        return gunzip(in, path.string(), maxBytes);
    std::string bytes;
    if (maxBytes == std::string::npos) {
        std::ostringstream text;
        text << in.rdbuf();
        bytes = text.str();
    } else {
        bytes.resize(maxBytes);
        in.read(bytes.data(), static_cast<std::streamsize>(maxBytes));
        bytes.resize(static_cast<std::size_t>(in.gcount()));
    }
    if (in.bad())
        throw InputError(path.string(), "", "cannot read the file");
    return bytes;
}

nlohmann::ordered_json number(double v) {
    return std::isfinite(v) ? Json(v) : Json(nullptr);
}

} // namespace tilescope::exchange
