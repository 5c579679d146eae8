#include "tuner/backendspec.h"

#include "base/error.h"

#include <algorithm>
#include <charconv>

namespace tilescope {

namespace {

std::string trimmed(std::string_view text) {
    const auto first = text.find_first_not_of(" \t");
    if (first == std::string_view::npos)
        return {};
    const auto last = text.find_last_not_of(" \t");
    return std::string(text.substr(first, last - first + 1));
}

bool startsWith(std::string_view text, std::string_view prefix) {
    return text.substr(0, prefix.size()) == prefix;
}

} // namespace

std::vector<int> parseDeviceList(std::string_view text, const std::string& field) {
    std::vector<int> devices;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = text.find(',', start);
        const std::string piece =
            trimmed(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
        if (!piece.empty()) {
            int value = -1;
            const auto [ptr, ec] = std::from_chars(piece.data(), piece.data() + piece.size(), value);
            if (ec != std::errc{} || ptr != piece.data() + piece.size() || value < 0)
                throw InputError("", field, "'" + piece + "' is not a device number (expected e.g. 0 or 0,1,2)");
            if (std::find(devices.begin(), devices.end(), value) != devices.end())
                throw InputError("", field, "device " + piece + " is listed twice");
            devices.push_back(value);
        }
        if (comma == std::string_view::npos)
            break;
        start = comma + 1;
    }
    if (devices.empty())
        throw InputError("", field, "no device given (expected e.g. 0 or 0,1,2)");
    return devices;
}

BackendSpec parseBackendSpec(std::string_view text, const std::string& field) {
    BackendSpec spec;
    if (startsWith(text, "replay:")) {
        spec.kind = BackendSpec::Kind::Replay;
        spec.recording = std::string(text.substr(7));
        if (spec.recording.empty())
            throw InputError("", field, "replay needs a recording: replay:FILE");
    } else if (text == "cuda") {
        spec.kind = BackendSpec::Kind::Cuda;
        spec.devices = {0};
    } else if (startsWith(text, "cuda:")) {
        spec.kind = BackendSpec::Kind::Cuda;
        spec.devices = parseDeviceList(text.substr(5), field);
    } else if (startsWith(text, "analysis:")) {
        spec.kind = BackendSpec::Kind::Analysis;
        spec.arch = trimmed(text.substr(9));
        if (spec.arch.empty())
            throw InputError("", field, "analysis needs an arch: analysis:sm_90");
    } else {
        throw InputError("", field,
                         "unknown backend '" + std::string(text) +
                             "' (known: cuda, cuda:DEVICES, replay:FILE, analysis:ARCH)");
    }
    return spec;
}

std::string BackendSpec::label() const {
    switch (kind) {
    case Kind::Replay: {
        std::error_code ec;
        const std::filesystem::path canonical = std::filesystem::weakly_canonical(recording, ec);
        return "replay:" + (ec ? recording.string() : canonical.string());
    }
    case Kind::Cuda: {
        std::string text = "cuda:";
        for (std::size_t i = 0; i < devices.size(); ++i)
            text += (i ? "," : "") + std::to_string(devices[i]);
        return text;
    }
    case Kind::Analysis:
        return "analysis:" + arch;
    }
    return {};
}

} // namespace tilescope
