#include "model/measurement.h"

#include <array>

namespace tilescope {

namespace {
// Indexed by the enum; the names are stable: the store, T4's extension object, CSV and JSON use them.
constexpr std::array<std::string_view, kStatusCount> kStatusNames = {
    "ok", "compile_error", "launch_error", "wrong_result", "crashed", "timeout", "pruned", "skipped",
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

} // namespace tilescope
