// Recordings come from other tools and other machines, compressed or not: nothing in them may
// crash the reader or exhaust its memory.

#include "exchange/textfile.h"

#include "base/error.h"
#include "base/textformat.h"

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
#include <vector>

namespace tilescope::exchange {

namespace {

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
                                 "inflates to more than " + formatBytes(limit) +
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

} // namespace tilescope::exchange
