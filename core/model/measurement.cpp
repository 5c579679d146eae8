#include "model/measurement.h"

#include <array>

namespace tilescope {

namespace {
// Indexed by the enum; the names are stable: the store, T4's extension object, CSV and JSON use them.
constexpr std::array<std::string_view, kStatusCount> kStatusNames = {
    "ok",      "compile_error", "launch_error", "wrong_result", "crashed",
    "timeout", "pruned",        "skipped",      "implausible",  "analysed",
};
} // namespace

std::string_view statusName(ResultStatus status) {
    const auto i = static_cast<std::size_t>(status);
    return i < kStatusNames.size() ? kStatusNames[i] : std::string_view("unknown");
}

std::optional<ResultStatus> parseStatus(std::string_view name) {
    for (std::size_t i = 0; i < kStatusNames.size(); ++i)
        if (kStatusNames[i] == name)
            return static_cast<ResultStatus>(i);
    return std::nullopt;
}

std::string cleanMessage(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == 0)
            continue;
        if (c == '\r') {
            out += '\n';
            if (i + 1 < text.size() && text[i + 1] == '\n')
                ++i;
        } else if (c == '\n' || c == '\t' || (c >= 0x20 && c != 0x7f)) {
            out += static_cast<char>(c);
        } else {
            out += ' ';
        }
    }
    const auto space = [](char c) { return c == ' ' || c == '\n' || c == '\t'; };
    std::size_t begin = 0;
    while (begin < out.size() && space(out[begin]))
        ++begin;
    std::size_t end = out.size();
    while (end > begin && space(out[end - 1]))
        --end;
    return out.substr(begin, end - begin);
}

} // namespace tilescope
