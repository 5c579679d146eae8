#include "base/pythonfiles.h"

#include <cstdlib>
#include <system_error>
#include <vector>

namespace tilescope {

namespace fs = std::filesystem;

std::filesystem::path workerProgram() {
    if (const char* env = std::getenv("TILESCOPE_WORKER"); env && *env)
        return env;
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    return (ec ? fs::path(".") : self.parent_path()) / "tilescope-worker";
}

std::filesystem::path findPythonFile(const fs::path& relative, std::string* searched) {
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    std::vector<fs::path> places;
    if (!ec) {
        places.push_back(self.parent_path() / "python");
        places.push_back(self.parent_path().parent_path() / "share" / "tilescope" / "python");
    }
    places.push_back(fs::path(TILESCOPE_SOURCE_DIR) / "core" / "compile" / "python");
    places.push_back(fs::path(TILESCOPE_SOURCE_DIR) / "app" / "cli" / "kt");
    std::string looked;
    for (const fs::path& place : places) {
        std::error_code missing;
        if (fs::is_regular_file(place / relative, missing))
            return place / relative;
        looked += (looked.empty() ? "" : ", ") + place.string();
    }
    if (searched)
        *searched = looked;
    return {};
}

std::string tilescopePython() {
    if (const char* python = std::getenv("TILESCOPE_PYTHON"); python && *python)
        return python;
    return "python3";
}

} // namespace tilescope
